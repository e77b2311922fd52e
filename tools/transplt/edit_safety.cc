#include "edit_safety.h"

#include <algorithm>
#include <iterator>

namespace transplt {
namespace {

bool IsWordChar(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

// Hard and soft keywords, plus the names tree-sitter-python treats as statements (Python 2 print/exec).
bool IsKeyword(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "False", "None",     "True",   "and",    "as",   "assert", "async", "await",  "break",  "case",   "class",
      "continue", "def",   "del",    "elif",   "else", "except", "exec",  "finally", "for",   "from",   "global",
      "if",    "import",   "in",     "is",     "lambda", "match", "nonlocal", "not",  "or",     "pass",   "print",
      "raise", "return",   "try",    "type",   "while", "with",  "yield", "_"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

// a, a.b, a.b.c: identifiers (ASCII) joined by single dots, none a keyword.
bool IsDottedName(std::string_view s) {
  if (s.empty()) return false;
  for (size_t start = 0;;) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty() || (part[0] >= '0' && part[0] <= '9') || IsKeyword(part)) return false;
    if (!std::all_of(part.begin(), part.end(), IsWordChar)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool NameSwap(const Edit& e, std::string_view text) {
  if (e.end <= e.start || e.end > text.size()) return false;
  // Gluing onto a neighbouring token, or following a backslash inside a string (\N, \u, \x escapes), could
  // change the syntax.
  if (e.start > 0 && (IsWordChar(text[e.start - 1]) || text[e.start - 1] == '\\')) return false;
  if (e.end < text.size() && IsWordChar(text[e.end])) return false;
  return IsDottedName(text.substr(e.start, e.end - e.start)) && IsDottedName(e.text);
}

bool IsStatementHolder(TSNode n) { return Is(n, sym::module) || Is(n, sym::block); }

bool ImportLineBeforeStatement(const Edit& e, std::string_view text, TSNode root) {
  if (e.start != e.end || e.start > text.size() || (e.start > 0 && text[e.start - 1] != '\n')) return false;
  std::string_view before = text.substr(0, e.start > 0 ? e.start - 1 : 0);
  if (before.ends_with('\r')) before.remove_suffix(1);
  if (before.ends_with('\\')) return false;  // the line before continues onto this one
  std::string_view t = e.text;
  size_t indent = t.find_first_not_of(" \t");
  if (indent == std::string_view::npos) return false;
  std::string_view eol = t.ends_with("\r\n") ? "\r\n" : t.ends_with("\n") ? "\n" : "";
  std::string_view stmt = t.substr(indent, t.size() - indent - eol.size());
  if (eol.empty() || !stmt.starts_with("import ") || !IsDottedName(stmt.substr(7))) return false;
  // The next line that holds code (blank and comment lines between are fine: an import after a block of
  // imports) starts with this indentation, and the statement there sits directly in a module or block.
  size_t line = e.start;
  for (;;) {
    size_t code = text.find_first_not_of(" \t\r\f", line);
    if (code == std::string_view::npos) return indent == 0;  // the end of the file, at module level
    if (text[code] == '\n' || text[code] == '#') {
      size_t nl = text.find('\n', code);
      if (nl == std::string_view::npos) return indent == 0;
      line = nl + 1;
      continue;
    }
    if (code - line != indent || text.substr(line, indent) != t.substr(0, indent)) return false;
    break;
  }
  uint32_t at = static_cast<uint32_t>(line + indent);
  TSNode n = ts_node_descendant_for_byte_range(root, at, at);
  while (!ts_node_is_null(n) && Start(n) == at && !IsStatementHolder(Parent(n))) n = Parent(n);
  return !ts_node_is_null(n) && Start(n) == at && ts_node_is_named(n) && !Is(n, sym::comment);
}

}  // namespace

bool KeepsSyntax(const Edit& e, std::string_view text, TSNode root) {
  return NameSwap(e, text) || ImportLineBeforeStatement(e, text, root);
}

}  // namespace transplt
