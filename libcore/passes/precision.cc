#include "passes/precision.h"

#include <algorithm>

#include "ir/graph_edit.h"
#include "ir/node_attrs.h"
#include "ir/op_schema.h"
#include "kernels/kernel_util.h"
#include "kernels/numerics.h"
#include "kernels/registry.h"

namespace npu {
namespace {


// What one op computes in: its float data inputs take `compute`, its float outputs `out`; per-position
// overrides come from --customize_dtypes.
struct Decision {
  DType compute = DType::kF32, out = DType::kF32;
  std::vector<std::optional<DType>> in_override, out_override;
  bool aicpu = false;
  std::string impl_mode;
  std::string chain;

  void Set(DType d, const std::string& why) {
    compute = out = d;
    Note(why + " -> " + std::string(DTypeName(d)));
  }
  void Note(const std::string& step) { chain += (chain.empty() ? "" : "; ") + step; }
};

bool NameMatches(const Node& n, const std::set<std::string, std::less<>>& names, std::string* hit) {
  if (names.count(n.name)) return *hit = n.name, true;
  for (const auto& o : n.original_names)
    if (names.count(o)) return *hit = o, true;
  return false;
}

// The entry keyed by the node's name or one of its original names (the key that matched goes to *hit).
template <class Map>
auto FindByNode(const Node& n, const Map& m, std::string* hit) -> decltype(&m.begin()->second) {
  if (auto it = m.find(n.name); it != m.end()) return *hit = it->first, &it->second;
  for (const auto& o : n.original_names)
    if (auto it = m.find(o); it != m.end()) return *hit = it->first, &it->second;
  return nullptr;
}

class Assigner {
 public:
  Assigner(Graph& g, const PrecisionConfig& cfg) : g_(g), cfg_(cfg), exec_(ExecContext::ForSoc(cfg.soc, false)) {
    for (const Value& v : g.values) origin_.push_back(v.dtype);
    current_ = origin_;
  }

  Status Run(std::vector<std::string>& warnings) {
    size_t n = g_.nodes.size();  // Casts appended below are not revisited
    for (size_t k = 0; k < n; ++k)
      if (Participates(g_.nodes[k])) Apply(k, Decide(g_.nodes[k]));
    CastGraphOutputs();
    NPU_RETURN_IF_ERROR(SortTopologically(g_));
    ReportUnmatched(warnings);
    return Status::Ok();
  }

 private:
  Graph& g_;
  const PrecisionConfig& cfg_;
  ExecContext exec_;
  std::vector<DType> origin_, current_;
  std::map<std::pair<int, DType>, int> converted_;
  std::set<std::string, std::less<>> used_names_, used_types_;
  std::set<std::pair<std::string, int64_t>> used_outputs_;  // per-node --output_type entries that matched

  bool Fixed(const Node& n, size_t slot) const {
    const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
    return s && std::find(s->fixed_dtype_inputs.begin(), s->fixed_dtype_inputs.end(), static_cast<int>(slot)) != s->fixed_dtype_inputs.end();
  }
  // fp32 data is what precision modes act on; fp64, integer and already-16-bit tensors keep their dtype.
  bool Adjustable(int v) const { return v >= 0 && origin_[v] == DType::kF32; }
  bool Participates(const Node& n) const {
    for (size_t j = 0; j < n.inputs.size(); ++j)
      if (Adjustable(n.inputs[j]) && !Fixed(n, j)) return true;
    const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
    for (int o : n.outputs)
      if (Adjustable(o) && !(s && s->output_dtype_from_attrs)) return true;
    return false;
  }
  bool IsCube(const Node& n) const {
    const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
    return s && s->engine == Engine::kCube;
  }
  DType Low() const {
    return cfg_.mode == PrecisionMode::kMixBf16 || cfg_.mode == PrecisionMode::kAllowFp32ToBf16 ? DType::kBF16 : DType::kF16;
  }
  // A gray op under mixed precision follows its producers: 16-bit if any non-constant float input is.
  const Node* LowProducer(const Node& n) const {
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      int v = n.inputs[j];
      if (Adjustable(v) && !Fixed(n, j) && !g_.values[v].constant && current_[v] == Low() && g_.values[v].producer >= 0)
        return &g_.nodes[g_.values[v].producer];
    }
    return nullptr;
  }

