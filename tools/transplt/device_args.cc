// TP070: device arguments that may hold a CUDA device index. On a GPU `x.to(gpu_id)`, `torch.device(local_rank)`,
// `torch.zeros(n, device=rank)` and `torch.load(f, map_location=gpu)` read an int as "cuda:<int>"; after migration
// the same int must name an NPU. As the official tool does, such an argument `v` becomes
// `f'npu:{v}' if isinstance(v, int) else v`. transplt wraps only what may be an int and may be read twice: a name,
// an attribute chain or a subscript of one. It leaves literals (the string rules handle those), calls (their side
// effects would run twice), dtypes (`x.to(torch.float16)`, `x.to(y.dtype)`) and names every assignment of which
// gives a string or a torch.device, where the official tool wraps everything not on its text whitelist.
#include <algorithm>
#include <array>

#include "migrator.h"

namespace transplt {
namespace {

constexpr std::array<std::string_view, 14> kTorchDtypes = {"float16", "float32", "float64", "bfloat16", "half", "float", "double",
                                                           "int8",    "uint8",   "int16",   "int32",    "int64", "long", "bool"};

bool Contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

// A name, an attribute chain of names, or a subscript of one by a name, number or string: reading it twice reads
// the same value.
bool Pure(TSNode v) {
  if (Is(v, sym::identifier)) return true;
  if (Is(v, sym::attribute)) return Pure(Field(v, fld::object));
  if (Is(v, sym::subscript)) {
    TSNode index = ts_node_named_child(v, 1);
    return Pure(Field(v, fld::value)) && ts_node_named_child_count(v) == 2 &&
           (Is(index, sym::identifier) || Is(index, sym::integer) || Is(index, sym::string));
  }
  return false;
}

}  // namespace

bool Migrator::ProvablyNotAnIndex(TSNode v) {
  std::string_view text = Text(v);
  if (Contains(text, "dtype")) return true;
  if (Is(v, sym::attribute)) {
    Chain c = Flatten(v);
    std::string q = Qualified(c);
    std::string_view last = Text(c.names.empty() ? v : c.names.back());
    return q.starts_with("torch.") && std::find(kTorchDtypes.begin(), kTorchDtypes.end(), last) != kTorchDtypes.end();
  }
  if (!Is(v, sym::identifier)) return false;
  if (!non_index_names_ready_) {
    non_index_names_ready_ = true;
    // A literal, or a str method's result ('cuda:{}'.format(i)).
    auto is_string = [](TSNode n) {
      if (Is(n, sym::call)) {
        TSNode fn = Field(n, fld::function);
        if (Is(fn, sym::attribute)) n = Field(fn, fld::object);
      }
      return Is(n, sym::string) || Is(n, sym::concatenated_string);
    };
    std::unordered_set<std::string> params;
    for (uint32_t i = 0; i < rows_.size(); ++i) {  // the walk's row array: no tree-sitter child scans
      const NodeRow& r = rows_[i];
      if (r.parent != kNoRow && (rows_[r.parent].kind == sym::parameters || rows_[r.parent].kind == sym::lambda_parameters)) {
        TSNode name = r.kind == sym::identifier ? r.node : Field(r.node, fld::name);
        if (ts_node_is_null(name)) name = ts_node_named_child(r.node, 0);
        if (!ts_node_is_null(name)) params.insert(std::string(Text(name)));  // a comment or an error node names nothing
        continue;
      }
      if (r.kind != sym::assignment) continue;
      TSNode left = Field(r.node, fld::left), rhs = Field(r.node, fld::right);
      if (!Is(left, sym::identifier)) continue;
      bool device = is_string(rhs) ||
                    (Is(rhs, sym::conditional_expression) && is_string(ts_node_named_child(rhs, 0)) && is_string(ts_node_named_child(rhs, 2))) ||
                    (Is(rhs, sym::call) && Qualified(Flatten(Field(rhs, fld::function))) == "torch.device");
      auto [it, fresh] = non_index_names_.emplace(std::string(Text(left)), device);
      if (!fresh) it->second = it->second && device;
    }
    for (const std::string& p : params) non_index_names_[p] = false;  // a caller may pass an int
  }
  auto it = non_index_names_.find(std::string(text));
  return it != non_index_names_.end() && it->second;
}

std::vector<TSNode> Migrator::WrapDeviceIndexArgs(TSNode args, const std::string& callee, std::string_view last, bool method) {
  std::vector<TSNode> targets;
  auto keyword = [&](std::string_view name) {
    TSNode kw = KeywordArg(args, name);
    if (!ts_node_is_null(kw)) targets.push_back(Field(kw, fld::value));
  };
  std::vector<TSNode> pos = PositionalArgs(args);
  if (method && last == "to") {
    if (!pos.empty()) targets.push_back(pos[0]);
    keyword("device");
  } else if (method && (last == "to_empty" || last.starts_with("new_"))) {
    keyword("device");
  } else if (callee == "torch.device") {
    if (pos.size() == 1) targets.push_back(pos[0]);  // torch.device('cuda', i): the string rule makes it 'npu', i
  } else if (callee == "torch.load" || callee == "torch.jit.load") {
    keyword("map_location");
  } else if (callee.starts_with("torch.")) {
    keyword("device");
  }
  std::vector<TSNode> wrapped;
  for (TSNode v : targets) {
    if (!Pure(v)) continue;  // also every null node of a damaged tree
    std::string text(Text(v));
    if (Contains(text, "cuda") || ProvablyNotAnIndex(v)) continue;
    bool single = Contains(text, "'"), dbl = Contains(text, "\"");
    if (single && dbl) continue;
    std::string q = single ? "\"" : "'";
    AddEdit(Start(v), End(v), "f" + q + "npu:{" + text + "}" + q + " if isinstance(" + text + ", int) else " + text,
            rules_.device_index_rule_id, OpType::kModify,
            "change the device argument " + text + " to 'npu:" + text + "' when it is an int (a CUDA device index)");
    wrapped.push_back(v);
  }
  return wrapped;
}

}  // namespace transplt
