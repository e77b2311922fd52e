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

// The text of `j` (nlohmann::json or ordered_json) for a file or a terminal. Strings from models and files
// are arbitrary bytes (a mutated model's op names): bytes that are not UTF-8 become U+FFFD instead of
// throwing. Every JSON writer goes through here.
template <class Json>
std::string DumpJson(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace npu
