#include "cost/work.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "ir/device_format.h"
#include "ir/node_attrs.h"
#include "ops/rnn.h"

namespace npu {
namespace {

// Vector instructions per element for each vector op, counted on the element basis that op streams. The
// figures are instruction counts of the usual decomposition on the DaVinci vector ISA (e.g. Sigmoid = vmuls,
// vexp, vadds, vrec; Swish = Sigmoid's four and a vmul; Softmax = vcmax, vsub, vexp, vcadd, vdiv; LayerNorm =
// mean, sub, square, mean, rsqrt, mul, mul, add) [U: counts of our own decomposition, not measured].
// 0 = pure data movement (MTE only).
struct VectorOp {
  double ops;
  bool per_input;  // count on the input elements (reductions) instead of the output elements
};
const std::unordered_map<std::string_view, VectorOp>& VectorOps() {
  static const std::unordered_map<std::string_view, VectorOp> t = {
      {"Relu", {1, false}}, {"LeakyRelu", {2, false}}, {"PRelu", {2, false}}, {"Clip", {2, false}},
      {"Add", {1, false}}, {"Sub", {1, false}}, {"Mul", {1, false}}, {"Div", {2, false}}, {"Neg", {1, false}},
      {"Abs", {1, false}}, {"Max", {1, false}}, {"Min", {1, false}}, {"Sum", {1, false}}, {"Mean", {2, false}},
      {"Sqrt", {2, false}}, {"Reciprocal", {1, false}}, {"Exp", {2, false}}, {"Log", {2, false}}, {"Pow", {3, false}},
      {"Sigmoid", {4, false}}, {"HardSigmoid", {2, false}}, {"HardSwish", {3, false}}, {"Swish", {5, false}}, {"Tanh", {5, false}},
      {"Erf", {8, false}}, {"Gelu", {8, false}}, {"Softmax", {5, true}}, {"LogSoftmax", {6, true}},
      {"LayerNormalization", {8, true}}, {"BatchNormalization", {2, false}}, {"InstanceNormalization", {6, true}},
      {"Cast", {1, false}}, {"Where", {2, false}}, {"Equal", {1, false}}, {"Less", {1, false}}, {"Greater", {1, false}},
      {"Not", {1, false}}, {"And", {1, false}}, {"Or", {1, false}}, {"Transpose", {1, false}}, {"Resize", {4, false}},
      {"GlobalAveragePool", {1, true}}, {"GlobalMaxPool", {1, true}}, {"ReduceMean", {1, true}},
      {"ReduceSum", {1, true}}, {"ReduceMax", {1, true}}, {"ReduceMin", {1, true}}, {"ReduceProd", {1, true}},
      {"ReduceL2", {2, true}}, {"ArgMax", {1, true}}, {"ArgMin", {1, true}}, {"CumSum", {1, true}},
      {"Concat", {0, false}}, {"Slice", {0, false}}, {"Split", {0, false}}, {"Gather", {0, false}}, {"ScatterND", {0, false}},
      {"Pad", {0, false}}, {"Expand", {0, false}}, {"Tile", {0, false}},
      {"TransData", {1, false}}, {"ConfusionTranspose", {1, false}},  // one vnchwconv/vtranspose pass per element
      {"SpaceToBatchND", {0, false}}, {"BatchToSpaceND", {0, false}},  // block copies, as Pad and Tile
      {"ShuffleChannel", {1, false}},  // a transpose of (g, C/g) per pixel: one pass per element as ConfusionTranspose
      {"Aipp", {4, false}},  // swap, CSC (3 MACs), normalise per output element
  };
  return t;
}

bool IsView(std::string_view op) {
  return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity" || op == "Dropout";
}

int64_t Product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= std::max<int64_t>(d, 1);
  return n;
}
// Elements as the device holds them: blocked formats (NC1HWC0, FRACTAL_Z/NZ) count their zero padding.
int64_t Elements(const Value& v) { return v.has_shape ? Product(DeviceShapeOf(v)) : 1; }
int64_t OriginElements(const Value& v) { return v.has_shape ? Product(v.shape) : 1; }
int64_t Bytes(const Value& v) { return Elements(v) * static_cast<int64_t>(DTypeSize(v.dtype)); }
int64_t Dim(const Value& v, int i) {
  if (!v.has_shape || v.shape.empty()) return 1;
  if (i < 0) i += static_cast<int>(v.shape.size());
  return i >= 0 && i < static_cast<int>(v.shape.size()) ? std::max<int64_t>(v.shape[i], 1) : 1;
}

void DescribeConv(const Graph& g, const Node& n, Work& w, bool transpose) {
  const Value& x = g.values[n.inputs[0]];
  const Value& wt = g.values[n.inputs[1]];
  const Value& y = g.values[n.outputs[0]];
  int64_t groups = std::max<int64_t>(n.attr_int("group", 1), 1);
  int64_t window = 1;
  for (size_t d = 2; wt.has_shape && d < wt.shape.size(); ++d) window *= std::max<int64_t>(wt.shape[d], 1);
  int64_t cin = Dim(x, 1), cout = Dim(y, 1);
  int64_t cin_g = std::max<int64_t>(cin / groups, 1), cout_g = std::max<int64_t>(cout / groups, 1);
  int64_t spatial = OriginElements(transpose ? x : y) / std::max<int64_t>(Dim(transpose ? x : y, 1), 1);  // N·H·W
  // The cube reads feature maps in NC1HWC0: input channels pad to C0 (16 for 16-bit types, 32 for int8), so
  // a 3-channel image costs a 16-channel convolution (CANN's default, --enable_small_channel=0). Groups run as
  // the grouped weight's blocks (ir/device_format.h): one GEMM per block of `enlarge` groups, its input channels
  // padded to C0 (depthwise: 16 groups per block, diagonal weights, mostly zeros).
  int64_t c0 = CubeC0(DTypeSize(x.dtype));
  const GroupBlocks blocks = GroupedWeightBlocks(groups, cin_g, cout_g, c0);
  w.m = spatial;
  w.batch = blocks.blocks;
  w.k = transpose ? blocks.cin : blocks.cin * window;
  // NC1HWC0_C04 (--enable_small_channel=1): the taps of 4 channels run along K together (FRACTAL_Z_C04), K padded
  // once to C0 instead of each tap's channels to C0: 48 instead of 144 for a 3x3 kernel.
  if (x.device_format == Format::kNC1HWC0_C04 && !transpose) w.k = (4 * window + c0 - 1) / c0 * c0;
  w.n = blocks.enlarge * cout_g * (transpose ? window : 1);
  w.flops = 2.0 * static_cast<double>(spatial) * static_cast<double>(cin_g * window) * static_cast<double>(cout_g * groups);
  // The feature map in GM: NC1HWC0 once atc assigned it (Bytes counts the padding), else as if it were.
  w.a_bytes = x.device_format ? Bytes(x) : Bytes(x) / std::max<int64_t>(cin, 1) * blocks.blocks * blocks.cin;
  w.b_bytes = Bytes(wt);
}

// A MatMul of a 3-D or higher A by a 2-D B is CANN's BatchMatMulV2: one GEMM per matrix of A, each padded to the
// fractal in its FRACTAL_NZ layout, all by the same B. Its BatchMatMulV2ReshapeFusionPass reshapes A to 2-D (one
// GEMM, the batch folded into M) only for a 3-D A that is not transposed (an ONNX MatMul never is), in two cases: a
// bias Add follows and there are at least 50 matrices of at most 32 rows; or there are 4096 or more of at most 64
// rows (canndev, June 2022: ops/built-in/fusion_pass/graph_fusion/ai_core/batch_matmul_v2_reshape_fusion_pass.cc,
// kBatchMinValue, kMaxValue, kBigBatchBatchDim, kBigBatchMDim). A 2-D A is one GEMM already.
bool FoldsBatchIntoM(size_t a_rank, int64_t batch, int64_t m, bool has_bias) {
  constexpr int64_t kBiasBatchMin = 50, kBiasRowsMax = 32, kBigBatchMin = 4096, kBigBatchRowsMax = 64;
  if (a_rank <= 2) return true;
  if (a_rank != 3) return false;
  return (has_bias && batch >= kBiasBatchMin && m <= kBiasRowsMax) || (batch >= kBigBatchMin && m <= kBigBatchRowsMax);
}

void DescribeMatMul(const Graph& g, const Node& n, Work& w) {
  const Value& a = g.values[n.inputs[0]];
  const Value& b = g.values[n.inputs[1]];
  const Value& y = g.values[n.outputs[0]];
  bool gemm = n.op_type == "Gemm";
  bool ta = gemm && n.attr_int("transA", 0), tb = gemm && n.attr_int("transB", 0);
  w.m = ta ? Dim(a, -1) : Dim(a, -2);
  w.k = ta ? Dim(a, -2) : Dim(a, -1);
  w.n = tb ? Dim(b, -2) : Dim(b, -1);
  if (a.has_shape && a.shape.size() == 1) w.m = 1;
  int64_t out_batch = std::max<int64_t>(OriginElements(y) / std::max<int64_t>(w.m * w.n, 1), 1);
  bool b_is_matrix = b.has_shape && b.shape.size() <= 2;
  bool has_bias = n.inputs.size() > 2 && n.inputs[2] >= 0;
  if (b_is_matrix && (out_batch == 1 || FoldsBatchIntoM(a.has_shape ? a.shape.size() : 2, out_batch, w.m, has_bias))) {
    w.m *= out_batch;
  } else {
    w.batch = out_batch;
    w.b_shared = b_is_matrix;
  }
  w.flops = 2.0 * static_cast<double>(w.batch) * static_cast<double>(w.m) * static_cast<double>(w.k) * static_cast<double>(w.n);
  w.a_bytes = Bytes(a);
  w.b_bytes = Bytes(b);
}

// LSTM / GRU / RNN as CANN's DynamicRNN runs them on the cube: per direction, each time step's gates are one GEMM
// of [x_t, h_t-1] (batch rows, input + hidden wide) by the stacked W and R (gates x hidden), and a step needs the
// state the one before it wrote, so the seq steps run one after another; the directions run side by side.
bool DescribeRnn(const Graph& g, const Node& n, Work& w) {
  if (n.inputs.size() < 3 || n.inputs[0] < 0 || n.inputs[1] < 0) return false;
  const Value &x = g.values[n.inputs[0]], &wt = g.values[n.inputs[1]];
  if (!x.has_shape || !wt.has_shape) return false;
  auto d = RnnDimsOf(n, x.shape, wt.shape);
  if (!d.ok()) return false;
  w.batch = d->directions;
  w.steps = std::max<int64_t>(d->seq, 1);
  w.m = std::max<int64_t>(d->batch, 1);
  w.k = std::max<int64_t>(d->input, 1) + std::max<int64_t>(d->hidden, 1);
  w.n = d->gates * std::max<int64_t>(d->hidden, 1);
  w.flops = 2.0 * static_cast<double>(w.steps * w.batch * w.m) * static_cast<double>(w.k) * static_cast<double>(w.n);
  w.a_bytes = Bytes(x) / w.steps;  // one step's input rows
  w.b_bytes = Bytes(wt) + (n.inputs[2] >= 0 ? Bytes(g.values[n.inputs[2]]) : 0);
  return true;
}

// Whether GE makes this Concat a no-task op (FE's ConcatCToN optimisation sets _no_task, and the memory
// assigner then gives the inputs adjacent slices of one buffer, _nopadding_continuous_input): each producer
// writes straight into its slice, so the concat moves nothing. That takes every input to be one contiguous block
// of the output: in the output's device layout all dims before the concat's are 1, and in NC1HWC0 a concat on C
// gives each input whole C0 blocks (its C a multiple of C0). Inputs must be distinct tensors that tasks write
// (a constant or a graph input has no producer to redirect). Otherwise the concat is a copy task.
bool ConcatWritesInPlace(const Graph& g, const Node& n) {
  if (n.op_type != "Concat" || n.outputs.empty()) return false;
  const Value& y = g.values[n.outputs[0]];
  if (!y.has_shape || y.shape.empty()) return false;
  const int64_t rank = static_cast<int64_t>(y.shape.size());
  int64_t axis = n.attr_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  const Format f = DeviceFormat(y);
  const bool c_blocks = f == Format::kNC1HWC0;
  if (f != Format::kND && f != Format::kNCHW && f != Format::kNHWC && !c_blocks) return false;  // fractal layouts: a copy
  // ConvConcatFusionPass: the convs write their slices with a stride (StridedWrite), whatever comes before C.
  if (c_blocks && axis == 1 && n.attr_list_has(kFusionPassesAttr, "ConvConcatFusionPass")) return true;
  const int64_t c0 = CubeC0(DTypeSize(y.dtype));
  std::vector<int> seen;
  for (int i : n.inputs) {
    if (i < 0 || g.values[i].constant || g.values[i].producer < 0 || std::find(seen.begin(), seen.end(), i) != seen.end()) return false;
    seen.push_back(i);
    const Value& x = g.values[i];
    if (!x.has_shape || x.shape.size() != y.shape.size()) return false;
    if (c_blocks && axis == 1 && x.shape[1] % c0 != 0) return false;  // its last C0 block would be padded inside the output
  }
  // The dims before the concat's in the device layout: NC1HWC0 puts C1 second and C0 last, so a concat on C (or H,
  // W) has N (and C1) before it.
  int64_t before = 1;
  if (c_blocks) {
    const int64_t c1 = (y.shape[1] + c0 - 1) / c0;
    before = axis == 0 ? 1 : axis == 1 ? y.shape[0] : y.shape[0] * c1 * (axis == 3 ? y.shape[2] : 1);
  } else {
    for (int64_t d = 0; d < axis; ++d) before *= y.shape[static_cast<size_t>(d)];
  }
  return before == 1;
}

}  // namespace

