#include "frontend/import_fusion.h"

#include <algorithm>
#include <optional>

#include "frontend/graph_builder.h"
#include "frontend/layout.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

// The node that alone reads value v, seen past one layout transpose (TF's NCHW <-> NHWC around each spatial
// op): the reader, the transpose between them (-1 when none) and the permutation it applies (empty when none).
struct Reader {
  int node = -1, transpose = -1;
  std::vector<int64_t> perm;
};

Reader ReaderPastLayout(const Graph& g, int v) {
  int r = SoleConsumer(g, v);
  if (r < 0) return {};
  const Node& n = g.nodes[r];
  if (n.op_type != "Transpose" || !n.has_attr(kLayoutTransposeAttr)) return {r, -1, {}};
  int next = SoleConsumer(g, n.outputs[0]);
  return next < 0 ? Reader{} : Reader{next, r, n.attr_ints("perm")};
}

// The axis that `axis` of a transpose's input becomes in its output.
int64_t MovedAxis(const std::vector<int64_t>& perm, int64_t axis) {
  if (perm.empty()) return axis;
  auto it = std::find(perm.begin(), perm.end(), axis);
  return it == perm.end() ? -1 : it - perm.begin();
}

// A constant that varies along `axis` of a rank-`rank` tensor only (broadcast right-aligned, as ONNX does), as
// one value per index of that axis; nothing when it varies along another axis or has the wrong size.
std::optional<Tensor> AlongAxis(const Tensor& t, int64_t rank, int64_t axis, int64_t size) {
  const Shape& s = t.shape();
  if (static_cast<int64_t>(s.size()) > rank || t.numel() != size) return std::nullopt;
  const int64_t offset = rank - static_cast<int64_t>(s.size());
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] != 1 && static_cast<int64_t>(i) + offset != axis) return std::nullopt;
  if (size > 1 && axis < offset) return std::nullopt;  // the channel axis is not in the constant at all
  return t.Reshaped({size});
}

// Node `to` now writes value v, whose producer is being dropped: v's readers and name (a graph output's too)
// stay as they are.
void TakeOutput(Graph& g, int to, int v) {
  g.nodes[to].outputs[0] = v;
  g.values[v].producer = to;
}

void PrependNames(Node& n, const std::vector<std::string>& names) { n.original_names.insert(n.original_names.begin(), names.begin(), names.end()); }
void AppendNames(Node& n, const std::vector<std::string>& names) { n.original_names.insert(n.original_names.end(), names.begin(), names.end()); }

Status Finish(Graph& g, const std::vector<bool>& dead) {
  EraseNodes(g, dead);
  return SortTopologically(g);
}

// ---- Pad into conv --------------------------------------------------------------------------------------------

// A zero Pad (TF's Pad / PadV2) that pads no batch or channel and feeds only a conv with explicit pads becomes
// part of the conv's pads (CANN's PadConv2dFusionPass does the same for TF graphs).
bool FoldPad(Graph& g, int k, std::vector<bool>& dead) {
  const Node& pad = g.nodes[k];
  if (pad.op_type != "Pad" || (pad.ascend_type != "Pad" && pad.ascend_type != "PadV2") || pad.attr_string("mode", "constant") != "constant")
    return false;
  const Tensor* pads_t = pad.inputs.size() > 1 ? ConstantOf(g, pad.inputs[1]) : nullptr;
  if (!pads_t || pads_t->dtype() != DType::kI64 || pads_t->numel() % 2) return false;
  if (pad.inputs.size() > 2 && pad.inputs[2] >= 0) {
    const Tensor* v = ConstantOf(g, pad.inputs[2]);
    if (!v || v->numel() != 1 || v->ToDoubleVector()[0] != 0.0) return false;
  }
  const Reader r = ReaderPastLayout(g, pad.outputs[0]);
  if (r.node < 0 || dead[r.node]) return false;
  Node& conv = g.nodes[r.node];
  const int conv_in = r.transpose < 0 ? pad.outputs[0] : g.nodes[r.transpose].outputs[0];
  if (conv.op_type != "Conv" || conv.inputs.empty() || conv.inputs[0] != conv_in || conv.attr_string("auto_pad", "NOTSET") != "NOTSET") return false;
  const auto p = std::vector<int64_t>(pads_t->data<int64_t>(), pads_t->data<int64_t>() + pads_t->numel());
  const int64_t rank = pads_t->numel() / 2, spatial = rank - 2;
  if (rank < 3 || (!r.perm.empty() && static_cast<int64_t>(r.perm.size()) != rank)) return false;
  auto pad_axis = [&](int64_t conv_axis) { return r.perm.empty() ? conv_axis : r.perm[static_cast<size_t>(conv_axis)]; };
  for (int64_t a : {pad_axis(0), pad_axis(1)})
    if (p[a] || p[a + rank]) return false;
  std::vector<int64_t> conv_pads = conv.attr_ints("pads", std::vector<int64_t>(2 * spatial, 0));
  if (static_cast<int64_t>(conv_pads.size()) != 2 * spatial) return false;
  for (int64_t d = 0; d < spatial; ++d) {
    conv_pads[d] += p[pad_axis(d + 2)];
    conv_pads[d + spatial] += p[pad_axis(d + 2) + rank];
  }
  conv.attrs["pads"] = conv_pads;
  PrependNames(conv, pad.original_names);
  ReplaceUse(g, r.transpose < 0 ? r.node : r.transpose, pad.outputs[0], pad.inputs[0]);
  dead[k] = true;
  return true;
}

