#include "passes/fusion.h"
#include "base/json.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <span>
#include <nlohmann/json.hpp>

#include "base/file_io.h"
#include "base/log.h"
#include "ir/device_format.h"
#include "ir/graph_edit.h"
#include "kernels/kernel_util.h"
#include "ir/node_attrs.h"
#include "ops/shape.h"
#include "kernels/registry.h"

namespace npu {
namespace {

// ---- pattern helpers -------------------------------------------------------------------------------

// The node producing v if its kernel type is `type` and v feeds nothing else (so it can be absorbed).
int ExclusiveProducer(const Graph& g, int v, std::string_view type) {
  if (v < 0) return -1;
  int p = g.values[v].producer;
  if (p < 0 || g.nodes[p].op_type != type || SoleConsumer(g, v) < 0) return -1;
  return p;
}

// The single reader of v if its kernel type is `type`.
int OnlyReader(const Graph& g, int v, std::string_view type) {
  int c = v >= 0 ? SoleConsumer(g, v) : -1;
  return c >= 0 && g.nodes[c].op_type == type ? c : -1;
}

bool IsScalar(const Graph& g, int v, double want, double rel_tol = 1e-4) {
  auto s = ScalarConst(g, v);
  return s && std::fabs(*s - want) <= rel_tol * std::max(1.0, std::fabs(want));
}

// The other input of a binary node, given one of them.
int OtherInput(const Node& n, int known) {
  if (n.inputs.size() != 2) return -1;
  return n.inputs[0] == known ? n.inputs[1] : n.inputs[1] == known ? n.inputs[0] : -1;
}

// Absorbs `chain` (node indices, in graph order) into chain[0]: it keeps its place and name, takes the
// last node's outputs and every original name. The caller sets the fused node's type, inputs and attrs.
void Absorb(Graph& g, const std::vector<int>& chain, std::vector<bool>& dead) {
  Node& head = g.nodes[chain[0]];
  for (size_t i = 1; i < chain.size(); ++i) {
    const Node& n = g.nodes[chain[i]];
    for (const auto& name : n.original_names)
      if (std::find(head.original_names.begin(), head.original_names.end(), name) == head.original_names.end())
        head.original_names.push_back(name);
    dead[chain[i]] = true;
  }
  head.outputs = g.nodes[chain.back()].outputs;
}

// Runs `match` on every node; it returns the chain to absorb (empty for no match) after editing the head.
template <class Match>
Status FuseAll(Graph& g, const char* pass, Match match) {
  std::vector<bool> dead(g.nodes.size(), false);
  int fused = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (dead[k] || g.nodes[k].attr_list_has(kFusionOffAttr, pass)) continue;
    std::vector<int> chain = match(static_cast<int>(k), dead);
    if (chain.empty()) continue;
    Absorb(g, chain, dead);
    g.nodes[chain[0]].attr_list_add(kFusionPassesAttr, pass);
    ++fused;
  }
  EraseNodes(g, dead);
  NPU_LOG(kInfo, "FUSION", pass << ": " << fused << " fused");
  return SortTopologically(g);
}

bool AnyDead(const std::vector<int>& chain, const std::vector<bool>& dead) {
  return std::any_of(chain.begin(), chain.end(), [&](int k) { return k < 0 || dead[k]; });
}


// ---- graph fusion ------------------------------------------------------------------------------------

bool ConvWithConstWeights(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.inputs.size() < 2) return false;
  const Tensor* w = ConstantOf(g, n.inputs[1]);
  return w && w->dtype() == DType::kF32 && (n.inputs.size() < 3 || n.inputs[2] < 0 || ConstantOf(g, n.inputs[2]));
}

// BN(conv(x, W, b)) = conv(x, W * s, (b - mean) * s + beta) with s = scale / sqrt(var + eps), per output channel.
std::vector<int> MatchConvBatchnorm(Graph& g, int k, const std::vector<bool>& dead) {
  Node& conv = g.nodes[k];
  if (!ConvWithConstWeights(g, conv)) return {};
  int bn_i = OnlyReader(g, conv.outputs[0], "BatchNormalization");
  if (bn_i < 0 || dead[bn_i]) return {};
  const Node& bn = g.nodes[bn_i];
  if (bn.attr_int("training_mode", 0) != 0) return {};
  for (size_t j = 1; j < bn.outputs.size(); ++j)
    if (!Consumers(g, bn.outputs[j]).empty() || IsGraphOutput(g, bn.outputs[j])) return {};
  std::vector<const Tensor*> p;
  for (int j = 1; j <= 4; ++j)
    if (const Tensor* t = ConstantOf(g, bn.inputs[j]); t && IsFloat(t->dtype())) p.push_back(t);
  const Tensor& w = *ConstantOf(g, conv.inputs[1]);
  int64_t cout = w.shape()[0];
  if (p.size() != 4 || std::any_of(p.begin(), p.end(), [&](const Tensor* t) { return t->numel() != cout; })) return {};
  auto scale = p[0]->ToDoubleVector(), beta = p[1]->ToDoubleVector(), mean = p[2]->ToDoubleVector(), var = p[3]->ToDoubleVector();
  double eps = bn.attr_float("epsilon", 1e-5f);
  std::vector<double> bias(cout, 0.0);
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) bias = ConstantOf(g, conv.inputs[2])->ToDoubleVector();
  Tensor w2 = Tensor::Empty(DType::kF32, w.shape()), b2 = Tensor::Empty(DType::kF32, {cout});
  int64_t per = w.numel() / cout;
  for (int64_t c = 0; c < cout; ++c) {
    double s = scale[c] / std::sqrt(var[c] + eps);
    for (int64_t i = 0; i < per; ++i) w2.mutable_data<float>()[c * per + i] = static_cast<float>(w.data<float>()[c * per + i] * s);
    b2.mutable_data<float>()[c] = static_cast<float>((bias[c] - mean[c]) * s + beta[c]);
  }
  std::string base = conv.name + "_bn_folded";
  conv.inputs.resize(3);
  conv.inputs[1] = AddConstant(g, base + "_weight", std::move(w2));
  conv.inputs[2] = AddConstant(g, base + "_bias", std::move(b2));
  return {k, bn_i};
}

