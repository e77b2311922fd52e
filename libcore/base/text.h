// Small string helpers the command-line parsers share.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace npu {

// "a,,b" -> {"a", "", "b"}: every field, empty ones included (callers decide what an empty field means).
std::vector<std::string> SplitFields(std::string_view s, char sep);

}  // namespace npu
