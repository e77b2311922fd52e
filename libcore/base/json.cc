#include "base/json.h"

namespace npu {
namespace {

// Deepest [ / { nesting outside strings, stopping once past `limit`.
int NestingDepth(std::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// nlohmann's message without its "[json.exception.parse_error.101] " tag, printable ASCII only (it quotes
// the bytes it last read, which may be binary) and short enough for one error line.
std::string Printable(std::string_view what) {
  constexpr size_t kMaxChars = 160;
  if (auto tag = what.find("] "); what.starts_with("[json.exception") && tag != std::string_view::npos) what.remove_prefix(tag + 2);
  std::string out;
  for (char c : what.substr(0, kMaxChars)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
  return out;
}

}  // namespace

nlohmann::json ParseJson(std::string_view text, std::string* why) {
  if (int depth = NestingDepth(text, kMaxJsonDepth); depth > kMaxJsonDepth) {
    if (why) *why = "nests deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers like 1e999
    if (why) *why = Printable(e.what());
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

}  // namespace npu