// Add(conv(x, W), c) with c per output channel becomes the conv's bias.
std::vector<int> MatchConvBiasAdd(Graph& g, int k, const std::vector<bool>& dead) {
  Node& conv = g.nodes[k];
  if (!ConvWithConstWeights(g, conv)) return {};
  int add_i = OnlyReader(g, conv.outputs[0], "Add");
  if (add_i < 0 || dead[add_i]) return {};
  int c = OtherInput(g.nodes[add_i], conv.outputs[0]);
  const Tensor* t = ConstantOf(g, c);
  int64_t cout = ConstantOf(g, conv.inputs[1])->shape()[0];
  if (!t || !IsFloat(t->dtype()) || t->numel() != cout || !g.values[conv.outputs[0]].has_shape) return {};
  // Only shapes that broadcast along the channel axis: [C,1,1] or [1,C,1,1] for a 4-D conv output.
  Shape s = t->shape();
  size_t rank = g.values[conv.outputs[0]].shape.size();
  if (rank < 2 || s.size() > rank || s.size() + 1 < rank) return {};
  size_t ch = s.size() + 1 - rank;  // the channel axis, right-aligned
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != (i == ch ? cout : 1)) return {};
  std::vector<double> add = t->ToDoubleVector(), bias(cout, 0.0);
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0) bias = ConstantOf(g, conv.inputs[2])->ToDoubleVector();
  Tensor b2 = Tensor::Empty(DType::kF32, {cout});
  for (int64_t i = 0; i < cout; ++i) b2.mutable_data<float>()[i] = static_cast<float>(bias[i] + add[i]);
  conv.inputs.resize(3);
  conv.inputs[2] = AddConstant(g, conv.name + "_bias_added", std::move(b2));
  return {k, add_i};
}

// MatMul(x, W) + b, with W a constant matrix and b one value per column, becomes MatMulBias.
std::vector<int> MatchMatMulBiasAdd(Graph& g, int k, const std::vector<bool>& dead) {
  Node& mm = g.nodes[k];
  const Tensor* w = mm.op_type == "MatMul" ? ConstantOf(g, mm.inputs[1]) : nullptr;
  if (!w || w->rank() != 2) return {};
  int add_i = OnlyReader(g, mm.outputs[0], "Add");
  if (add_i < 0 || dead[add_i]) return {};
  int b = OtherInput(g.nodes[add_i], mm.outputs[0]);
  const Tensor* bias = ConstantOf(g, b);
  if (!bias || bias->dtype() != w->dtype() || bias->numel() != w->shape()[1] || bias->shape().back() != w->shape()[1]) return {};
  mm.op_type = "MatMulBias";
  mm.inputs.push_back(bias->rank() == 1 ? b : AddConstant(g, g.values[b].name + "_row", bias->Reshaped({bias->numel()})));
  return {k, add_i};
}

// x * 0.5 * (1 + erf(x / sqrt(2))), as torch exports F.gelu: Div -> Erf -> Add(1) -> Mul(x) -> Mul(0.5).
std::vector<int> MatchGelu(Graph& g, int k, const std::vector<bool>& dead) {
  Node& div = g.nodes[k];
  if (div.op_type != "Div" || !IsScalar(g, div.inputs[1], std::sqrt(2.0))) return {};
  int x = div.inputs[0];
  int erf = OnlyReader(g, div.outputs[0], "Erf");
  int add = erf < 0 ? -1 : OnlyReader(g, g.nodes[erf].outputs[0], "Add");
  if (add < 0 || !IsScalar(g, OtherInput(g.nodes[add], g.nodes[erf].outputs[0]), 1.0)) return {};
  int mul1 = OnlyReader(g, g.nodes[add].outputs[0], "Mul");
  if (mul1 < 0) return {};
  std::vector<int> chain;
  int other = OtherInput(g.nodes[mul1], g.nodes[add].outputs[0]);
  if (other == x) {  // (x * (1 + erf)) * 0.5
    int mul2 = OnlyReader(g, g.nodes[mul1].outputs[0], "Mul");
    if (mul2 < 0 || !IsScalar(g, OtherInput(g.nodes[mul2], g.nodes[mul1].outputs[0]), 0.5)) return {};
    chain = {k, erf, add, mul1, mul2};
  } else {  // (x * 0.5) * (1 + erf), as HuggingFace's BERT writes it
    int half = other < 0 ? -1 : g.values[other].producer;
    if (half < 0 || g.nodes[half].op_type != "Mul" || OnlyReader(g, other, "Mul") != mul1) return {};
    const Node& h = g.nodes[half];
    if (h.inputs.size() != 2 || OtherInput(h, x) < 0 || !IsScalar(g, OtherInput(h, x), 0.5)) return {};
    chain = {k, erf, add, half, mul1};
  }
  if (AnyDead(chain, dead)) return {};
  div.op_type = div.ascend_type = "Gelu";
  div.inputs = {x};
  div.attrs.clear();
  return chain;
}

// The node producing v if it is a Mul of v's producer input `x` by a scalar near `c` (either operand order).
int ScaledBy(const Graph& g, int v, double c) {
  int p = v >= 0 ? g.values[v].producer : -1;
  if (p < 0 || g.nodes[p].op_type != "Mul" || g.nodes[p].inputs.size() != 2) return -1;
  const Node& m = g.nodes[p];
  return IsScalar(g, m.inputs[0], c) || IsScalar(g, m.inputs[1], c) ? p : -1;
}
int Unscaled(const Graph& g, int mul) {
  const Node& m = g.nodes[mul];
  return ScalarConst(g, m.inputs[0]) ? m.inputs[1] : m.inputs[0];
}

// x^3 as Pow(x, 3), Mul(x, Mul(x, x)) or Mul(Mul(x, x), x): the nodes, or empty.
std::vector<int> CubeOf(const Graph& g, int v, int x) {
  int p = v >= 0 ? g.values[v].producer : -1;
  if (p < 0 || SoleConsumer(g, v) < 0) return {};
  const Node& n = g.nodes[p];
  if (n.op_type == "Pow" && n.inputs.size() == 2 && n.inputs[0] == x && IsScalar(g, n.inputs[1], 3.0)) return {p};
  if (n.op_type != "Mul" || n.inputs.size() != 2) return {};
  int square = OtherInput(n, x);
  int q = square >= 0 && SoleConsumer(g, square) >= 0 ? g.values[square].producer : -1;
  if (q < 0 || g.nodes[q].op_type != "Mul" || g.nodes[q].inputs != std::vector<int>{x, x}) return {};
  return {q, p};
}

// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), as torch exports gelu(approximate="tanh") and GPT-2's
// gelu_new: ONNX opset 20's Gelu with approximate="tanh" (CANN's Gelu computes this form), one pass for nine.
std::vector<int> MatchGeluTanh(Graph& g, int k, const std::vector<bool>& dead) {
  const Node& tanh = g.nodes[k];
  if (tanh.op_type != "Tanh" || tanh.inputs.size() != 1) return {};
  int outer = ScaledBy(g, tanh.inputs[0], std::sqrt(2.0 / std::numbers::pi));
  if (outer < 0 || SoleConsumer(g, tanh.inputs[0]) != k) return {};
  int sum_v = Unscaled(g, outer), sum = sum_v >= 0 && SoleConsumer(g, sum_v) == outer ? g.values[sum_v].producer : -1;
  if (sum < 0 || g.nodes[sum].op_type != "Add" || g.nodes[sum].inputs.size() != 2) return {};
  std::vector<int> chain;
  int x = -1;
  for (int cand : g.nodes[sum].inputs) {  // x + 0.044715 * x^3, either order
    int inner = ScaledBy(g, OtherInput(g.nodes[sum], cand), 0.044715);
    if (inner < 0 || SoleConsumer(g, g.nodes[inner].outputs[0]) != sum) continue;
    std::vector<int> cube = CubeOf(g, Unscaled(g, inner), cand);
    if (cube.empty()) continue;
    x = cand;
    chain = cube;
    chain.insert(chain.end(), {inner, sum, outer, k});
    break;
  }
  if (x < 0) return {};
  int plus1 = OnlyReader(g, tanh.outputs[0], "Add");
  if (plus1 < 0 || !IsScalar(g, OtherInput(g.nodes[plus1], tanh.outputs[0]), 1.0)) return {};
  int mul = OnlyReader(g, g.nodes[plus1].outputs[0], "Mul");
  if (mul < 0) return {};
  int other = OtherInput(g.nodes[mul], g.nodes[plus1].outputs[0]);
  chain.insert(chain.end(), {plus1, mul});
  if (other == x) {  // (x * (1 + tanh)) * 0.5
    int half = OnlyReader(g, g.nodes[mul].outputs[0], "Mul");
    if (half < 0 || !IsScalar(g, OtherInput(g.nodes[half], g.nodes[mul].outputs[0]), 0.5)) return {};
    chain.push_back(half);
  } else {  // (0.5 * x) * (1 + tanh)
    int half = ScaledBy(g, other, 0.5);
    if (half < 0 || Unscaled(g, half) != x || SoleConsumer(g, other) != mul) return {};
    chain.push_back(half);
  }
  std::sort(chain.begin(), chain.end());  // graph order: the last one computes the result
  if (AnyDead(chain, dead)) return {};
  Node& head = g.nodes[chain.front()];
  head.op_type = head.ascend_type = "Gelu";
  head.opset = std::max(head.opset, 20);
  head.inputs = {x};
  head.attrs = {{"approximate", std::string("tanh")}};
  return chain;
}

// x * HardSigmoid(x; 1/6, 1/2), as torch exports nn.Hardswish below opset 14, becomes the HardSwish op
// (ONNX opset 14's definition): one op, so a conv before it can take it as its epilogue.
std::vector<int> MatchHardSwish(Graph& g, int k, const std::vector<bool>& dead) {
  Node& hs = g.nodes[k];
  if (hs.op_type != "HardSigmoid" || hs.inputs.size() != 1) return {};
  constexpr double kTol = 1e-6;
  if (std::fabs(hs.attr_float("alpha", 0.2f) - 1.0 / 6) > kTol || std::fabs(hs.attr_float("beta", 0.5f) - 0.5) > kTol) return {};
  int x = hs.inputs[0];
  int mul = OnlyReader(g, hs.outputs[0], "Mul");
  if (mul < 0 || dead[mul] || OtherInput(g.nodes[mul], hs.outputs[0]) != x) return {};
  hs.op_type = hs.ascend_type = "HardSwish";
  hs.opset = std::max(hs.opset, 14);
  hs.attrs.erase("alpha");
  hs.attrs.erase("beta");
  return {k, mul};
}

// A constant-zero Pad of the spatial axes only, as its read's own padding: a Conv pads with zeros, and an
// AveragePool that counts the padding in its divisor (count_include_pad) averages the same zeros. torch exports
// avg_pool2d(padding=p) as Pad + AveragePool, TensorFlow's explicit padding as Pad + Conv; fused, the padded
// copy is never written (inception_v3: 9 Pad tasks of a 35x35 to 8x8 map each). The fused node takes the
// window op's name and type, and the Pad's names join its original names.
std::vector<int> MatchPadIntoWindow(Graph& g, int k, const std::vector<bool>& dead) {
  const Node& pad = g.nodes[k];
  if (pad.op_type != "Pad" || pad.inputs.empty() || pad.attr_string("mode", "constant") != "constant") return {};
  const Value& x = g.values[pad.inputs[0]];
  if (!x.has_shape || x.shape.size() < 3 || !IsFloat(x.dtype)) return {};
  auto input = [&](size_t i) { return pad.inputs.size() > i && pad.inputs[i] >= 0 ? pad.inputs[i] : -1; };
  if (input(2) >= 0 ? !IsScalar(g, input(2), 0.0, 0.0) : pad.attr_float("value", 0.f) != 0.f) return {};
  const Tensor* pads_in = input(1) >= 0 ? ConstantOf(g, input(1)) : nullptr;
  const Tensor* axes_in = input(3) >= 0 ? ConstantOf(g, input(3)) : nullptr;
  if ((input(1) >= 0 && !pads_in) || (input(3) >= 0 && !axes_in)) return {};
  auto p = PadFor(pad, x.shape, pads_in, axes_in);
  if (!p.ok()) return {};
  const size_t rank = x.shape.size(), spatial = rank - 2;
  for (size_t d = 0; d < rank; ++d)
    if (d < 2 ? p->begin[d] != 0 || p->end[d] != 0 : p->begin[d] < 0 || p->end[d] < 0) return {};
  int c = SoleConsumer(g, pad.outputs[0]);
  if (c < 0 || dead[c] || g.nodes[c].inputs.empty() || g.nodes[c].inputs[0] != pad.outputs[0]) return {};
  const Node& window = g.nodes[c];
  if (window.op_type != "Conv" && window.op_type != "AveragePool") return {};
  if (window.attr_string("auto_pad", "NOTSET") != "NOTSET") return {};
  std::vector<int64_t> pads = window.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (pads.size() != 2 * spatial) return {};
  if (window.op_type == "AveragePool") {
    // Excluded padding would change the divisor at the edges; ceil_mode's extra windows never count padding.
    bool window_pads = std::any_of(pads.begin(), pads.end(), [](int64_t v) { return v != 0; });
    if ((window_pads && window.attr_int("count_include_pad", 0) == 0) || window.attr_int("ceil_mode", 0) != 0) return {};
  }
  for (size_t d = 0; d < spatial; ++d) {
    pads[d] += p->begin[d + 2];
    pads[d + spatial] += p->end[d + 2];
  }
  Node fused = window;
  fused.inputs[0] = pad.inputs[0];
  fused.original_names = pad.original_names;
  fused.attrs["pads"] = pads;
  if (fused.op_type == "AveragePool") fused.attrs["count_include_pad"] = int64_t{1};
  g.nodes[k] = std::move(fused);
  return {k, c};
}