std::string_view WorkKindName(WorkKind k) {
  switch (k) {
    case WorkKind::kView: return "view";
    case WorkKind::kCube: return "cube";
    case WorkKind::kVector: return "vector";
    case WorkKind::kAiCpu: return "aicpu";
  }
  return "?";
}

Work DescribeWork(const Graph& g, const Node& n, Engine engine) {
  Work w;
  int64_t in_elems = 0, out_elems = 0;
  for (int i : n.inputs) {
    if (i < 0) continue;
    const Value& v = g.values[i];
    w.in_bytes += Bytes(v);
    in_elems = std::max(in_elems, Elements(v));
    if (v.constant) w.weight_bytes += Bytes(v);
  }
  for (int o : n.outputs) {
    w.out_bytes += Bytes(g.values[o]);
    out_elems = std::max(out_elems, Elements(g.values[o]));
  }
  // Gather and Slice read only the rows they return, not the whole table (an embedding is mostly untouched).
  if ((n.op_type == "Gather" || n.op_type == "GatherND" || n.op_type == "Slice") && !n.inputs.empty() && n.inputs[0] >= 0) {
    const Value& data = g.values[n.inputs[0]];
    int64_t table = Bytes(data), read = std::min(table, w.out_bytes);
    w.in_bytes -= table - read;
    if (data.constant) w.weight_bytes -= table - read;
  }
  if (!n.inputs.empty() && n.inputs[0] >= 0) w.dtype = g.values[n.inputs[0]].dtype;
  if (!n.outputs.empty()) w.out_dtype = g.values[n.outputs[0]].dtype;
  if (IsView(n.op_type) || ConcatWritesInPlace(g, n)) {
    w.kind = WorkKind::kView;
    return w;
  }
  bool conv = n.op_type == "Conv" || n.op_type == "ConvTranspose";
  bool matmul = n.op_type == "MatMul" || n.op_type == "MatMulBias" || n.op_type == "Gemm";
  if (conv) DescribeConv(g, n, w, n.op_type == "ConvTranspose");
  if (matmul) DescribeMatMul(g, n, w);
  if (IsRnn(n.op_type)) matmul = DescribeRnn(g, n, w);
  if (engine == Engine::kAiCpu) {
    w.kind = WorkKind::kAiCpu;
    if (conv || matmul) return w;  // flops from the GEMM shape
  } else if (engine == Engine::kCube && (conv || matmul)) {
    w.kind = WorkKind::kCube;
  }
  if (w.kind == WorkKind::kCube) {
    w.epilogue_ops = (n.inputs.size() > 2 && n.inputs[2] >= 0) + (n.has_attr(kEpilogueOp) ? 1 : 0);
    if (n.inputs.size() > 3 && n.inputs[3] >= 0) {  // the residual of a fused Add
      w.residual_bytes = Bytes(g.values[n.inputs[3]]);
      ++w.epilogue_ops;
    }
    return w;
  }
  auto it = VectorOps().find(n.op_type);
  VectorOp op = it != VectorOps().end() ? it->second : VectorOp{1, false};
  w.elements = op.per_input ? in_elems : out_elems;
  w.ops_per_element = op.ops + (n.has_attr(kEpilogueOp) ? 1 : 0);  // a fused activation: one more pass in UB
  if (n.op_type == "MaxPool" || n.op_type == "AveragePool") {  // one compare/add per window tap
    int64_t window = 1;
    for (int64_t k : n.attr_ints("kernel_shape")) window *= std::max<int64_t>(k, 1);
    w.ops_per_element = static_cast<double>(window);
  }
  // CANN's static AIPP kernel hands each core whole images (cost/tiling.cc ItemBlocks).
  if (n.op_type == "Aipp" && !n.outputs.empty()) w.whole_items = Dim(g.values[n.outputs[0]], 0);
  if (w.kind == WorkKind::kAiCpu) w.ops_per_element = std::max(w.ops_per_element, 1.0);
  w.flops = static_cast<double>(w.elements) * w.ops_per_element;
  return w;
}

}  // namespace npu