// ---- TF 1's atrous convolution --------------------------------------------------------------------------------

bool AllEqual(const std::vector<int64_t>& v, int64_t x) {
  return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
}

// SpaceToBatchND(block b, paddings) -> VALID conv of stride 1 -> BatchToSpaceND(b, crops), each alone reading the
// one before (past the layout transposes), is one conv with dilation b whose pads are paddings - crops: each
// crop removes an output row that a padding row made.
bool FoldAtrous(Graph& g, int k, std::vector<bool>& dead) {
  const Node& stb = g.nodes[k];
  if (stb.op_type != "SpaceToBatchND") return false;
  const Reader in = ReaderPastLayout(g, stb.outputs[0]);
  if (in.node < 0 || dead[in.node] || in.perm != ToChannelsFirst(4)) return false;
  Node& conv = g.nodes[in.node];
  if (conv.op_type != "Conv" || conv.attr_string("auto_pad", "NOTSET") != "NOTSET" || !AllEqual(conv.attr_ints("pads"), 0) ||
      !AllEqual(conv.attr_ints("dilations"), 1) || !AllEqual(conv.attr_ints("strides"), 1))
    return false;
  const Reader out = ReaderPastLayout(g, conv.outputs[0]);
  if (out.node < 0 || dead[out.node] || out.perm != ToChannelsLast(4)) return false;
  const Node& bts = g.nodes[out.node];
  const auto block = stb.attr_ints("block_shape"), pad = stb.attr_ints("paddings"), crop = bts.attr_ints("crops");
  if (bts.op_type != "BatchToSpaceND" || bts.attr_ints("block_shape") != block || pad.size() != 4 || crop.size() != 4) return false;
  // paddings and crops are TF's (top, bottom, left, right); a conv's pads are (top, left, bottom, right).
  const std::vector<int64_t> pads{pad[0] - crop[0], pad[2] - crop[2], pad[1] - crop[1], pad[3] - crop[3]};
  if (std::any_of(pads.begin(), pads.end(), [](int64_t p) { return p < 0; })) return false;
  conv.attrs["dilations"] = block;
  conv.attrs["pads"] = pads;
  PrependNames(conv, stb.original_names);
  AppendNames(conv, bts.original_names);
  ReplaceUse(g, in.transpose, stb.outputs[0], stb.inputs[0]);
  TakeOutput(g, out.transpose, bts.outputs[0]);
  dead[k] = dead[out.node] = true;
  return true;
}

// ---- BiasAdd into conv and matmul -----------------------------------------------------------------------------

// The rank of a conv's output, from its attributes (its weights may still be a transpose at import).
std::optional<int64_t> ConvRank(const Node& conv) {
  for (const char* a : {"strides", "dilations", "kernel_shape"})
    if (auto v = conv.attr_ints(a); !v.empty()) return static_cast<int64_t>(v.size()) + 2;
  return std::nullopt;
}

// A BiasAdd reading only a conv's (past its layout transpose) or a Gemm's output becomes that op's bias input
// (CANN's AABiasaddConvFusion and MatMulBiasAddFusionPass): the op takes the BiasAdd's output and name.
bool FoldBias(Graph& g, int k, std::vector<bool>& dead) {
  const Node& op = g.nodes[k];
  const bool gemm = op.op_type == "Gemm";
  if ((!gemm && op.op_type != "Conv" && op.op_type != "ConvTranspose") || (op.inputs.size() > 2 && op.inputs[2] >= 0)) return false;
  const Reader r = gemm ? Reader{SoleConsumer(g, op.outputs[0]), -1, {}} : ReaderPastLayout(g, op.outputs[0]);
  if (r.node < 0 || dead[r.node]) return false;
  const Node& add = g.nodes[r.node];
  const int add_in = r.transpose < 0 ? op.outputs[0] : g.nodes[r.transpose].outputs[0];
  if (add.op_type != "Add" || add.ascend_type != "BiasAdd" || add.inputs.size() != 2 || add.inputs[0] != add_in) return false;
  const Tensor* bias = ConstantOf(g, add.inputs[1]);
  if (!bias) return false;
  std::optional<Tensor> per_channel;
  if (gemm) {
    if (bias->rank() == 1) per_channel = *bias;
  } else if (auto rank = r.perm.empty() ? ConvRank(op) : std::optional(static_cast<int64_t>(r.perm.size()))) {
    per_channel = AlongAxis(*bias, *rank, MovedAxis(r.perm, 1), bias->numel());
  }
  if (!per_channel) return false;
  const int bias_value = bias->rank() == 1 ? add.inputs[1] : AddConstant(g, UniqueValueName(g, add.name + "/bias"), std::move(*per_channel));
  Node& fused = g.nodes[k];
  fused.inputs.resize(2);
  fused.inputs.push_back(bias_value);
  AppendNames(fused, g.nodes[r.node].original_names);
  TakeOutput(g, r.transpose < 0 ? k : r.transpose, g.nodes[r.node].outputs[0]);
  dead[r.node] = true;
  return true;
}