// ReduceMean(x) -> Sub -> Pow(2) -> ReduceMean -> Add(eps) -> Sqrt -> Div -> Mul(gamma) -> Add(beta) over the
// last axis, as torch exports nn.LayerNorm below opset 17.
std::vector<int> MatchLayerNorm(Graph& g, int k, const std::vector<bool>& dead) {
  Node& mean = g.nodes[k];
  if (mean.op_type != "ReduceMean" || mean.attr_ints("axes") != std::vector<int64_t>{-1} || mean.attr_int("keepdims", 1) != 1) return {};
  int x = mean.inputs[0];
  auto readers = Consumers(g, mean.outputs[0]);
  if (readers.size() != 1 || g.nodes[readers[0]].op_type != "Sub" || g.nodes[readers[0]].inputs[0] != x) return {};
  int sub = readers[0];
  auto sub_readers = Consumers(g, g.nodes[sub].outputs[0]);  // Pow and Div
  if (sub_readers.size() != 2) return {};
  int pow = -1, div = -1;
  for (int r : sub_readers) {
    if (g.nodes[r].op_type == "Pow") pow = r;
    if (g.nodes[r].op_type == "Div") div = r;
  }
  if (pow < 0 || div < 0 || !IsScalar(g, g.nodes[pow].inputs[1], 2.0) || g.nodes[div].inputs[0] != g.nodes[sub].outputs[0]) return {};
  int var = OnlyReader(g, g.nodes[pow].outputs[0], "ReduceMean");
  if (var < 0 || g.nodes[var].attr_ints("axes") != std::vector<int64_t>{-1}) return {};
  int add_eps = OnlyReader(g, g.nodes[var].outputs[0], "Add");
  auto eps = add_eps < 0 ? std::nullopt : ScalarConst(g, OtherInput(g.nodes[add_eps], g.nodes[var].outputs[0]));
  int sqrt = eps ? OnlyReader(g, g.nodes[add_eps].outputs[0], "Sqrt") : -1;
  if (sqrt < 0 || OnlyReader(g, g.nodes[sqrt].outputs[0], "Div") != div) return {};
  int mul = OnlyReader(g, g.nodes[div].outputs[0], "Mul");
  int add = mul < 0 ? -1 : OnlyReader(g, g.nodes[mul].outputs[0], "Add");
  if (add < 0) return {};
  int gamma = OtherInput(g.nodes[mul], g.nodes[div].outputs[0]), beta = OtherInput(g.nodes[add], g.nodes[mul].outputs[0]);
  if (!ConstantOf(g, gamma) || !ConstantOf(g, beta)) return {};
  std::vector<int> chain = {k, sub, pow, var, add_eps, sqrt, div, mul, add};
  std::sort(chain.begin(), chain.end());
  if (chain[0] != k || AnyDead(chain, dead)) return {};
  mean.op_type = "LayerNormalization";
  mean.ascend_type = "LayerNorm";
  mean.opset = 17;
  mean.inputs = {x, gamma, beta};
  mean.attrs = {{"axis", int64_t{-1}}, {"epsilon", static_cast<float>(*eps)}};
  return chain;
}

// Exp(x [- ReduceMax(x)]) / ReduceSum(Exp(..)) over one axis (keepdims) is a softmax along that axis.
std::vector<int> MatchSoftmax(Graph& g, int k, const std::vector<bool>& dead) {
  Node& exp = g.nodes[k];
  if (exp.op_type != "Exp") return {};
  auto readers = Consumers(g, exp.outputs[0]);
  if (readers.size() != 2 || IsGraphOutput(g, exp.outputs[0])) return {};
  int sum = -1, div = -1;
  for (int r : readers) {
    if (g.nodes[r].op_type == "ReduceSum") sum = r;
    if (g.nodes[r].op_type == "Div") div = r;
  }
  if (sum < 0 || div < 0 || g.nodes[div].inputs != std::vector<int>{exp.outputs[0], g.nodes[sum].outputs[0]}) return {};
  const Node& s = g.nodes[sum];
  std::vector<int64_t> axes = s.inputs.size() > 1 && ConstantOf(g, s.inputs[1]) ? ConstantOf(g, s.inputs[1])->ToInt64Vector() : s.attr_ints("axes");
  if (axes.size() != 1 || s.attr_int("keepdims", 1) != 1) return {};
  std::vector<int> chain = {k, sum, div};
  int x = exp.inputs[0];
  // The max-subtraction torch and hand-written exports add for stability belongs to the same softmax.
  int sub = ExclusiveProducer(g, x, "Sub");
  if (sub >= 0) {
    int max = g.values[g.nodes[sub].inputs[1]].producer;
    if (max >= 0 && g.nodes[max].op_type == "ReduceMax" && g.nodes[max].inputs[0] == g.nodes[sub].inputs[0] &&
        SoleConsumer(g, g.nodes[max].outputs[0]) == sub) {
      x = g.nodes[sub].inputs[0];
      chain.insert(chain.begin(), {max, sub});
    }
  }
  std::sort(chain.begin(), chain.end());
  if (AnyDead(chain, dead)) return {};
  Node& head = g.nodes[chain[0]];
  head.op_type = "Softmax";
  head.ascend_type = "SoftmaxV2";
  head.opset = 13;
  head.inputs = {x};
  head.attrs = {{"axis", axes[0]}};
  return chain;
}

// ---- UB fusion ---------------------------------------------------------------------------------------

