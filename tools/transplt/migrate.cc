// Rename, string and import rules, and the two passes that drive every rule over one file.
#include <algorithm>

#include "migrator.h"

namespace transplt {
namespace {

std::string DottedText(TSNode dotted, std::string_view src) {  // "torch . cuda" -> "torch.cuda"
  std::string out;
  for (uint32_t i = 0, n = ts_node_named_child_count(dotted); i < n; ++i) {
    if (i) out += '.';
    out += Text(ts_node_named_child(dotted, i), src);
  }
  return out;
}

std::string_view Root(std::string_view dotted) { return dotted.substr(0, dotted.find('.')); }

std::vector<std::string> Split(std::string_view dotted) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t dot = dotted.find('.', start);
    parts.emplace_back(dotted.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Children of an import statement that carry the "name" field (there can be several).
std::vector<TSNode> ImportNames(TSNode stmt) {
  // A cursor, because ts_node_field_name_for_child misreports repeated fields in tree-sitter 0.20.
  std::vector<TSNode> out;
  TSTreeCursor cur = ts_tree_cursor_new(stmt);
  for (bool more = ts_tree_cursor_goto_first_child(&cur); more; more = ts_tree_cursor_goto_next_sibling(&cur)) {
    if (ts_tree_cursor_current_field_id(&cur) == fld::name) out.push_back(ts_tree_cursor_current_node(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return out;
}

bool HasChild(TSNode n, TSSymbol kind) {
  for (uint32_t i = 0, c = ts_node_named_child_count(n); i < c; ++i)
    if (Is(ts_node_named_child(n, i), kind)) return true;
  return false;
}



std::string ApiMessage(const ApiRule& r) {
  if (r.replaced_by_similar)
    return "replace unsupported API " + r.old_name + " with the similar API " + r.new_name +
           " (accuracy or performance may differ)";
  return "change " + r.kind + " " + r.old_name + " to " + r.new_name;
}

}  // namespace

std::string_view OpTypeName(OpType op) {
  switch (op) {
    case OpType::kInsert: return "INSERT";
    case OpType::kModify: return "MODIFY";
    case OpType::kDelete: return "DELETE";
  }
  return "MODIFY";
}

Migrator::Migrator(std::string_view src, TSNode root, const RuleSet& rules, const MigrateOptions& opts)
    : src_(src), root_(root), rules_(rules), opts_(opts) {
  if (size_t nl = src.find('\n'); nl != std::string_view::npos && nl > 0 && src[nl - 1] == '\r') eol_ = "\r\n";
}

Migration Migrator::Run() {
  rows_ = NamedPreorder(root_);
  CollectBindings();
  Walk();
  InsertTorchNpuImport();
  if (device_mode()) InsertDeviceIdBlock();
  if (opts_.distributed) {
    RewriteDataLoaders();
    if (opts_.main_file) RewriteModelForDdp();
  }
  auto& e = out_.edits;
  std::stable_sort(e.begin(), e.end(), [](const Edit& a, const Edit& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  std::vector<Edit> kept;
  for (Edit& x : e) {
    if (!kept.empty()) {
      const Edit& p = kept.back();
      if (x.start == p.start && x.end == p.end && x.text == p.text) continue;  // two rules agreeing
      if (x.start < p.end) {
        out_.notes.push_back("rules " + p.rule + " and " + x.rule + " both edit byte " + std::to_string(x.start) +
                             "; kept " + p.rule + ", review this line by hand");
        continue;
      }
    }
    kept.push_back(std::move(x));
  }
  e = std::move(kept);
  std::stable_sort(out_.findings.begin(), out_.findings.end(),
                   [](const Finding& a, const Finding& b) { return a.offset < b.offset; });
  std::stable_sort(out_.notices.begin(), out_.notices.end(), [](const Notice& a, const Notice& b) { return a.offset < b.offset; });
  out_.imports_torch = FileImportsTorch();
  return std::move(out_);
}

// ---- bindings --------------------------------------------------------------------------------------

void Migrator::ForEachNode(TSNode from, const std::function<bool(TSNode)>& visit) const {
  std::vector<TSNode> stack{from}, kids;
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    if (!visit(n)) continue;
    NamedChildren(n, kids);
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
}

void Migrator::CollectBindings() {
  std::vector<std::pair<std::string, TSNode>> aliases;
  for (uint32_t i = 0; i < rows_.size(); ++i) {
    TSNode n = rows_[i].node;
    TSSymbol t = rows_[i].kind;
    if (t == sym::import_statement || t == sym::import_from_statement) {
      BindImport(n, rows_[i].parent == kNoRow ? TSNode{} : rows_[rows_[i].parent].node);
      i = rows_[i].end - 1;  // nothing inside an import binds anything else
      continue;
    }
    if (t == sym::assignment) {
      TSNode left = Field(n, fld::left), right = Field(n, fld::right);
      if (Is(left, sym::identifier) && (Is(right, sym::attribute) || Is(right, sym::identifier)))
        aliases.emplace_back(std::string(Text(left)), right);
      else
        BindOther(left);
    } else if (t == sym::augmented_assignment || t == sym::for_statement || t == sym::for_in_clause) {
      BindOther(Field(n, fld::left));
    } else if (t == sym::function_definition || t == sym::class_definition) {
      other_.insert(std::string(Text(Field(n, fld::name))));
    } else if (t == sym::parameters || t == sym::lambda_parameters) {
      for (uint32_t i = 0, c = ts_node_named_child_count(n); i < c; ++i) {
        TSNode p = ts_node_named_child(n, i);
        TSNode name = Field(p, fld::name);
        BindOther(ts_node_is_null(name) ? (Is(p, sym::identifier) ? p : ts_node_named_child(p, 0)) : name);
      }
    } else if (t == sym::as_pattern_target) {
      BindOther(n);
    } else if (t == sym::named_expression) {
      BindOther(Field(n, fld::name));
    }
  }
  // Aliases of aliases resolve in later rounds; whatever never resolves is an ordinary variable.
  for (int round = 0; round < 3; ++round) {
    for (auto& [name, rhs] : aliases) {
      if (name.empty()) continue;
      Chain c = Flatten(rhs);
      std::string q = Qualified(c);
      if (q.empty()) continue;
      Binding& b = binds_[name];
      if (!b.qualified.empty() && b.qualified != q) b.conflicting = true;
      b.qualified = q;
      name.clear();
    }
  }
  for (auto& [name, rhs] : aliases)
    if (!name.empty()) other_.insert(name);
  for (auto& [name, b] : binds_)
    if (other_.count(name)) b.conflicting = true;
}

void Migrator::BindImport(TSNode stmt, TSNode parent) {
  const bool top = Is(parent, sym::module);
  auto bind = [&](std::string local, std::string qualified) {
    if (top) out_.top_imports.emplace_back(local, qualified);
    Binding& b = binds_[local];
    if (!b.qualified.empty() && b.qualified != qualified) b.conflicting = true;
    if (b.qualified.empty()) b.qualified = std::move(qualified);
    ++b.imports;
  };
  auto note_root = [&](std::string_view root) {
    if (root == "torch_npu") has_torch_npu_import_ = true;
    if (IsTorchRoot(root) && ts_node_is_null(first_torch_import_)) first_torch_import_ = stmt;
  };
  if (Is(parent, sym::module)) last_top_import_ = stmt;
  if (Is(stmt, sym::import_statement)) {
    for (TSNode name : ImportNames(stmt)) {
      if (Is(name, sym::aliased_import)) {
        std::string q = DottedText(Field(name, fld::name), src_);
        note_root(Root(q));
        bind(std::string(Text(Field(name, fld::alias))), q);
      } else {
        std::string q = DottedText(name, src_);
        note_root(Root(q));
        bind(std::string(Root(q)), std::string(Root(q)));
      }
    }
    return;
  }
  TSNode module = Field(stmt, fld::module_name);
  bool relative = Is(module, sym::relative_import);
  std::string m = relative ? "" : DottedText(module, src_);
  if (!relative) note_root(Root(m));
  if (HasChild(stmt, sym::wildcard_import)) {  // `from M import *`: M's module-level imports, when M is the project's
    std::string written = relative ? std::string(Text(module)) : m;
    if (Is(parent, sym::module)) out_.star_modules.push_back(written);
    if (auto it = opts_.star_imports.find(written); it != opts_.star_imports.end())
      for (const auto& [local, qualified] : it->second) {
        note_root(Root(qualified));
        bind(local, qualified);
      }
    return;
  }
  for (TSNode name : ImportNames(stmt)) {
    bool aliased = Is(name, sym::aliased_import);
    std::string imported = DottedText(aliased ? Field(name, fld::name) : name, src_);
    std::string local = aliased ? std::string(Text(Field(name, fld::alias))) : imported;
    if (relative) other_.insert(local);  // a project module: not something the rules know
    else bind(local, m + "." + imported);
  }
}

void Migrator::BindOther(TSNode target) {
  if (ts_node_is_null(target)) return;
  if (Is(target, sym::identifier)) {
    other_.insert(std::string(Text(target)));
    return;
  }
  if (Is(target, sym::attribute) || Is(target, sym::subscript)) return;  // binds no name
  for (uint32_t i = 0, n = ts_node_named_child_count(target); i < n; ++i) BindOther(ts_node_named_child(target, i));
}

const Binding* Migrator::Lookup(std::string_view name) const {
  auto it = binds_.find(std::string(name));
  return it == binds_.end() || it->second.conflicting ? nullptr : &it->second;
}

Chain Migrator::Flatten(TSNode n) const {
  Chain c;
  c.node = n;
  std::vector<TSNode> rev;
  while (Is(n, sym::attribute)) {
    rev.push_back(Field(n, fld::attribute));
    n = Field(n, fld::object);
  }
  c.base = n;
  c.pure = Is(n, sym::identifier);
  if (c.pure) c.names.push_back(n);
  c.names.insert(c.names.end(), rev.rbegin(), rev.rend());
  return c;
}

std::string Migrator::Qualified(const Chain& c) const {
  if (!c.pure) return {};
  const Binding* b = Lookup(Text(c.names[0]));
  if (!b) return {};
  std::string q = b->qualified;
  for (size_t i = 1; i < c.names.size(); ++i) (q += '.') += Text(c.names[i]);
  return q;
}

// ---- edits -----------------------------------------------------------------------------------------

void Migrator::AddEdit(uint32_t start, uint32_t end, std::string text, const std::string& rule, OpType op,
                       std::string message) {
  out_.edits.push_back(Edit{start, end, std::move(text), rule, op, std::move(message)});
}

void Migrator::AddFinding(TSNode at, const ApiRule& r, std::string_view api) {
  out_.findings.push_back(Finding{Start(at), r.id, std::string(api), r.reason, r.suggestion});
}

void Migrator::ReplaceComponents(const std::vector<TSNode>& old_names, const std::vector<std::string>& new_names,
                                 const std::string& rule, const std::string& message) {
  size_t n = old_names.size(), m = new_names.size(), p = 0, s = 0;
  while (p < n && p < m && Text(old_names[p]) == new_names[p]) ++p;
  if (p == n && p == m) return;
  while (s < n - p && s < m - p && Text(old_names[n - 1 - s]) == new_names[m - 1 - s]) ++s;
  if (p + s == n) {  // pure insertion of names: widen to a neighbour so the edit has a range
    if (p > 0) --p;
    else --s;
  }
  std::string text;
  for (size_t i = p; i < m - s; ++i) text += (i > p ? "." : "") + new_names[i];
  AddEdit(Start(old_names[p]), End(old_names[n - 1 - s]), text, rule, OpType::kModify, message);
}

std::vector<TSNode> Migrator::PositionalArgs(TSNode args) const {
  std::vector<TSNode> out;
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    if (Is(a, sym::keyword_argument) || Is(a, sym::dictionary_splat) || Is(a, sym::comment)) continue;
    out.push_back(a);
  }
  return out;
}

TSNode Migrator::KeywordArg(TSNode args, std::string_view name) const {
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    if (Is(a, sym::keyword_argument) && Text(Field(a, fld::name)) == name) return a;
  }
  return TSNode{};
}

void Migrator::DeleteArgument(TSNode args, TSNode arg, const std::string& rule, std::string message) {
  TSNode prev{}, next{};
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    if (Is(a, sym::comment)) continue;
    if (Same(a, arg)) {
      for (uint32_t j = i + 1; j < n && ts_node_is_null(next); ++j)
        if (!Is(ts_node_named_child(args, j), sym::comment)) next = ts_node_named_child(args, j);
      break;
    }
    prev = a;
  }
  uint32_t start = Start(arg), end = End(arg);
  if (!ts_node_is_null(next)) end = Start(next);       // "a, b" -> "b"
  else if (!ts_node_is_null(prev)) start = End(prev);  // "a, b" -> "a"
  AddEdit(start, end, "", rule, OpType::kDelete, std::move(message));
}

std::string Migrator::LineIndent(uint32_t offset) const {
  size_t ls = src_.rfind('\n', offset == 0 ? 0 : offset - 1);
  ls = (ls == std::string_view::npos || offset == 0) ? 0 : ls + 1;
  std::string_view before = src_.substr(ls, offset - ls);
  if (before.find_first_not_of(" \t\f") != std::string_view::npos) return "\x01";  // code precedes
  return std::string(before);
}

uint32_t Migrator::LineEndAfter(uint32_t offset) const {
  size_t nl = src_.find('\n', offset);
  return static_cast<uint32_t>(nl == std::string_view::npos ? src_.size() : nl + 1);
}

// ---- the rewriting pass ----------------------------------------------------------------------------

// Whether the identifier at `row` is a use of a name rather than a name being defined (a parameter, a keyword
// argument's name, an assignment target...). Those defining slots are the first named child of their parent.
bool Migrator::IsReference(uint32_t row, uint32_t parent) const {
  if (parent == kNoRow) return true;
  TSSymbol t = rows_[parent].kind;
  if (t == sym::keyword_argument || t == sym::function_definition || t == sym::class_definition || t == sym::assignment)
    return parent + 1 != row;
  return t != sym::parameters && t != sym::lambda_parameters && t != sym::default_parameter && t != sym::typed_parameter &&
         t != sym::typed_default_parameter && t != sym::global_statement && t != sym::nonlocal_statement;
}

// The chain of the attribute or identifier at `row`, read from the rows: an attribute's object is its first
// named child and its name the last (a comment can sit between them).
Chain Migrator::FlattenAt(uint32_t row) const {
  Chain c;
  c.node = rows_[row].node;
  std::vector<TSNode> rev;
  while (rows_[row].kind == sym::attribute && row + 1 < rows_[row].end) {
    uint32_t last = row + 1;
    for (uint32_t k = last; k < rows_[row].end; k = rows_[k].end)
      if (rows_[k].kind != sym::comment) last = k;
    rev.push_back(rows_[last].node);
    row = row + 1;
  }
  c.base = rows_[row].node;
  c.pure = rows_[row].kind == sym::identifier;
  if (c.pure) c.names.push_back(c.base);
  c.names.insert(c.names.end(), rev.rbegin(), rev.rend());
  return c;
}

// One pre-order pass over the rows; a node's handler decides which part of its subtree is visited next.
void Migrator::Walk() {
  std::vector<TSNode> skip;                              // call arguments a rule replaced whole
  std::vector<std::pair<uint32_t, uint32_t>> resume;     // (row, jump to): leave an attribute after its base
  uint32_t base_row = UINT32_MAX;                        // a chain's object, visited as if it had no parent
  for (uint32_t i = 0; i < rows_.size();) {
    while (!resume.empty() && resume.back().first == i) {
      i = resume.back().second;
      resume.pop_back();
    }
    if (i >= rows_.size()) break;
    const NodeRow& row = rows_[i];
    uint32_t p = i == base_row ? kNoRow : row.parent;
    TSNode n = row.node, parent = p == kNoRow ? TSNode{} : rows_[p].node;
    bool is_callee = p != kNoRow && rows_[p].kind == sym::call && p + 1 == i;  // a call's function comes first
    if (!skip.empty()) {
      auto hit = std::find_if(skip.begin(), skip.end(), [&](TSNode r) { return Same(r, n); });
      if (hit != skip.end()) {
        skip.erase(hit);
        i = row.end;
        continue;
      }
    }
    TSSymbol t = row.kind;
    uint32_t next = i + 1;  // default: descend
    if (t == sym::import_statement) {
      RewriteImport(n);
      next = row.end;
    } else if (t == sym::import_from_statement) {
      RewriteImportFrom(n);
      next = row.end;
    } else if (t == sym::future_import_statement || t == sym::comment) {
      next = row.end;
    } else if (t == sym::string) {
      RewriteString(n, parent);  // then its interpolations, which hold expressions
    } else if (t == sym::call) {
      std::vector<TSNode> replaced = RewriteCall(i);
      skip.insert(skip.end(), replaced.begin(), replaced.end());
    } else if (t == sym::attribute) {
      Chain c = FlattenAt(i);
      RewriteChain(c, is_callee);
      next = row.end;
      if (!c.pure) {  // the object is an expression of its own (a call, a subscript...): visit it, then leave
        uint32_t b = i + 1;
        while (b < row.end && !Same(rows_[b].node, c.base)) ++b;
        if (b < row.end) {
          resume.emplace_back(rows_[b].end, row.end);
          base_row = b;
          next = b;
        }
      }
    } else if (t == sym::identifier) {
      if (IsReference(i, p)) RewriteChain(FlattenAt(i), is_callee);
      next = row.end;
    }
    i = next;
  }
}

void Migrator::RewriteChain(const Chain& c, bool is_callee) {
  if (c.pure) {
    TSNode head = c.names[0];
    if (const Binding* b = Lookup(Text(head))) {
      std::string q = Qualified(c);
      const ApiRule* r = rules_.Match(q);
      std::string now = rules_.Map(q), head_now = rules_.Map(b->qualified);
      // The import itself was changed (now == head_now), or the tail must change, or the whole chain.
      bool whole = now != head_now && !StartsWith(now, head_now + ".");
      if (!b->rename_to.empty() && !whole)
        AddEdit(Start(head), End(head), b->rename_to, b->rename_rule, OpType::kModify,
                "rename " + std::string(Text(head)) + " to " + b->rename_to + " (its import was changed)");
      if (r && r->unsupported()) return AddFinding(c.node, *r, q);
      if (!r || now == head_now) return;
      std::vector<TSNode> tail(c.names.begin() + 1, c.names.end());
      if (whole) ReplaceComponents(c.names, Split(now), r->id, ApiMessage(*r));
      else ReplaceComponents(tail, Split(now.substr(head_now.size() + 1)), r->id, ApiMessage(*r));
      return;
    }
  }
  // An object the rules cannot name (a variable, a call result): only last-name rules apply.
  size_t first = (c.pure && c.names.size() > 1) ? 1 : 0;
  for (size_t i = first; i < c.names.size(); ++i) {
    bool callee = is_callee && i + 1 == c.names.size();
    std::string_view name = Text(c.names[i]);
    for (const NameRule& r : rules_.names) {
      if (name != r.old_name || (r.call_only && !callee)) continue;
      std::string what = r.call_only ? "function" : "attribute";
      AddEdit(Start(c.names[i]), End(c.names[i]), r.new_name, r.id, OpType::kModify,
              "change " + what + " " + r.old_name + " to " + r.new_name);
      break;
    }
  }
}

void Migrator::RewriteImport(TSNode stmt) {
  for (TSNode name : ImportNames(stmt)) {
    bool aliased = Is(name, sym::aliased_import);
    TSNode dotted = aliased ? Field(name, fld::name) : name;
    std::string q = DottedText(dotted, src_);
    const ApiRule* r = rules_.Match(q);
    if (!r) continue;
    if (r->unsupported()) {
      AddFinding(dotted, *r, q);
      continue;
    }
    std::string now = rules_.Map(q);
    // `import a.b` binds `a`: rewriting it to another root would unbind the name the code uses,
    // so such imports stay and the uses are rewritten in full instead.
    if (now != q && (aliased || Root(now) == Root(q)))
      AddEdit(Start(dotted), End(dotted), now, r->id, OpType::kModify, ApiMessage(*r));
  }
}

void Migrator::RewriteImportFrom(TSNode stmt) {
  TSNode module = Field(stmt, fld::module_name);
  if (Is(module, sym::relative_import)) return;
  std::string m = DottedText(module, src_);
  if (const ApiRule* r = rules_.Match(m); r && r->unsupported()) return AddFinding(module, *r, m);
  struct Item {
    TSNode node, name;
    bool aliased;
    std::string imported, new_module, new_name;
    const ApiRule* rule;
  };
  std::vector<Item> items;
  std::string new_module;
  const ApiRule* module_rule = nullptr;
  bool mixed = false;
  for (TSNode n : ImportNames(stmt)) {
    bool aliased = Is(n, sym::aliased_import);
    TSNode dn = aliased ? Field(n, fld::name) : n;
    std::string imported = DottedText(dn, src_), q = m + "." + imported;
    const ApiRule* r = rules_.Match(q);
    if (r && r->unsupported()) {
      AddFinding(dn, *r, q);
      r = nullptr;
    }
    std::string now = r ? rules_.Map(q) : q;
    size_t dot = now.rfind('.');
    Item it{n, dn, aliased, imported, now.substr(0, dot), now.substr(dot + 1), r};
    if (new_module.empty()) new_module = it.new_module;
    mixed |= it.new_module != new_module;
    if (r && !module_rule) module_rule = r;
    items.push_back(std::move(it));
  }
  if (!module_rule) return;
  if (mixed) {
    out_.notes.push_back("line with 'from " + m + " import ...': its names move to different modules; split the import by hand");
    return;
  }
  if (new_module != m) AddEdit(Start(module), End(module), new_module, module_rule->id, OpType::kModify, ApiMessage(*module_rule));
  for (Item& it : items) {
    if (!it.rule || it.new_name == it.imported) continue;
    std::string text = it.new_name;
    // Keep the local name the code uses: rename it everywhere when that is unambiguous, else alias it.
    auto b = binds_.find(it.imported);
    bool rename = !it.aliased && b != binds_.end() && b->second.imports == 1 && !b->second.conflicting &&
                  !Binds(it.new_name);
    if (rename) {
      b->second.rename_to = it.new_name;
      b->second.rename_rule = it.rule->id;
    } else if (!it.aliased) {
      text += " as " + it.imported;
    }
    AddEdit(Start(it.name), End(it.name), text, it.rule->id, OpType::kModify, ApiMessage(*it.rule));
  }
}

void Migrator::RewriteString(TSNode str, TSNode parent) {
  uint32_t kids = ts_node_child_count(str);
  if (kids < 2) return;
  TSNode open = ts_node_child(str, 0), close = ts_node_child(str, kids - 1);
  std::string_view prefix = Text(open);
  prefix = prefix.substr(0, prefix.find_first_of("'\""));
  if (prefix.find_first_of("bB") != std::string_view::npos) return;
  bool fstring = prefix.find_first_of("fF") != std::string_view::npos;
  uint32_t cs = End(open), ce = Start(close);
  std::string_view content = src_.substr(cs, ce - cs);
  std::vector<TSNode> interps;
  for (uint32_t i = 0, n = ts_node_named_child_count(str); i < n; ++i)
    if (Is(ts_node_named_child(str, i), sym::interpolation)) interps.push_back(ts_node_named_child(str, i));
  // Distributed: every process computes on its own card, so a hard-coded 'cuda:0' or 'npu:0' names DEVICE_ID.
  auto indexed = [&](std::string_view type) {
    if (!StartsWith(content, type) || content.size() <= type.size() + 1 || content[type.size()] != ':') return false;
    return content.substr(type.size() + 1).find_first_not_of("0123456789") == std::string_view::npos;
  };
  if (opts_.distributed && FileImportsTorch() && interps.empty() && !Is(parent, sym::concatenated_string) && (indexed("cuda") || indexed("npu"))) {
    std::string_view q = Text(close);
    std::string repl = "f" + std::string(q) + "npu:{DEVICE_ID}" + std::string(q);
    AddEdit(Start(str), End(str), repl, rules_.device_string_rule_id, OpType::kModify,
            "replace device string " + std::string(Text(str)) + " with " + repl + " (each process has its own card)");
    return;
  }
  for (const StringRule& r : rules_.strings) {
    if (!r.device) {
      if (interps.empty() && content == r.old_text)
        AddEdit(cs, ce, r.new_text, r.id, OpType::kModify,
                "replace string \"" + r.old_text + "\" with \"" + r.new_text + "\"");
      continue;
    }
    if (!StartsWith(content, r.old_text)) continue;
    std::string_view rest = content.substr(r.old_text.size());
    bool device = rest.empty() && interps.empty();
    if (!device && !rest.empty() && rest[0] == ':') {
      std::string_view idx = rest.substr(1);
      bool digits = !idx.empty() && idx.find_first_not_of("0123456789") == std::string_view::npos;
      bool placeholder = !fstring && (idx == "%d" || idx == "%s" || idx == "%i" ||
                                      (idx.size() >= 2 && idx.front() == '{' && idx.back() == '}' &&
                                       idx.substr(1, idx.size() - 2).find_first_of("{}") == std::string_view::npos));
      bool interpolated = fstring && interps.size() == 1 && Start(interps[0]) == cs + r.old_text.size() + 1 &&
                          End(interps[0]) == ce;
      device = (digits && interps.empty()) || placeholder || interpolated;
    }
    if (!device) continue;
    if (device_mode() && !Is(parent, sym::concatenated_string)) {
      TSNode p = parent;
      bool device_arg = Is(p, sym::keyword_argument) ? (Text(Field(p, fld::name)) == "device" || Text(Field(p, fld::name)) == "map_location")
                                                  : Is(p, sym::argument_list);
      if (device_arg) {
        std::string_view q = Text(close);
        std::string repl = "f" + std::string(q) + "npu:{DEVICE_ID}" + std::string(q);
        AddEdit(Start(str), End(str), repl, rules_.device_string_rule_id, OpType::kModify,
                "replace device string " + std::string(Text(str)) + " with " + repl);
        continue;
      }
    }
    AddEdit(cs, cs + r.old_text.size(), r.new_text, r.id, OpType::kModify,
            "replace string \"" + r.old_text + "\" with \"" + r.new_text + "\"");
  }
}

std::vector<TSNode> Migrator::RewriteCall(uint32_t row) {
  std::vector<TSNode> replaced;
  // A call's named children are its function, then its arguments.
  uint32_t f = row + 1, a = f < rows_[row].end ? rows_[f].end : rows_[row].end;
  if (a >= rows_[row].end || rows_[a].kind != sym::argument_list) return replaced;
  if (rows_[f].kind != sym::attribute && rows_[f].kind != sym::identifier) return replaced;
  TSNode call = rows_[row].node, fn = rows_[f].node, args = rows_[a].node;
  Chain c = FlattenAt(f);
  std::string callee = Qualified(c);
  std::string_view last = Text(c.names.empty() ? fn : c.names.back());
  for (const KeywordRule& k : rules_.keywords) {
    if (callee != k.function) continue;
    TSNode kw = KeywordArg(args, k.old_name);
    if (ts_node_is_null(kw)) continue;
    TSNode name = Field(kw, fld::name);
    AddEdit(Start(name), End(name), k.new_name, k.id, OpType::kModify,
            "change the argument " + k.old_name + " of " + k.function + " to " + k.new_name);
  }
  for (const ArgsRule& a : rules_.args) {
    bool match = a.function.find('.') == std::string::npos ? last == a.function
                                                             : (callee == a.function || Text(fn) == a.function);
    if (!match) continue;
    std::vector<TSNode> pos = PositionalArgs(args);
    if (static_cast<size_t>(a.index) >= pos.size()) continue;
    TSNode arg = pos[a.index];
    if (Text(arg) == a.new_arg) continue;  // already migrated
    AddEdit(Start(arg), End(arg), a.new_arg, a.id, OpType::kModify,
            "change the arg at position " + std::to_string(a.index) + " of function " + a.function + " to " + a.new_arg);
    replaced.push_back(arg);
  }
  NoteCall(callee, last, rows_[f].kind == sym::attribute && callee.empty(), fn, args);
  std::vector<TSNode> wrapped = WrapDeviceIndexArgs(args, callee, last, rows_[f].kind == sym::attribute && callee.empty());
  replaced.insert(replaced.end(), wrapped.begin(), wrapped.end());
  if (device_mode()) {
    std::vector<TSNode> more = RewriteCallForDevice(call, callee);
    replaced.insert(replaced.end(), more.begin(), more.end());
  }
  return replaced;
}

// Advice on the call, or, when no rule of any kind names a torch API it calls, an unknown-API notice (once
// per API and file): transplt cannot vouch for it either way.
void Migrator::NoteCall(const std::string& callee, std::string_view last, bool method, TSNode fn, TSNode args) {
  bool splat = false;  // f(**kwargs): which keywords it passes is unknown
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) splat |= Is(ts_node_named_child(args, i), sym::dictionary_splat);
  bool known = false;
  for (const AdviceRule& a : rules_.advice) {
    if (a.api.empty() ? !(method && last == a.method) : callee != a.api) continue;
    known = true;
    if (!a.keyword.empty()) {
      TSNode kw = KeywordArg(args, a.keyword);
      bool satisfied = !ts_node_is_null(kw) && (a.value.empty() || Text(Field(kw, fld::value)) == a.value);
      if (satisfied || splat) continue;
    }
    Notice::Kind kind = a.kind == AdviceRule::kPrecision ? Notice::kPrecision : Notice::kPerformance;
    out_.notices.push_back({kind, Start(fn), a.id, a.api.empty() ? "." + a.method : a.api, a.tip});
  }
  if (known || !callee.starts_with("torch.") || rules_.Match(callee)) return;
  for (const KeywordRule& k : rules_.keywords)
    if (k.function == callee) return;
  if (unknown_seen_.insert(callee).second) out_.notices.push_back({Notice::kUnknownApi, Start(fn), "", callee, ""});
}

// As the official tool places it: a module-level torch import gets `import torch_npu` after the block of imports
// it belongs to (so `from __future__` and the file's other imports stay first); one inside a try or a function
// gets it just before, in the same block.
void Migrator::InsertTorchNpuImport() {
  if (!FileImportsTorch() || has_torch_npu_import_) return;
  if (Is(Parent(first_torch_import_), sym::module)) {
    TSNode last = first_torch_import_;
    for (TSNode n = ts_node_next_named_sibling(last); !ts_node_is_null(n); n = ts_node_next_named_sibling(n)) {
      if (Is(n, sym::comment)) continue;
      if (!Is(n, sym::import_statement) && !Is(n, sym::import_from_statement)) break;
      last = n;
    }
    uint32_t at = LineEndAfter(End(last));
    if (LineIndent(Start(last)) != "\x01" && at > End(last)) {  // the block ends its line: insert on the next
      AddEdit(at, at, "import torch_npu" + eol_, rules_.import_rule_id, OpType::kInsert, "import torch_npu");
      return;
    }
  }
  uint32_t at = Start(first_torch_import_);
  std::string indent = LineIndent(at);
  if (indent == "\x01")
    AddEdit(at, at, "import torch_npu; ", rules_.import_rule_id, OpType::kInsert, "import torch_npu");
  else
    AddEdit(at - indent.size(), at - indent.size(), indent + "import torch_npu" + eol_, rules_.import_rule_id,
            OpType::kInsert, "import torch_npu");
}

bool IsTorchRoot(std::string_view root) { return StartsWith(root, "torch") && root != "torch_npu"; }

Migration Migrate(std::string_view utf8, TSNode root, const RuleSet& rules, const MigrateOptions& opts) {
  return Migrator(utf8, root, rules, opts).Run();
}

std::string ApplyEdits(std::string_view text, const std::vector<Edit>& edits) {
  std::string out;
  out.reserve(text.size() + 64 * edits.size());
  size_t at = 0;
  for (const Edit& e : edits) {
    out.append(text.substr(at, e.start - at));
    out.append(e.text);
    at = e.end;
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace transplt
