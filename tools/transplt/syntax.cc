#include "syntax.h"

#include <cstdlib>
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

TSSymbol Symbol(std::string_view name) {
  TSSymbol s = ts_language_symbol_for_name(tree_sitter_python(), name.data(), static_cast<uint32_t>(name.size()), true);
  if (s == 0) std::abort();  // a kind the grammar lacks: a programming error caught by every test run
  return s;
}

TSFieldId FieldId(std::string_view name) {
  TSFieldId f = ts_language_field_id_for_name(tree_sitter_python(), name.data(), static_cast<uint32_t>(name.size()));
  if (f == 0) std::abort();
  return f;
}

}  // namespace

namespace sym {
const TSSymbol aliased_import = Symbol("aliased_import");
const TSSymbol argument_list = Symbol("argument_list");
const TSSymbol as_pattern_target = Symbol("as_pattern_target");
const TSSymbol assignment = Symbol("assignment");
const TSSymbol attribute = Symbol("attribute");
const TSSymbol augmented_assignment = Symbol("augmented_assignment");
const TSSymbol block = Symbol("block");
const TSSymbol call = Symbol("call");
const TSSymbol class_definition = Symbol("class_definition");
const TSSymbol comment = Symbol("comment");
const TSSymbol concatenated_string = Symbol("concatenated_string");
const TSSymbol conditional_expression = Symbol("conditional_expression");
const TSSymbol default_parameter = Symbol("default_parameter");
const TSSymbol dictionary_splat = Symbol("dictionary_splat");
const TSSymbol expression_statement = Symbol("expression_statement");
const TSSymbol for_in_clause = Symbol("for_in_clause");
const TSSymbol for_statement = Symbol("for_statement");
const TSSymbol function_definition = Symbol("function_definition");
const TSSymbol future_import_statement = Symbol("future_import_statement");
const TSSymbol global_statement = Symbol("global_statement");
const TSSymbol identifier = Symbol("identifier");
const TSSymbol import_from_statement = Symbol("import_from_statement");
const TSSymbol import_statement = Symbol("import_statement");
const TSSymbol integer = Symbol("integer");
const TSSymbol interpolation = Symbol("interpolation");
const TSSymbol keyword_argument = Symbol("keyword_argument");
const TSSymbol lambda_parameters = Symbol("lambda_parameters");
const TSSymbol module = Symbol("module");
const TSSymbol named_expression = Symbol("named_expression");
const TSSymbol nonlocal_statement = Symbol("nonlocal_statement");
const TSSymbol parameters = Symbol("parameters");
const TSSymbol relative_import = Symbol("relative_import");
const TSSymbol string = Symbol("string");
const TSSymbol subscript = Symbol("subscript");
const TSSymbol typed_default_parameter = Symbol("typed_default_parameter");
const TSSymbol typed_parameter = Symbol("typed_parameter");
const TSSymbol wildcard_import = Symbol("wildcard_import");
}  // namespace sym
namespace fld {
const TSFieldId alias = FieldId("alias");
const TSFieldId arguments = FieldId("arguments");
const TSFieldId attribute = FieldId("attribute");
const TSFieldId body = FieldId("body");
const TSFieldId function = FieldId("function");
const TSFieldId left = FieldId("left");
const TSFieldId module_name = FieldId("module_name");
const TSFieldId name = FieldId("name");
const TSFieldId object = FieldId("object");
const TSFieldId right = FieldId("right");
const TSFieldId value = FieldId("value");
}  // namespace fld

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

std::vector<NodeRow> NamedPreorder(TSNode root) {
  std::vector<NodeRow> rows;
  rows.reserve((End(root) - Start(root)) / 3);  // Python runs at about one named node per 4 bytes
  std::vector<uint32_t> path;   // per cursor depth: the node's row, or kNoRow for an anonymous node
  std::vector<uint32_t> named;  // rows of the named nodes on the path
  TSTreeCursor cur = ts_tree_cursor_new(root);
  auto enter = [&] {
    TSNode n = ts_tree_cursor_current_node(&cur);
    if (!ts_node_is_named(n)) return path.push_back(kNoRow);
    auto row = static_cast<uint32_t>(rows.size());
    rows.push_back({n, ts_node_symbol(n), named.empty() ? kNoRow : named.back(), 0});
    path.push_back(row);
    named.push_back(row);
  };
  auto leave = [&] {
    if (uint32_t row = path.back(); row != kNoRow) {
      rows[row].end = static_cast<uint32_t>(rows.size());
      named.pop_back();
    }
    path.pop_back();
  };
  enter();
  for (bool done = false; !done;) {
    if (ts_tree_cursor_goto_first_child(&cur)) {
      enter();
      continue;
    }
    for (;;) {
      leave();
      if (ts_tree_cursor_goto_next_sibling(&cur)) {
        enter();
        break;
      }
      if (!ts_tree_cursor_goto_parent(&cur)) {
        done = true;
        break;
      }
    }
  }
  ts_tree_cursor_delete(&cur);
  return rows;
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
