// Source bytes <-> the UTF-8 text tree-sitter parses. Honours a UTF-8 BOM and a PEP 263 coding cookie
// so that migrated files keep their exact encoding, and refuses bytes that would not round-trip.
#pragma once
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace transplt {

struct SourceText {
  std::string utf8;               // the text after the BOM, in UTF-8; edits are byte ranges into this
  std::string encoding = "utf-8"; // the codec the file declares (cookie) or utf-8
  bool bom = false;
};

// Why a file cannot be migrated (it is copied unchanged and listed as skipped).
struct DecodeProblem {
  std::string reason;
};

std::variant<SourceText, DecodeProblem> DecodeSource(std::string_view raw);
// Re-encodes migrated UTF-8 text with the file's own BOM and codec.
std::variant<std::string, DecodeProblem> EncodeSource(const SourceText& src, std::string_view utf8);

// Position helpers for reports (1-based line numbers).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  uint32_t LineOf(size_t offset) const;
  size_t LineStart(uint32_t line) const { return starts_[line - 1]; }
  uint32_t LineCount() const { return static_cast<uint32_t>(starts_.size()); }

 private:
  std::vector<size_t> starts_;
};

}  // namespace transplt
