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
    const char* f = ts_tree_cursor_current_field_name(&cur);
    if (f && std::string_view(f) == "name") out.push_back(ts_tree_cursor_current_node(&cur));
  }
  ts_tree_cursor_delete(&cur);
  return out;
}

bool IsTorchRoot(std::string_view root) { return StartsWith(root, "torch") && root != "torch_npu"; }

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
  ForEachNode(root_, [&](TSNode n) {
    std::string_view t = Type(n);
    if (t == "import_statement" || t == "import_from_statement") {
      BindImport(n);
      return false;
    }
    if (t == "assignment") {
      TSNode left = Field(n, "left"), right = Field(n, "right");
      if (Is(left, "identifier") && (Is(right, "attribute") || Is(right, "identifier")))
        aliases.emplace_back(std::string(Text(left)), right);
      else
        BindOther(left);
    } else if (t == "augmented_assignment" || t == "for_statement" || t == "for_in_clause") {
      BindOther(Field(n, "left"));
    } else if (t == "function_definition" || t == "class_definition") {
      other_.insert(std::string(Text(Field(n, "name"))));
    } else if (t == "parameters" || t == "lambda_parameters") {
      for (uint32_t i = 0, c = ts_node_named_child_count(n); i < c; ++i) {
        TSNode p = ts_node_named_child(n, i);
        TSNode name = Field(p, "name");
        BindOther(ts_node_is_null(name) ? (Is(p, "identifier") ? p : ts_node_named_child(p, 0)) : name);
      }
    } else if (t == "as_pattern_target") {
      BindOther(n);
    } else if (t == "named_expression") {
      BindOther(Field(n, "name"));
    }
    return true;
  });
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

void Migrator::BindImport(TSNode stmt) {
  auto bind = [&](std::string local, std::string qualified) {
    Binding& b = binds_[local];
    if (!b.qualified.empty() && b.qualified != qualified) b.conflicting = true;
    if (b.qualified.empty()) b.qualified = std::move(qualified);
    ++b.imports;
  };
  auto note_root = [&](std::string_view root) {
    if (root == "torch_npu") has_torch_npu_import_ = true;
    if (IsTorchRoot(root) && ts_node_is_null(first_torch_import_)) first_torch_import_ = stmt;
  };
  if (Is(Parent(stmt), "module")) last_top_import_ = stmt;
  if (Is(stmt, "import_statement")) {
    for (TSNode name : ImportNames(stmt)) {
      if (Is(name, "aliased_import")) {
        std::string q = DottedText(Field(name, "name"), src_);
        note_root(Root(q));
        bind(std::string(Text(Field(name, "alias"))), q);
      } else {
        std::string q = DottedText(name, src_);
        note_root(Root(q));
        bind(std::string(Root(q)), std::string(Root(q)));
      }
    }
    return;
  }
  TSNode module = Field(stmt, "module_name");
  bool relative = Is(module, "relative_import");
  std::string m = relative ? "" : DottedText(module, src_);
  if (!relative) note_root(Root(m));
  for (TSNode name : ImportNames(stmt)) {
    bool aliased = Is(name, "aliased_import");
    std::string imported = DottedText(aliased ? Field(name, "name") : name, src_);
    std::string local = aliased ? std::string(Text(Field(name, "alias"))) : imported;
    if (relative) other_.insert(local);  // a project module: not something the rules know
    else bind(local, m + "." + imported);
  }
}

void Migrator::BindOther(TSNode target) {
  if (ts_node_is_null(target)) return;
  if (Is(target, "identifier")) {
    other_.insert(std::string(Text(target)));
    return;
  }
  if (Is(target, "attribute") || Is(target, "subscript")) return;  // binds no name
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
  while (Is(n, "attribute")) {
    rev.push_back(Field(n, "attribute"));
    n = Field(n, "object");
  }
  c.base = n;
  c.pure = Is(n, "identifier");
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
    if (Is(a, "keyword_argument") || Is(a, "dictionary_splat") || Is(a, "comment")) continue;
    out.push_back(a);
  }
  return out;
}

TSNode Migrator::KeywordArg(TSNode args, std::string_view name) const {
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    if (Is(a, "keyword_argument") && Text(Field(a, "name")) == name) return a;
  }
  return TSNode{};
}

