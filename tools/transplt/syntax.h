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

// The grammar's node kinds and field names that rules look at, resolved once from the grammar so rule code
// compares integers instead of strings (a hot path: every node of every file is classified).
namespace sym {
extern const TSSymbol
    aliased_import, argument_list, as_pattern_target, assignment, attribute, augmented_assignment, block, call,
    class_definition, comment, concatenated_string, conditional_expression, default_parameter, dictionary_splat, expression_statement,
    for_in_clause, for_statement, function_definition, future_import_statement, global_statement, identifier,
    import_from_statement, import_statement, interpolation, keyword_argument, lambda_parameters, module,
    integer, named_expression, nonlocal_statement, parameters, relative_import, string, subscript, typed_default_parameter,
    typed_parameter, wildcard_import;
}  // namespace sym
namespace fld {
extern const TSFieldId
    alias, arguments, attribute, body, function, left, module_name, name, object, right, value;
}  // namespace fld

// Small conveniences so rule code reads like the grammar.
inline std::string_view Type(TSNode n) { return ts_node_type(n); }
inline bool Is(TSNode n, TSSymbol kind) { return !ts_node_is_null(n) && ts_node_symbol(n) == kind; }
inline uint32_t Start(TSNode n) { return ts_node_start_byte(n); }
inline uint32_t End(TSNode n) { return ts_node_end_byte(n); }
inline std::string_view Text(TSNode n, std::string_view src) { return src.substr(Start(n), End(n) - Start(n)); }
inline TSNode Field(TSNode n, TSFieldId field) { return ts_node_child_by_field_id(n, field); }
inline TSNode Parent(TSNode n) { return ts_node_parent(n); }
inline bool Same(TSNode a, TSNode b) { return ts_node_eq(a, b); }
// The named nodes under (and including) `root` in pre-order, each with its nearest named ancestor's row and
// the row just past its subtree. Built in one cursor walk, so passes loop over an array instead of asking
// tree-sitter for children node by node (which rescans siblings) or parents (which rescans from the root).
inline constexpr uint32_t kNoRow = UINT32_MAX;
struct NodeRow {
  TSNode node;
  TSSymbol kind;
  uint32_t parent;  // kNoRow for the root
  uint32_t end;     // first row after this node's subtree
};
std::vector<NodeRow> NamedPreorder(TSNode root);

// The named children of n, in order, into out (cleared first). Linear, unlike ts_node_named_child(n, i),
// which rescans from the first child on every call.
void NamedChildren(TSNode n, std::vector<TSNode>& out);

}  // namespace transplt
