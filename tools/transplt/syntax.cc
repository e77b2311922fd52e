#include "syntax.h"

#include <vector>

extern "C" const TSLanguage* tree_sitter_python();

namespace transplt {
namespace {

struct ParserDeleter {
  void operator()(TSParser* p) const { ts_parser_delete(p); }
};

TSParser* ThreadParser() {
  thread_local std::unique_ptr<TSParser, ParserDeleter> parser = [] {
    std::unique_ptr<TSParser, ParserDeleter> p(ts_parser_new());
    ts_parser_set_language(p.get(), tree_sitter_python());
    return p;
  }();
  return parser.get();
}

}  // namespace

Tree ParsePython(std::string_view utf8, const TSTree* old) {
  return Tree(ts_parser_parse_string_encoding(ThreadParser(), old, utf8.data(),
                                              static_cast<uint32_t>(utf8.size()), TSInputEncodingUTF8));
}

void NamedChildren(TSNode n, std::vector<TSNode>& out) {
  struct Cursor {
    TSTreeCursor c = ts_tree_cursor_new(TSNode{});
    ~Cursor() { ts_tree_cursor_delete(&c); }
  };
  thread_local Cursor cur;
  out.clear();
  ts_tree_cursor_reset(&cur.c, n);
  if (!ts_tree_cursor_goto_first_child(&cur.c)) return;
  do {
    TSNode x = ts_tree_cursor_current_node(&cur.c);
    if (ts_node_is_named(x)) out.push_back(x);
  } while (ts_tree_cursor_goto_next_sibling(&cur.c));
}

std::optional<SyntaxError> FirstSyntaxError(TSNode root) {
  if (!ts_node_has_error(root)) return std::nullopt;
  // Descend through the first child that carries the error until the ERROR or MISSING node itself.
  TSNode n = root;
  for (;;) {
    if (Type(n) == "ERROR" || ts_node_is_missing(n)) break;
    bool descended = false;
    for (uint32_t i = 0, c = ts_node_child_count(n); i < c; ++i) {
      TSNode ch = ts_node_child(n, i);
      if (ts_node_has_error(ch)) {
        n = ch;
        descended = true;
        break;
      }
    }
    if (!descended) break;
  }
  TSPoint p = ts_node_start_point(n);
  return SyntaxError{p.row + 1, p.column + 1};
}

}  // namespace transplt