// ---- Caffe's Scale into the BatchNorm before it ---------------------------------------------------------------

// The constant operand of a binary node that reads v, or -1.
int ConstOperand(const Graph& g, const Node& n, int v) {
  if (n.inputs.size() != 2 || n.inputs[0] != v || !ConstantOf(g, n.inputs[1])) return -1;
  return n.inputs[1];
}

// Caffe's Scale layer (x * gamma [+ beta], per channel) reading only a BatchNorm layer's output becomes that
// BatchNorm's gamma and beta, as Caffe deploy nets mean the pair and CANN's parser reads it.
bool FoldScale(Graph& g, int k, std::vector<bool>& dead) {
  const Node& bn = g.nodes[k];
  if (bn.op_type != "BatchNormalization" || bn.ascend_type != "BNInference" || bn.inputs.size() != 5) return false;
  const Tensor* gamma = ConstantOf(g, bn.inputs[1]);
  const Tensor* beta = ConstantOf(g, bn.inputs[2]);
  if (!gamma || !beta || gamma->dtype() != DType::kF32 || beta->dtype() != DType::kF32) return false;
  const int64_t ch = gamma->numel();
  const int mul = SoleConsumer(g, bn.outputs[0]);
  if (mul < 0 || dead[mul] || g.nodes[mul].op_type != "Mul") return false;
  const Node& m = g.nodes[mul];
  const int factor = ConstOperand(g, m, bn.outputs[0]);
  // The Scale layer's Add (its bias term) is the Mul's sole reader from the same layer.
  int add = SoleConsumer(g, m.outputs[0]);
  if (add >= 0 && (dead[add] || g.nodes[add].op_type != "Add" || g.nodes[add].original_names != m.original_names)) add = -1;
  const int offset = add >= 0 ? ConstOperand(g, g.nodes[add], m.outputs[0]) : -1;
  const int last = add >= 0 ? add : mul;
  if (factor < 0 || (add >= 0 && offset < 0) || g.nodes[last].ascend_type != "Scale") return false;
  auto s = AlongAxis(*ConstantOf(g, factor), 4, 1, ch);
  std::optional<Tensor> b = offset >= 0 ? AlongAxis(*ConstantOf(g, offset), 4, 1, ch) : Tensor::Zeros(DType::kF32, {ch});
  if (!s || !b || s->dtype() != DType::kF32 || b->dtype() != DType::kF32) return false;
  // gamma' = gamma * s, beta' = beta * s + b: the BatchNorm's affine part followed by the Scale's.
  Tensor gamma2 = Tensor::Empty(DType::kF32, {ch}), beta2 = Tensor::Empty(DType::kF32, {ch});
  for (int64_t c = 0; c < ch; ++c) {
    const float sc = s->data<float>()[c];
    gamma2.mutable_data<float>()[c] = gamma->data<float>()[c] * sc;
    beta2.mutable_data<float>()[c] = beta->data<float>()[c] * sc + b->data<float>()[c];
  }
  const std::string base = g.nodes[last].name;
  const int gv = AddConstant(g, UniqueValueName(g, base + "/gamma"), std::move(gamma2));
  const int bv = AddConstant(g, UniqueValueName(g, base + "/beta"), std::move(beta2));
  Node& fused = g.nodes[k];
  fused.inputs[1] = gv;
  fused.inputs[2] = bv;
  fused.name = base;  // dumps name the pair by the Scale layer, whose top it now writes
  AppendNames(fused, g.nodes[mul].original_names);
  TakeOutput(g, k, g.nodes[last].outputs[0]);
  dead[mul] = true;
  if (add >= 0) dead[add] = true;
  return true;
}

// ---- the passes -----------------------------------------------------------------------------------------------

template <bool (*Fold)(Graph&, int, std::vector<bool>&)>
Status FoldAll(Graph& g) {
  std::vector<bool> dead(g.nodes.size(), false);
  bool any = false;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!dead[k]) any |= Fold(g, static_cast<int>(k), dead);
  return any ? Finish(g, dead) : Status::Ok();
}

// Only graphs of a channels-last framework have layout transposes to cancel; others keep their transposes.
Status CancelLayout(Graph& g) {
  const bool any = std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.has_attr(kLayoutTransposeAttr); });
  return any ? CancelLayoutTransposes(g) : Status::Ok();
}

constexpr ImportPass kImportPasses[] = {
    {"ImportPadIntoConv", FoldAll<FoldPad>},
    {"ImportAtrousConv", FoldAll<FoldAtrous>},
    {"ImportBiasIntoConvMatMul", FoldAll<FoldBias>},
    {"ImportScaleIntoBatchNorm", FoldAll<FoldScale>},
    {"CancelLayoutTransposes", CancelLayout},
};

}  // namespace

std::span<const ImportPass> ImportPasses() { return kImportPasses; }

}  // namespace npu
