#include "fusion_rule.h"

#include <algorithm>
#include <string_view>

#include "om/model_json.h"

namespace npu::cmp {
namespace {

// How AMCT names the quantize and dequantize ops it inserts (Caffe, TensorFlow, ONNX spellings; from the
// open-sourced msaccucmp's quant filter). An anti-quant op matches both lists; its output type decides.
constexpr std::string_view kQuantMarks[] = {"_quant_layer", "/AscendQuant", "/AscendWeightQuant", ".quant", ".weight_quant"};
constexpr std::string_view kDequantMarks[] = {"_dequant_layer", "_anti_quant_layer", "/AscendDequant", "/AntiQuant", ".dequant", ".anti_quant"};

template <size_t N>
bool Marked(const Node& n, const std::string_view (&marks)[N]) {
  auto has = [&](const std::string& s) { return std::any_of(std::begin(marks), std::end(marks), [&](auto m) { return s.find(m) != s.npos; }); };
  return has(n.name) || std::any_of(n.original_names.begin(), n.original_names.end(), has);
}

bool AllOutputs(const Graph& g, const Node& n, DType t) {
  return !n.outputs.empty() && std::all_of(n.outputs.begin(), n.outputs.end(), [&](int v) { return g.values[v].dtype == t; });
}

// An op holds integer data when it quantizes (a quantize name, int8 out) or reads integer data without
// being the dequantize (a dequantize name, float16 out) that ends the pair.
std::vector<bool> IntegerOps(const Graph& g) {
  std::vector<bool> integer(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    bool reads_integer = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int v) { return v >= 0 && g.values[v].producer >= 0 && integer[g.values[v].producer]; });
    bool quantizes = Marked(n, kQuantMarks) && AllOutputs(g, n, DType::kI8);
    bool dequantizes = Marked(n, kDequantMarks) && AllOutputs(g, n, DType::kF16);
    integer[k] = quantizes || (reads_integer && !dequantizes);
  }
  return integer;
}

}  // namespace

Result<FusionRule> ReadFusionRule(const std::string& path, const std::string& flag) {
  NPU_ASSIGN_OR_RETURN(ModelJson m, ReadModelJson(path, flag));
  const Graph& g = m.graph;
  std::vector<bool> integer = IntegerOps(g);
  FusionRule r;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    FusionOp op{m.ids[k], n.name, ShownType(n), {}, n.original_names, n.outputs.size(), integer[k]};
    for (int v : n.inputs) op.inputs.push_back(ValueRef(g, v));
    r.by_name.emplace(op.name, r.ops.size());
    r.ops.push_back(std::move(op));
  }
  return r;
}

size_t MapThroughQuantRecord(FusionRule& rule, const FusionRule& record) {
  size_t unknown = 0;
  for (FusionOp& op : rule.ops) {
    std::vector<std::string> before;
    for (const std::string& n : op.original_names) {
      auto r = record.by_name.find(n);
      if (r == record.by_name.end()) {
        ++unknown;
        continue;
      }
      const FusionOp& q = record.ops[r->second];
      for (const std::string& b : q.original_names.empty() ? std::vector<std::string>{q.name} : q.original_names)
        if (std::find(before.begin(), before.end(), b) == before.end()) before.push_back(b);
    }
    if (!before.empty()) op.original_names = std::move(before);
  }
  return unknown;
}

std::string NameBeforeQuant(const FusionRule& record, const std::string& name) {
  auto r = record.by_name.find(name);
  if (r == record.by_name.end() || record.ops[r->second].original_names.empty()) return name;
  return record.ops[r->second].original_names.back();
}

}  // namespace npu::cmp