// Elementwise activations a cube op can apply on its way out of the core (types as the kernels name them, but
// Relu6: TensorFlow's, a Clip whose Ascend IR type is Relu6, as UbActivationType below names it).
constexpr std::string_view kUbActivations[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Swish", "Elu", "Clip", "Relu6", "Gelu"};
// A matrix product takes fewer, in one of two UB fusions, each with its own list of the element-wise op types it
// fuses; of the activations above:
// - TbeBatchMatmulElementWiseFusionPass (CANN's UB fusion reference, Atlas inference products: FusedMulAdd, Add, Div,
//   RealDiv, Relu, ReluGrad): Relu.
// - TbeFullyconnectionElemwiseFusionPass (canndev 2022, ops/built-in/fusion_pass/buffer_fusion/ub_fusion/ai_core/
//   matmul/tbe_fullyconnection_elemwise_fusion_pass.cc, elemWiseWhiteList, for MatMul/MatMulV2/BatchMatMul/
//   BatchMatMulV2): Relu, LeakyRelu, Sigmoid, Tanh, Elu, Gelu, Relu6 (TensorFlow's; a real A3C .om of CANN's has its
//   MatMulV2 + Relu6 as one task: tests/frontends/test_tensorflow.py).
// Neither takes HardSwish, HardSigmoid, Swish or ClipByValue (ONNX Clip): after a product, those run as tasks of their own.
constexpr std::string_view kBatchMatmulElemwiseActivations[] = {"Relu"};
constexpr std::string_view kFullyconnectionActivations[] = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Gelu", "Relu6"};

// An activation's type as those lists name it: TensorFlow's Relu6 is a Clip here (frontend/tf/tf_ops.cc), Ascend IR's
// Relu6 there, and an ONNX Clip is CANN's ClipByValue.
std::string_view UbActivationType(const Node& act) {
  if (act.op_type == "Clip" && act.ascend_type == "Relu6") return "Relu6";
  return act.op_type;
}

// A depthwise conv: one input channel per group (CANN's DepthwiseConv2D).
bool IsDepthwiseConv(const Graph& g, const Node& n) {
  if (n.op_type != "Conv" || n.inputs.size() < 2 || n.inputs[1] < 0) return false;
  const Value& w = g.values[n.inputs[1]];
  return n.attr_int("group", 1) > 1 && w.has_shape && w.shape.size() == 4 && w.shape[1] == 1;
}

// A Relu, or a LeakyRelu of slope 0: the one activation CANN fuses into a DepthwiseConv2D.
bool IsZeroSlopeRelu(const Node& act) { return act.op_type == "Relu" || (act.op_type == "LeakyRelu" && act.attr_float("alpha", 0.01f) == 0.0f); }

std::vector<int> MatchUbActivation(Graph& g, int k, const std::vector<bool>& dead, std::initializer_list<std::string_view> producers,
                                   std::span<const std::string_view> activations = kUbActivations) {
  Node& op = g.nodes[k];
  if (std::find(producers.begin(), producers.end(), op.op_type) == producers.end() || op.has_attr(kEpilogueOp)) return {};
  int act_i = SoleConsumer(g, op.outputs[0]);
  if (act_i < 0 || dead[act_i]) return {};
  const Node& act = g.nodes[act_i];
  if (std::find(activations.begin(), activations.end(), UbActivationType(act)) == activations.end()) return {};
  // TbeDepthwiseConvElemwiseFusionPass (CANN's UB fusion reference, Atlas inference and training products): "the
  // ElementWise type supports only LeakyRelu, and the coefficient is 0". A depthwise conv's HardSwish, Clip
  // (ReLU6), Sigmoid or Swish is a task of its own.
  if (IsDepthwiseConv(g, op) && !IsZeroSlopeRelu(act)) return {};
  // A UB fusion never crosses a dtype change: an activation precision put in another dtype runs as its own task.
  if (g.values[act.outputs[0]].dtype != g.values[op.outputs[0]].dtype) return {};
  const std::optional<Node> one_input = ClipWithBoundAttributes(g, act);  // a Clip's bound inputs as attributes
  if (!one_input || one_input->inputs.size() != 1) return {};
  AttrMap epilogue;
  for (const auto& [key, v] : one_input->attrs) epilogue[kEpilogueAttrPrefix + key] = v;
  op.attrs[kEpilogueOp] = act.op_type;
  op.attrs[kEpilogueOpset] = int64_t{one_input->opset};
  op.attrs.insert(epilogue.begin(), epilogue.end());
  return {k, act_i};
}

// Conv -> Add(other tensor of the same shape) [-> Relu]: the residual joins the conv's epilogue, as CANN's
// conv UB fusions take "Add then Relu" or one elementwise op with another input (TbeConv3dElemwisePass
// documents the patterns; the Conv2D fusion follows them).
std::vector<int> MatchConvResidual(Graph& g, int k, const std::vector<bool>& dead) {
  Node& conv = g.nodes[k];
  if (conv.op_type != "Conv" || conv.has_attr(kEpilogueOp) || conv.has_attr(kEpilogueResidualInput)) return {};
  int out = conv.outputs[0];
  int add_i = SoleConsumer(g, out);
  if (add_i < 0 || dead[add_i] || g.nodes[add_i].op_type != "Add" || g.nodes[add_i].inputs.size() != 2) return {};
  const Node& add = g.nodes[add_i];
  int residual = OtherInput(add, out);
  if (residual < 0 || residual == out) return {};
  const Value &r = g.values[residual], &o = g.values[out];
  if (!r.has_shape || !o.has_shape || r.shape != o.shape || r.dtype != o.dtype) return {};
  std::vector<int> chain = {k, add_i};
  int relu = SoleConsumer(g, add.outputs[0]);
  if (relu >= 0 && !dead[relu] && g.nodes[relu].op_type == "Relu" && g.values[g.nodes[relu].outputs[0]].dtype == o.dtype) chain.push_back(relu);
  conv.inputs.resize(3, -1);  // the bias slot stays (empty when the conv has none)
  conv.inputs.push_back(residual);
  conv.attrs[kEpilogueResidualInput] = int64_t{3};
  if (chain.size() == 3) {
    conv.attrs[kEpilogueOp] = std::string("Relu");
    conv.attrs[kEpilogueOpset] = int64_t{14};
  }
  return chain;
}

bool IsQuantizableCube(const Node& n) {
  return n.op_type == "Conv" || n.op_type == "ConvTranspose" || n.op_type == "Gemm" || n.op_type == "MatMul";
}

// A quantized Conv/ConvTranspose/Gemm/MatMul (int32 result) -> AscendDequant (constant scale) [-> Add (a constant bias per
// output column)] [-> Relu] [-> AscendQuant]: the cube
// op dequantizes on its way out (v200 deq_cast in the UB, 910B's fixpipe), the Relu as the dequant's relu_flag,
// and quantizes for the next layer, as CANN's quant fusion passes do (TbeConvDequantQuantFusionPass for convs;
// npukit applies the same to ConvTranspose, Gemm and MatMul). Attributes: ir/node_attrs.h kDequantPrefix / kRequantPrefix.
std::vector<int> MatchDequantQuant(Graph& g, int k, const std::vector<bool>& dead) {
  Node& op = g.nodes[k];
  if (!IsQuantizableCube(op) || op.outputs.empty() || g.values[op.outputs[0]].dtype != DType::kI32 ||
      op.has_attr(std::string(kDequantPrefix) + "scale"))
    return {};
  const int d = SoleConsumer(g, op.outputs[0]);
  if (d < 0 || dead[d] || g.nodes[d].op_type != "AscendDequant" || g.nodes[d].inputs.size() != 2 || g.nodes[d].inputs[0] != op.outputs[0]) return {};
  const Node& dequant = g.nodes[d];
  const Tensor* scale = ConstantOf(g, dequant.inputs[1]);
  if (!scale) return {};
  std::vector<int> chain = {k, d};
  AttrMap attrs;
  for (const char* a : {"relu_flag", "sqrt_mode", "dtype"}) attrs[std::string(kDequantPrefix) + a] = dequant.attr_int(a, 0);
  attrs[std::string(kDequantPrefix) + "scale"] = *scale;
  int last = dequant.outputs[0];
  // A MatMul's float bias after its dequant (a transformer's projection): added in the dequant's dtype, as the
  // separate Add does.
  if (const int a = SoleConsumer(g, last); a >= 0 && !dead[a] && g.nodes[a].op_type == "Add" && g.nodes[a].inputs.size() == 2) {
    const int other = OtherInput(g.nodes[a], last);
    const Tensor* bias = ConstantOf(g, other);
    const Value& out = g.values[last];
    if (bias && other != last && bias->dtype() == out.dtype && out.has_shape && !out.shape.empty() && bias->numel() == out.shape.back() &&
        bias->shape().back() == out.shape.back() && g.values[g.nodes[a].outputs[0]].dtype == out.dtype) {
      attrs[std::string(kDequantPrefix) + "bias"] = bias->Reshaped({bias->numel()});
      chain.push_back(a);
      last = g.nodes[a].outputs[0];
    }
  }
  const int r = SoleConsumer(g, last);
  if (r >= 0 && !dead[r] && g.nodes[r].op_type == "Relu" && !dequant.attr_int("sqrt_mode", 0) &&
      g.values[g.nodes[r].outputs[0]].dtype == g.values[last].dtype) {
    attrs[std::string(kDequantPrefix) + "relu_flag"] = int64_t{1};  // relu after the scale, as the dequant's own flag
    chain.push_back(r);
    last = g.nodes[r].outputs[0];
  }
  const int q = SoleConsumer(g, last);
  if (q >= 0 && !dead[q] && g.nodes[q].op_type == "AscendQuant") {
    const Node& quant = g.nodes[q];
    for (const char* a : {"scale", "offset"}) attrs[std::string(kRequantPrefix) + a] = quant.attr_float(a, a == std::string("scale") ? 1.0f : 0.0f);
    attrs[std::string(kRequantPrefix) + "sqrt_mode"] = quant.attr_int("sqrt_mode", 0);
    attrs[std::string(kRequantPrefix) + "round_mode"] = quant.attr_string("round_mode", "Round");
    chain.push_back(q);
  }
  op.attrs.insert(attrs.begin(), attrs.end());
  return chain;
}

// A cube op with a fused dequant (and, by TbeConvElemwiseFusionPass, a residual Add and activation) whose float
// result is read both in float and by an AscendQuant (a residual block's output: the next block quantizes it,
// the skip path reads it in float): the op also writes the quantized result, as a second output, as CANN's
// TbeConvDequantVaddReluQuantFusionPass does (ir/node_attrs.h kDualQuantOutput). Other AscendQuants of the same
// result with the same factors read that output too.
bool SameQuant(const Node& a, const Node& b) {
  return a.attr_float("scale", 1.0f) == b.attr_float("scale", 1.0f) && a.attr_float("offset", 0.0f) == b.attr_float("offset", 0.0f) &&
         a.attr_int("sqrt_mode", 0) == b.attr_int("sqrt_mode", 0) && a.attr_string("round_mode", "Round") == b.attr_string("round_mode", "Round") &&
         a.attr_string("dst_type", "INT8") == b.attr_string("dst_type", "INT8");
}

std::vector<int> MatchDualQuant(Graph& g, int k, const std::vector<bool>& dead) {
  Node& op = g.nodes[k];
  if (!IsQuantizableCube(op) || op.outputs.size() != 1 ||
      !op.has_attr(std::string(kDequantPrefix) + "scale") || op.has_attr(std::string(kRequantPrefix) + "scale"))
    return {};
  const int y = op.outputs[0];
  std::vector<int> quants;
  for (int q : Consumers(g, y))
    if (!dead[q] && g.nodes[q].op_type == "AscendQuant" && g.nodes[q].inputs[0] == y && g.nodes[q].outputs.size() == 1) quants.push_back(q);
  if (quants.empty()) return {};
  Node& kept = g.nodes[quants[0]];
  std::vector<int> chain = {k};
  for (size_t j = 1; j < quants.size(); ++j) {
    const Node& twin = g.nodes[quants[j]];
    if (!SameQuant(twin, kept) || IsGraphOutput(g, twin.outputs[0])) continue;
    ReplaceAllUses(g, twin.outputs[0], kept.outputs[0]);
    chain.push_back(quants[j]);
  }
  const std::string req = kRequantPrefix;
  op.attrs[req + "scale"] = kept.attr_float("scale", 1.0f);
  op.attrs[req + "offset"] = kept.attr_float("offset", 0.0f);
  op.attrs[req + "sqrt_mode"] = kept.attr_int("sqrt_mode", 0);
  op.attrs[req + "round_mode"] = kept.attr_string("round_mode", "Round");
  op.attrs[kDualQuantOutput] = int64_t{1};
  kept.outputs.insert(kept.outputs.begin(), y);  // Absorb gives the head the last node's outputs: (float, int8)
  chain.push_back(quants[0]);
  return chain;
}

// Reshape -> Transpose (or Transpose -> Reshape) on static shapes becomes one ConfusionTransposeD: on the
// device it moves whole FRACTAL_NZ fractals, so a transformer's head split and merge stay in NZ instead of
// leaving it for ND and coming back (passes/formats.cc).
// Reshape (N, C, ...) -> (N, g, C/g, ...), swap axes 1 and 2, Reshape back: ShuffleNet's channel shuffle, as
// torch exports it, becomes Ascend IR's ShuffleChannel (one pass over the map instead of a transposed copy between
// two reshapes; the host permutes each pixel's channel vector where the convs keep it channels-last).
std::vector<int> MatchShuffleChannel(Graph& g, int k, const std::vector<bool>& dead) {
  Node& split = g.nodes[k];
  if (split.op_type != "Reshape") return {};
  int t = OnlyReader(g, split.outputs[0], "Transpose");
  int merge = t < 0 ? -1 : OnlyReader(g, g.nodes[t].outputs[0], "Reshape");
  if (merge < 0 || AnyDead({t, merge}, dead) || g.nodes[t].has_attr(kLayoutTransposeAttr)) return {};
  const Value& x = g.values[split.inputs[0]];
  const Value& grouped = g.values[split.outputs[0]];
  const Value& y = g.values[g.nodes[merge].outputs[0]];
  if (!x.has_shape || !grouped.has_shape || !y.has_shape || x.shape != y.shape || x.shape.size() < 2) return {};
  if (NumElements(x.shape) < 0 || grouped.shape.size() != x.shape.size() + 1) return {};
  const int64_t group = grouped.shape[1];
  if (group < 1 || grouped.shape[0] != x.shape[0] || group * grouped.shape[2] != x.shape[1]) return {};
  if (!std::equal(x.shape.begin() + 2, x.shape.end(), grouped.shape.begin() + 3)) return {};
  std::vector<int64_t> swap12(grouped.shape.size());
  for (size_t d = 0; d < swap12.size(); ++d) swap12[d] = static_cast<int64_t>(d);
  std::swap(swap12[1], swap12[2]);
  if (g.nodes[t].attr_ints("perm") != swap12) return {};
  split.op_type = split.ascend_type = "ShuffleChannel";
  split.inputs.resize(1);
  split.attrs = {{"group", group}};
  return {k, t, merge};
}

std::vector<int> MatchConfusionTranspose(Graph& g, int k, const std::vector<bool>& dead) {
  const Node& head = g.nodes[k];
  bool transpose_first = head.op_type == "Transpose";
  if (head.op_type != "Reshape" && !transpose_first) return {};
  int next = OnlyReader(g, head.outputs[0], transpose_first ? "Reshape" : "Transpose");
  if (next < 0 || dead[next]) return {};
  const Node& transpose = transpose_first ? head : g.nodes[next];
  if (transpose.has_attr(kLayoutTransposeAttr)) return {};  // the Formats pass makes it part of a TransData
  const Value& x = g.values[head.inputs[0]];
  const Value& reshaped = g.values[(transpose_first ? g.nodes[next] : head).outputs[0]];
  const Value& permuted_in = g.values[transpose.inputs[0]];
  if (!x.has_shape || !reshaped.has_shape || NumElements(x.shape) < 0 || NumElements(reshaped.shape) < 0) return {};
  std::vector<int64_t> perm = transpose.attr_ints("perm");
  if (perm.empty())  // ONNX's default: reverse the dims
    for (int64_t d = static_cast<int64_t>(permuted_in.shape.size()) - 1; d >= 0; --d) perm.push_back(d);
  AttrMap attrs = {{"perm", perm}, {"shape", reshaped.shape}, {"transpose_first", int64_t{transpose_first}}};
  Node& fused = g.nodes[k];
  fused.op_type = "ConfusionTranspose";
  fused.ascend_type = "ConfusionTransposeD";
  fused.inputs.resize(1);
  fused.attrs = std::move(attrs);
  return {k, next};
}

}  // namespace