  Decision Decide(const Node& n) {
    Decision d;
    const std::string& type = ShownType(n);
    std::string mode = "precision_mode " + cfg_.mode_name;
    bool cube = IsCube(n);
    switch (cfg_.mode) {
      case PrecisionMode::kForceFp16: d.Set(DType::kF16, mode); break;
      case PrecisionMode::kOrigin: d.Set(DType::kF32, mode + " keeps the origin dtype"); break;
      case PrecisionMode::kAllowFp32ToFp16:
      case PrecisionMode::kAllowFp32ToBf16: d.Set(cube ? Low() : DType::kF32, mode + (cube ? ": cube op" : ": vector op keeps fp32")); break;
      case PrecisionMode::kCubeFp16InFp32Out:
        d.Set(DType::kF32, mode + (cube ? ": cube op" : ": vector op"));
        if (cube) d.compute = DType::kF16, d.Note("cube inputs -> float16, accumulate and output float32");
        break;
      case PrecisionMode::kMixFp16:
      case PrecisionMode::kMixBf16: DecideMixed(n, type, mode, d); break;
    }
    ApplyKeepDtype(n, type, d);
    ApplyOpPrecisionMode(n, type, d);
    ApplyCustomize(n, type, d);
    if (cube && d.compute == DType::kF32 && !cfg_.soc->cube_fp32) {
      d.aicpu = true;
      d.Note("fallback: the " + cfg_.soc->name + " cube has no fp32 -> AI CPU task in fp32");
    }
    return d;
  }

  void DecideMixed(const Node& n, const std::string& type, const std::string& mode, Decision& d) {
    std::string list = "list " + cfg_.soc->ops_family + (cfg_.lists.white.count(type) ? " white" : cfg_.lists.black.count(type) ? " black" : " gray");
    if (cfg_.lists.white.count(type)) return d.Set(Low(), mode + "; " + list);
    if (cfg_.lists.black.count(type)) return d.Set(DType::kF32, mode + "; " + list);
    if (const Node* p = LowProducer(n)) return d.Set(Low(), mode + "; " + list + ": follows producer " + p->name);
    d.Set(DType::kF32, mode + "; " + list + ": no 16-bit producer, keeps the origin dtype");
  }

  void ApplyKeepDtype(const Node& n, const std::string& type, Decision& d) {
    if (cfg_.mode == PrecisionMode::kOrigin) return;  // nothing to keep: already the origin dtype
    std::string hit;
    if (NameMatches(n, cfg_.keep_names, &hit)) used_names_.insert(hit), d.Set(DType::kF32, "keep_dtype " + hit);
    else if (cfg_.keep_types.count(type)) used_types_.insert(type), d.Set(DType::kF32, "keep_dtype OpType::" + type);
  }

  void ApplyOpPrecisionMode(const Node& n, const std::string& type, Decision& d) {
    std::string impl = cfg_.implmode;
    bool listed = cfg_.implmode_types.count(type);
    if (listed) used_types_.insert(type);
    if (!cfg_.implmode_types.empty() && !listed) impl = "high_performance";
    std::string hit;
    const std::string* mode = FindByNode(n, cfg_.op_mode_by_name, &hit);
    std::string source = "op_precision_mode [ByNodeName]";
    if (mode) used_names_.insert(hit);
    if (auto it = cfg_.op_mode_by_type.find(type); !mode && it != cfg_.op_mode_by_type.end())
      mode = &it->second, source = "op_precision_mode [ByOpType]", used_types_.insert(type);
    if (mode && *mode == "enable_float_32_execution") d.Set(DType::kF32, source + " " + *mode);
    else if (mode && *mode == "keep_fp16") d.Set(DType::kF16, source + " " + *mode);
    else if (mode && (*mode == "high_precision" || *mode == "high_performance")) impl = *mode, d.Note(source + " implmode " + *mode);
    else if (listed) d.Note("optypelist_for_implmode implmode " + impl);
    d.impl_mode = impl.rfind("high_precision", 0) == 0 ? "high_precision" : "high_performance";
  }