void Migrator::DeleteArgument(TSNode args, TSNode arg, const std::string& rule, std::string message) {
  TSNode prev{}, next{};
  for (uint32_t i = 0, n = ts_node_named_child_count(args); i < n; ++i) {
    TSNode a = ts_node_named_child(args, i);
    if (Is(a, "comment")) continue;
    if (Same(a, arg)) {
      for (uint32_t j = i + 1; j < n && ts_node_is_null(next); ++j)
        if (!Is(ts_node_named_child(args, j), "comment")) next = ts_node_named_child(args, j);
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

bool Migrator::IsReference(TSNode ident, TSNode p) const {
  std::string_view t = Type(p);
  if (t == "keyword_argument" || t == "function_definition" || t == "class_definition" || t == "assignment")
    return !Same(Field(p, t == "assignment" ? "left" : "name"), ident);
  return t != "parameters" && t != "lambda_parameters" && t != "default_parameter" && t != "typed_parameter" &&
         t != "typed_default_parameter" && t != "global_statement" && t != "nonlocal_statement";
}

// One pre-order pass over the tree. Parents travel with the nodes: ts_node_parent rescans from the root.
void Migrator::Walk() {
  struct Item {
    TSNode node, parent;
  };
  std::vector<Item> stack{{root_, TSNode{}}};
  std::vector<TSNode> kids;
  auto push_children = [&](TSNode n, const std::vector<TSNode>& skip = {}) {
    NamedChildren(n, kids);
    for (auto it = kids.rbegin(); it != kids.rend(); ++it)
      if (std::none_of(skip.begin(), skip.end(), [&](TSNode r) { return Same(r, *it); })) stack.push_back({*it, n});
  };
  auto is_callee = [](TSNode n, TSNode p) { return Is(p, "call") && Same(Field(p, "function"), n); };
  while (!stack.empty()) {
    auto [n, parent] = stack.back();
    stack.pop_back();
    std::string_view t = Type(n);
    if (t == "import_statement") {
      RewriteImport(n);
    } else if (t == "import_from_statement") {
      RewriteImportFrom(n);
    } else if (t == "future_import_statement" || t == "comment") {
    } else if (t == "string") {
      RewriteString(n, parent);
      push_children(n);  // interpolations hold expressions
    } else if (t == "call") {
      std::vector<TSNode> replaced = RewriteCall(n);
      TSNode args = Field(n, "arguments");
      push_children(args, replaced);
      stack.push_back({Field(n, "function"), n});
    } else if (t == "attribute") {
      Chain c = Flatten(n);
      RewriteChain(c, is_callee(n, parent));
      if (!c.pure) stack.push_back({c.base, TSNode{}});
    } else if (t == "identifier") {
      if (IsReference(n, parent)) RewriteChain(Flatten(n), is_callee(n, parent));
    } else {
      push_children(n);
    }
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
    bool aliased = Is(name, "aliased_import");
    TSNode dotted = aliased ? Field(name, "name") : name;
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
  TSNode module = Field(stmt, "module_name");
  if (Is(module, "relative_import")) return;
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
    bool aliased = Is(n, "aliased_import");
    TSNode dn = aliased ? Field(n, "name") : n;
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
    if (Is(ts_node_named_child(str, i), "interpolation")) interps.push_back(ts_node_named_child(str, i));
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
    if (device_mode() && !Is(parent, "concatenated_string")) {
      TSNode p = parent;
      bool device_arg = Is(p, "keyword_argument") ? (Text(Field(p, "name")) == "device" || Text(Field(p, "name")) == "map_location")
                                                  : Is(p, "argument_list");
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

std::vector<TSNode> Migrator::RewriteCall(TSNode call) {
  std::vector<TSNode> replaced;
  TSNode fn = Field(call, "function"), args = Field(call, "arguments");
  if (!Is(args, "argument_list") || !(Is(fn, "attribute") || Is(fn, "identifier"))) return replaced;
  Chain c = Flatten(fn);
  std::string callee = Qualified(c);
  std::string_view last = Text(c.names.empty() ? fn : c.names.back());
  for (const KeywordRule& k : rules_.keywords) {
    if (callee != k.function) continue;
    TSNode kw = KeywordArg(args, k.old_name);
    if (ts_node_is_null(kw)) continue;
    TSNode name = Field(kw, "name");
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
  if (device_mode()) {
    std::vector<TSNode> more = RewriteCallForDevice(call, callee);
    replaced.insert(replaced.end(), more.begin(), more.end());
  }
  return replaced;
}

void Migrator::InsertTorchNpuImport() {
  if (!FileImportsTorch() || has_torch_npu_import_) return;
  uint32_t at = Start(first_torch_import_);
  std::string indent = LineIndent(at);
  if (indent == "\x01")
    AddEdit(at, at, "import torch_npu; ", rules_.import_rule_id, OpType::kInsert, "import torch_npu");
  else
    AddEdit(at - indent.size(), at - indent.size(), indent + "import torch_npu" + eol_, rules_.import_rule_id,
            OpType::kInsert, "import torch_npu");
}

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
