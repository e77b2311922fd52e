// JSON from files users hand the tools (acl.json, fusion switches, rule files, single-op lists, bank lines).
// nlohmann's parser is iterative, but printing and destroying a value recurse: a 100k-deep document would
// overflow the stack. ParseJson refuses nesting deeper than kMaxJsonDepth before nlohmann sees the text.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace npu {

constexpr int kMaxJsonDepth = 256;

// The parsed value, or a discarded one (is_discarded()) with the reason in *why: a syntax error with its
// position, or the nesting depth.
nlohmann::json ParseJson(std::string_view text, std::string* why = nullptr);

}  // namespace npu