Status ConfusionTransposeFusionPass(Graph& g) {
  return FuseAll(g, "ReshapeTransposeFusionPass", [&](int k, auto& d) { return MatchConfusionTranspose(g, k, d); });
}
Status ConvBatchnormFusionPass(Graph& g) { return FuseAll(g, "ConvBatchnormFusionPass", [&](int k, auto& d) { return MatchConvBatchnorm(g, k, d); }); }
Status ConvBiasAddFusionPass(Graph& g) { return FuseAll(g, "AABiasaddConvFusion", [&](int k, auto& d) { return MatchConvBiasAdd(g, k, d); }); }
Status MatMulBiasAddFusionPass(Graph& g) { return FuseAll(g, "MatMulBiasAddFusionPass", [&](int k, auto& d) { return MatchMatMulBiasAdd(g, k, d); }); }
Status GeluONNXFusionPass(Graph& g) {
  return FuseAll(g, "GeluONNXFusionPass", [&](int k, auto& d) {
    std::vector<int> chain = MatchGelu(g, k, d);
    return chain.empty() ? MatchGeluTanh(g, k, d) : chain;
  });
}
Status HardSwishFusionPass(Graph& g) { return FuseAll(g, "HardSwishFusionPass", [&](int k, auto& d) { return MatchHardSwish(g, k, d); }); }
Status ShuffleChannelFusionPass(Graph& g) {
  return FuseAll(g, "ShuffleChannelFusionPass", [&](int k, auto& d) { return MatchShuffleChannel(g, k, d); });
}
Status PadWindowFusionPass(Graph& g) { return FuseAll(g, "PadWindowFusionPass", [&](int k, auto& d) { return MatchPadIntoWindow(g, k, d); }); }
Status LayerNormONNXFusionPass(Graph& g) { return FuseAll(g, "LayerNormONNXFusionPass", [&](int k, auto& d) { return MatchLayerNorm(g, k, d); }); }
Status SoftmaxFusionPass(Graph& g) { return FuseAll(g, "SoftmaxFusionPass", [&](int k, auto& d) { return MatchSoftmax(g, k, d); }); }
Status ConvElemwiseUbFusionPass(Graph& g) {
  NPU_RETURN_IF_ERROR(FuseAll(g, "TbeConvElemwiseFusionPass", [&](int k, auto& d) {
    std::vector<int> chain = MatchConvResidual(g, k, d);
    return chain.empty() ? MatchUbActivation(g, k, d, {"Conv", "ConvTranspose"}) : chain;
  }));
  return SortTopologically(g);  // a residual may come from a node after the conv
}
Status ConvDequantQuantUbFusionPass(Graph& g) {
  return FuseAll(g, "TbeConvDequantQuantFusionPass", [&](int k, auto& d) { return MatchDequantQuant(g, k, d); });
}
Status ConvDequantVaddReluQuantUbFusionPass(Graph& g) {
  return FuseAll(g, "TbeConvDequantVaddReluQuantFusionPass", [&](int k, auto& d) { return MatchDualQuant(g, k, d); });
}
// A matrix product and the activation after it, in the pass named `pass` that fuses those `activations`.
static Status MatMulActivationUbFusion(Graph& g, const char* pass, std::span<const std::string_view> activations) {
  return FuseAll(g, pass, [&](int k, auto& d) { return MatchUbActivation(g, k, d, {"MatMul", "MatMulBias", "Gemm"}, activations); });
}
Status MatMulElemwiseUbFusionPass(Graph& g) {
  return MatMulActivationUbFusion(g, "TbeBatchMatmulElementWiseFusionPass", kBatchMatmulElemwiseActivations);
}
Status FullyconnectionElemwiseUbFusionPass(Graph& g) {
  return MatMulActivationUbFusion(g, "TbeFullyconnectionElemwiseFusionPass", kFullyconnectionActivations);
}

