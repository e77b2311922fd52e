// Small string helpers the command-line parsers share.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace npu {

// "a,,b" -> {"a", "", "b"}: every field, empty ones included (callers decide what an empty field means).
std::vector<std::string> SplitFields(std::string_view s, char sep);

// Whether `s` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
bool IsUtf8(std::string_view s);
// `s` with every byte that is not part of well-formed UTF-8 written as \xNN, for messages.
std::string EscapeNonUtf8(std::string_view s);

}  // namespace npu