  void ApplyCustomize(const Node& n, const std::string& type, Decision& d) {
    std::string hit;
    const DtypeOverride* o = FindByNode(n, cfg_.custom_by_name, &hit);
    std::string what = "customize_dtypes " + hit;
    if (o) used_names_.insert(hit);
    else if (auto it = cfg_.custom_by_type.find(type); it != cfg_.custom_by_type.end()) o = &it->second, what = "customize_dtypes OpType::" + type, used_types_.insert(type);
    if (!o) return;
    d.in_override = o->inputs;
    d.out_override = o->outputs;
    auto first = [](const auto& v) -> std::optional<DType> { return v.empty() ? std::nullopt : v[0]; };
    if (auto in0 = first(o->inputs)) d.compute = *in0;
    if (auto out0 = first(o->outputs)) d.out = *out0;
    d.Note(what + " -> in " + std::string(DTypeName(d.compute)) + ", out " + std::string(DTypeName(d.out)));
  }

  // The value holding v in dtype `want`: v itself, a converted weight, or the output of a (shared) Cast.
  int Converted(int v, DType want) {
    if (current_[v] == want) return v;
    auto key = std::make_pair(v, want);
    if (auto it = converted_.find(key); it != converted_.end()) return it->second;
    std::string base = g_.values[v].name + "_" + std::string(DTypeName(want));
    int out;
    if (const Tensor* c = ConstantOf(g_, v)) {
      Tensor f32 = CastTensor(*c, DType::kF32);
      out = AddConstant(g_, base, IsHalfLike(want) ? NarrowFloat(f32, want, exec_, nullptr) : f32);
    } else {
      out = g_.AddValue(UniqueValueName(g_, base));
      g_.values[out].shape = g_.values[v].shape;
      g_.values[out].has_shape = g_.values[v].has_shape;
      g_.values[out].layout = g_.values[v].layout;
      Node cast;
      cast.name = UniqueNodeName(g_, g_.values[v].name + "_Cast_" + std::string(DTypeName(want)));
      cast.op_type = cast.ascend_type = "Cast";
      cast.inputs = {v};
      cast.outputs = {out};
      cast.attrs["to"] = static_cast<int64_t>(want);
      cast.attrs[kPrecisionReasonAttr] = "inserted: " + std::string(DTypeName(current_[v])) + " -> " + std::string(DTypeName(want));
      AppendNode(g_, std::move(cast));
    }
    g_.values[out].dtype = want;
    origin_.push_back(want);
    current_.push_back(want);
    converted_[key] = out;
    return out;
  }

  void Apply(size_t k, const Decision& d) {
    std::vector<int> ins = g_.nodes[k].inputs;
    for (size_t j = 0; j < ins.size(); ++j) {
      if (!Adjustable(ins[j]) || Fixed(g_.nodes[k], j)) continue;
      DType want = j < d.in_override.size() && d.in_override[j] ? *d.in_override[j] : d.compute;
      // A fused residual joins the result in the epilogue, so it takes the output's dtype, not the cube's.
      if (static_cast<int64_t>(j) == g_.nodes[k].attr_int(kEpilogueResidualInput, -1)) want = d.out;
      ins[j] = Converted(ins[j], want);
    }
    Node& n = g_.nodes[k];  // Converted() may have grown g_.nodes
    n.inputs = ins;
    for (size_t j = 0; j < n.outputs.size(); ++j) {
      int o = n.outputs[j];
      if (!Adjustable(o)) continue;
      current_[o] = j < d.out_override.size() && d.out_override[j] ? *d.out_override[j] : d.out;
      g_.values[o].dtype = current_[o];
    }
    n.attrs[kPrecisionReasonAttr] = d.chain;
    n.attrs[kOpImplModeAttr] = d.impl_mode;
    if (d.aicpu) n.attrs[kOpEngineAttr] = std::string(kAiCpuEngine);
  }