Status EltwiseUbFusionPass(Graph& g) {
  return FuseAll(g, "TbeEltwiseFusionPass", [&](int k, auto& d) { return MatchUbActivation(g, k, d, {"Add", "Sub", "Mul", "BatchNormalization"}); });
}

// ConvConcatFusionPass (CANN's graph fusion reference): a StridedWrite after each Conv2D writes its output straight
// into its C slice of the concat's NC1HWC0 buffer, so the ConcatD runs no task even at batch > 1, where the slices
// are not contiguous. CANN's restrictions: static shapes, and every input but the last has C a multiple of C0.
// CANN inserts StridedWrite among its graph fusions and UB-fuses it into the conv; npukit decides it after UB
// fusion, where each conv has taken its activation, so every input must come straight from a conv that only the
// concat reads. The mark is the pass name on the concat; the cost model (cost/work.cc) charges it nothing when the
// concat is in NC1HWC0.
std::vector<int> MatchConvConcat(Graph& g, int k) {
  const Node& cat = g.nodes[k];
  if (cat.op_type != "Concat" || cat.inputs.size() < 2 || cat.outputs.empty()) return {};
  const Value& y = g.values[cat.outputs[0]];
  if (!y.has_shape || y.shape.size() != 4 || NormalizeAxis(cat.attr_int("axis", 0), 4) != 1) return {};
  const int64_t c0 = CubeC0(DTypeSize(y.dtype));
  for (size_t j = 0; j < cat.inputs.size(); ++j) {
    const int v = cat.inputs[j];
    if (v < 0 || !g.values[v].has_shape || g.values[v].shape.size() != 4 || SoleConsumer(g, v) != k) return {};
    const int p = g.values[v].producer;
    if (p < 0 || g.nodes[p].op_type != "Conv") return {};
    if (j + 1 < cat.inputs.size() && g.values[v].shape[1] % c0 != 0) return {};
  }
  return {k};
}

Status ConvConcatFusionPass(Graph& g) { return FuseAll(g, "ConvConcatFusionPass", [&](int k, auto&) { return MatchConvConcat(g, k); }); }

