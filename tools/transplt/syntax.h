// Thin RAII layer over the tree-sitter C API for Python sources: parse, walk, slice text.
#pragma once
#include <tree_sitter/api.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace transplt {

struct TreeDeleter {
  void operator()(TSTree* t) const { ts_tree_delete(t); }
};
using Tree = std::unique_ptr<TSTree, TreeDeleter>;

// Parses UTF-8 Python. One parser per thread (tree-sitter parsers are not thread-safe).
// With `old` (an edited copy of an earlier tree, see ts_tree_edit) only the edited regions are reparsed.
Tree ParsePython(std::string_view utf8, const TSTree* old = nullptr);

// Where the first syntax error is (1-based line and column, in bytes), if any.
struct SyntaxError {
  uint32_t line = 0, column = 0;
};
std::optional<SyntaxError> FirstSyntaxError(TSNode root);

// Small conveniences so rule code reads like the grammar.
inline std::string_view Type(TSNode n) { return ts_node_type(n); }
inline bool Is(TSNode n, std::string_view type) { return !ts_node_is_null(n) && Type(n) == type; }
inline uint32_t Start(TSNode n) { return ts_node_start_byte(n); }
inline uint32_t End(TSNode n) { return ts_node_end_byte(n); }
inline std::string_view Text(TSNode n, std::string_view src) { return src.substr(Start(n), End(n) - Start(n)); }
inline TSNode Field(TSNode n, std::string_view name) {
  return ts_node_child_by_field_name(n, name.data(), static_cast<uint32_t>(name.size()));
}
inline TSNode Parent(TSNode n) { return ts_node_parent(n); }
inline bool Same(TSNode a, TSNode b) { return ts_node_eq(a, b); }
// The named children of n, in order, into out (cleared first). Linear, unlike ts_node_named_child(n, i),
// which rescans from the first child on every call.
void NamedChildren(TSNode n, std::vector<TSNode>& out);

}  // namespace transplt