  // Net outputs keep their origin dtype (or --output_type): a Cast takes over the output's name.
  void CastGraphOutputs() {
    for (int& o : g_.outputs) {
      if (!IsFloat(origin_[o]) || origin_[o] == DType::kF64) continue;
      std::optional<DType> by_node = OutputTypeByNode(o);
      DType want = by_node.value_or(cfg_.output_type.value_or(origin_[o]));
      if (current_[o] == want) continue;
      std::string name = g_.values[o].name;
      g_.RenameValue(o, UniqueValueName(g_, name + "_" + std::string(DTypeName(current_[o]))));
      int cast_out = Converted(o, want);
      g_.RenameValue(cast_out, name);
      if (g_.values[cast_out].producer >= 0) g_.nodes[g_.values[cast_out].producer].attrs[kPrecisionReasonAttr] =
          "inserted: net output " + name + " " + std::string(DTypeName(current_[o])) + " -> " + std::string(DTypeName(want)) +
          (cfg_.output_type || by_node ? " (--output_type)" : " (origin dtype)");
      o = cast_out;
    }
  }

  // The per-node --output_type entry for net output `o`: its producer by name, or an op the producer absorbed.
  std::optional<DType> OutputTypeByNode(int o) {
    int p = g_.values[o].producer;
    if (p < 0 || cfg_.output_type_by_node.empty()) return std::nullopt;
    const Node& n = g_.nodes[p];
    int64_t idx = std::find(n.outputs.begin(), n.outputs.end(), o) - n.outputs.begin();
    std::vector<std::string> names = n.original_names;
    names.push_back(n.name);
    for (const auto& name : names)
      if (auto it = cfg_.output_type_by_node.find({name, idx}); it != cfg_.output_type_by_node.end()) {
        used_outputs_.insert(it->first);
        return it->second;
      }
    return std::nullopt;
  }

  void ReportUnmatched(std::vector<std::string>& warnings) const {
    for (const auto& [key, t] : cfg_.output_type_by_node)
      if (!used_outputs_.count(key))
        warnings.push_back("--output_type: " + key.first + ":" + std::to_string(key.second) + " is not a net output (add it to --out_nodes)");
    std::set<std::string, std::less<>> types;
    for (const Node& n : g_.nodes) types.insert(ShownType(n));
    auto names = [&](const auto& set, const char* flag) {
      for (const auto& k : set)
        if (!used_names_.count(k)) warnings.push_back(std::string(flag) + ": op name '" + k + "' matches no op in the model");
    };
    auto kinds = [&](const auto& set, const char* flag) {
      for (const auto& k : set)
        if (!types.count(k)) warnings.push_back(std::string(flag) + ": op type '" + k + "' occurs nowhere in the model");
    };
    names(cfg_.keep_names, "--keep_dtype");
    kinds(cfg_.keep_types, "--keep_dtype");
    for (const auto& [k, v] : cfg_.custom_by_name)
      if (!used_names_.count(k)) warnings.push_back("--customize_dtypes: op name '" + k + "' matches no op in the model");
    for (const auto& [k, v] : cfg_.custom_by_type)
      if (!types.count(k)) warnings.push_back("--customize_dtypes: op type '" + k + "' occurs nowhere in the model");
    for (const auto& [k, v] : cfg_.op_mode_by_name)
      if (!used_names_.count(k)) warnings.push_back("--op_precision_mode: op name '" + k + "' matches no op in the model");
    for (const auto& [k, v] : cfg_.op_mode_by_type)
      if (!types.count(k)) warnings.push_back("--op_precision_mode: op type '" + k + "' occurs nowhere in the model");
    kinds(cfg_.implmode_types, "--optypelist_for_implmode");
    kinds(cfg_.mixlist_named, "--modify_mixlist");
  }
};

}  // namespace

Status AssignPrecision(Graph& g, const PrecisionConfig& cfg, std::vector<std::string>& warnings) {
  return Assigner(g, cfg).Run(warnings);
}

}  // namespace npu