// BatchNorm with constant statistics is inference-only: CANN retypes it BNInference (nothing else changes).
Status BatchNormBnInferFusionPass(Graph& g) {
  for (Node& n : g.nodes)
    if (n.op_type == "BatchNormalization" && n.attr_int("training_mode", 0) == 0 &&
        std::all_of(n.inputs.begin() + 1, n.inputs.end(), [&](int v) { return ConstantOf(g, v) != nullptr; }))
      n.ascend_type = "BNInference";
  return Status::Ok();
}

// Names are CANN's where its documentation names the pass (hiascend.com: ATC's fusion switch reference, the graph
// fusion pass list of the graph developer guide, and the AMCT fusion switch examples for TbeConvDequantQuantFusionPass
// and TbeConvDequantVaddReluQuantFusionPass);
// TbeConvElemwiseFusionPass is ours for CANN's conv + elementwise UB fusion, ReshapeTransposeFusionPass for
// the Reshape/Transpose -> ConfusionTransposeD fusion, whose exact names the notes lack, HardSwishFusionPass
// for torch's pre-opset-14 Hardswish (HardSigmoid + Mul) and
// PadWindowFusionPass for a zero Pad taken into the Conv or AveragePool that reads it, ShuffleChannelFusionPass for
// torch's channel shuffle (Reshape, Transpose, Reshape) as Ascend IR's ShuffleChannel.
const std::vector<FusionPassInfo>& FusionPasses() {
  static const std::vector<FusionPassInfo> passes = {
      {"ConvBatchnormFusionPass", FusionKind::kGraph, ConvBatchnormFusionPass},
      {"BatchNormBnInferFusionPass", FusionKind::kGraph, BatchNormBnInferFusionPass},
      {"AABiasaddConvFusion", FusionKind::kGraph, ConvBiasAddFusionPass},
      {"MatMulBiasAddFusionPass", FusionKind::kGraph, MatMulBiasAddFusionPass},
      {"GeluONNXFusionPass", FusionKind::kGraph, GeluONNXFusionPass},
      {"HardSwishFusionPass", FusionKind::kGraph, HardSwishFusionPass},
      {"PadWindowFusionPass", FusionKind::kGraph, PadWindowFusionPass},
      {"LayerNormONNXFusionPass", FusionKind::kGraph, LayerNormONNXFusionPass},
      {"SoftmaxFusionPass", FusionKind::kGraph, SoftmaxFusionPass},
      {"ShuffleChannelFusionPass", FusionKind::kGraph, ShuffleChannelFusionPass},  // before the general form below
      {"ReshapeTransposeFusionPass", FusionKind::kGraph, ConfusionTransposeFusionPass},
      {"TbeConvDequantQuantFusionPass", FusionKind::kUB, ConvDequantQuantUbFusionPass},
      {"TbeConvElemwiseFusionPass", FusionKind::kUB, ConvElemwiseUbFusionPass},
      {"TbeConvDequantVaddReluQuantFusionPass", FusionKind::kUB, ConvDequantVaddReluQuantUbFusionPass},
      {"TbeBatchMatmulElementWiseFusionPass", FusionKind::kUB, MatMulElemwiseUbFusionPass},
      {"TbeFullyconnectionElemwiseFusionPass", FusionKind::kUB, FullyconnectionElemwiseUbFusionPass},
      {"TbeEltwiseFusionPass", FusionKind::kUB, EltwiseUbFusionPass},
      {"ConvConcatFusionPass", FusionKind::kUB, ConvConcatFusionPass},  // a graph fusion in CANN: see its matcher
  };
  return passes;
}

void AddFusionPasses(PassManager& pm, FusionKind kind, const std::set<std::string>& disabled) {
  for (const auto& p : FusionPasses())
    if (p.kind == kind && !disabled.count(p.name)) pm.Add({p.name, p.run});
}

Result<std::set<std::string>> LoadFusionSwitchFile(const std::string& path, std::vector<std::string>& warnings) {
  const std::string flag = "--fusion_switch_file";
  if (!FileExists(path)) return Status::Error("E10410", flag, path, "the file does not exist");
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string known;
  for (const auto& p : FusionPasses()) known += (known.empty() ? "" : ", ") + std::string(p.name);
  auto find = [](std::string_view name) -> const FusionPassInfo* {
    for (const auto& p : FusionPasses())
      if (p.name == name) return &p;
    return nullptr;
  };
  std::set<std::string> off;
  auto set = [&](const std::string& name, const std::string& state, std::optional<FusionKind> kind) -> Status {
    if (state != "on" && state != "off")
      return Status::Error("E10001", flag, path, "pass '" + name + "' is set to '" + state + "'; the value must be on or off");
    if (name == "ALL" && kind) {
      for (const auto& p : FusionPasses())
        if (p.kind == *kind) state == "off" ? (void)off.insert(p.name) : (void)off.erase(p.name);
      return Status::Ok();
    }
    if (!find(name)) {
      warnings.push_back(flag + ": unknown pass '" + name + "' (known: " + known + ")");
      return Status::Ok();
    }
    state == "off" ? (void)off.insert(name) : (void)off.erase(name);
    return Status::Ok();
  };
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    std::string why;
    nlohmann::json j = npu::ParseJson(text, &why);
    const std::string form = R"(Write {"Switch":{"GraphFusion":{"PassName":"off"},"UBFusion":{"PassName":"off"}}}.)";
    if (j.is_discarded()) return Status::Error("E10032", flag, path, "the file starts like JSON but does not parse: " + why, form);
    if (!j.contains("Switch") || !j["Switch"].is_object()) return Status::Error("E10001", flag, path, "no \"Switch\" object", form);
    for (const auto& [kind, passes] : j["Switch"].items()) {
      if ((kind != "GraphFusion" && kind != "UBFusion") || !passes.is_object())
        return Status::Error("E10001", flag, path, "\"" + kind + "\" is not GraphFusion or UBFusion (an object of pass: on|off)", form);
      for (const auto& [name, state] : passes.items()) {
        if (!state.is_string()) return Status::Error("E10001", flag, path, "pass '" + name + "' must map to \"on\" or \"off\"", form);
        NPU_RETURN_IF_ERROR(set(name, state.get<std::string>(), kind == "GraphFusion" ? FusionKind::kGraph : FusionKind::kUB));
      }
    }
    return off;
  }
  NPU_ASSIGN_OR_RETURN(auto lines, ReadConfigLines(path));
  for (const auto& [no, line] : lines) {
    size_t colon = line.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return Status::Error("E10001", flag, path + ":" + std::to_string(no) + " '" + line + "'", "expected PassName:on or PassName:off");
    std::string name = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1), state = line.substr(colon + 1);
    state.erase(0, state.find_first_not_of(" \t"));
    NPU_RETURN_IF_ERROR(set(name, state, std::nullopt));
  }
  return off;
}

}  // namespace npu
