#include "frontend/ge/ge_ops.h"

#include "frontend/ge/framework_op.h"
#include "frontend/ge/ge_op.h"

#include <algorithm>
#include <array>

#include "ir/graph_edit.h"
#include "ir/node_attrs.h"
#include "ir/op_schema.h"
#include "ops/schemas.h"

namespace npu {
namespace {


ConvertResult Plain(GeOp&) { return {}; }

ConvertResult MapCast(GeOp& c) {
  c.node().attrs["to"] = static_cast<int64_t>(c.out(0).dtype);
  return {};
}

// A format change; NHWC <-> NC1HWC0 also permutes the origin dims (held channels-first on one side only).
ConvertResult MapTransData(GeOp& c) {
  c.node().attrs["src_format"] = c.ge.attr_string("src_format");
  c.node().attrs["dst_format"] = c.ge.attr_string("dst_format");
  const int x = c.node().inputs.at(0);
  if (c.in(0).layout == "NHWC" && c.OutHeldNhwc()) c.node().attrs["perm"] = std::vector<int64_t>(kNhwcToNchw.begin(), kNhwcToNchw.end());
  else if (c.HeldNhwc(x) && c.out(0).layout == "NHWC") c.node().attrs["perm"] = std::vector<int64_t>(kNchwToNhwc.begin(), kNchwToNhwc.end());
  else if (c.in(0).shape != c.out(0).shape) return "a TransData from " + ShapeToString(c.in(0).shape) + " to " + ShapeToString(c.out(0).shape) + " npukit cannot follow";
  return {};
}

// The elementwise op a TBE fusion applied on a cube op's way out. The .om keeps no node for it: its kernel's
// name ("te_fused_op_conv2d_relu_<hash>_<hash>__kernel0") is the only record, so it is read from there.
ConvertResult ReadFusedEpilogue(GeOp& c, std::initializer_list<std::string_view> heads) {
  std::string kernel;
  for (const auto& [k, v] : c.ge.attrs)
    if (k.ends_with("_kernelname")) kernel = c.ge.attr_string(k);
  constexpr std::string_view kFused = "te_fused_op_";
  if (!kernel.starts_with(kFused)) return {};
  std::string_view members = std::string_view(kernel).substr(kFused.size());
  members = members.substr(0, members.rfind("__kernel"));
  for (int hash = 0; hash < 2; ++hash) members = members.substr(0, members.rfind('_'));  // two hashes end the name
  for (std::string_view head : heads)
    if (members.starts_with(head)) members.remove_prefix(head.size());
  Node& n = c.node();
  if (members.empty()) return {};
  if (members == "_relu") {
    n.attrs[kEpilogueOp] = std::string("Relu");
    n.attrs[kEpilogueOpset] = int64_t{13};
  } else if (members == "_relu6") {
    n.attrs[kEpilogueOp] = std::string("Clip");
    n.attrs[kEpilogueOpset] = int64_t{6};
    n.attrs[std::string(kEpilogueAttrPrefix) + "min"] = 0.0f;
    n.attrs[std::string(kEpilogueAttrPrefix) + "max"] = 6.0f;
  } else {
    return "its fused kernel " + kernel + " applies '" + std::string(members.substr(1)) + "', which npukit cannot recover from the .om";
  }
  return {};
}

}  // namespace

std::optional<Window> InferWindow(int64_t in, int64_t out, int64_t k) {
  if (in < 1 || out < 1 || k < 1) return std::nullopt;
  // The smallest stride of each padding in closed form: VALID needs floor((in - k) / s) = out - 1, SAME
  // ceil(in / s) = out; each holds for a range of strides starting there, or for none.
  std::optional<Window> valid, same;
  if (in >= k) {
    const int64_t s = (in - k) / out + 1;
    if ((in - k) / s + 1 == out) valid = Window{s, 0, 0};
  }
  const int64_t s = (in + out - 1) / out;
  if ((in + s - 1) / s == out) {
    const int64_t total = std::max<int64_t>((out - 1) * s + k - in, 0);
    same = Window{s, total / 2, total - total / 2};
  }
  if (valid && (!same || valid->stride <= same->stride)) return valid;
  return same;
}

namespace {

// strides / pads / dilations of a window op over input x [N,C,H,W] with window k and output y: from its
// attributes when GE kept them, else inferred (InferWindow).
ConvertResult SetWindow(GeOp& c, const Shape& x, const Shape& y, std::array<int64_t, 2> k) {
  Node& n = c.node();
  const std::string format = c.ge.attr_string("data_format", "NCHW");
  std::vector<int64_t> strides, pads, dilations = {1, 1};
  if (c.ge.has_attr("strides")) {
    auto s = Spatial(c.ge.attr_ints("strides"), format);
    if (!s) return "strides " + AttrToString(c.ge.attrs.at("strides")) + " do not fit data_format " + format;
    strides = {(*s)[0], (*s)[1]};
    if (c.ge.has_attr("dilations")) {
      auto d = Spatial(c.ge.attr_ints("dilations"), format);
      if (!d) return "dilations do not fit data_format " + format;
      dilations = {(*d)[0], (*d)[1]};
    }
    const std::string padding = c.ge.attr_string("padding", c.ge.attr_string("pad_mode"));
    auto p = c.ge.attr_ints("pads");
    if (p.size() == 4 && padding != "SAME" && padding != "same") {
      pads = {p[0], p[2], p[1], p[3]};  // GE: top, bottom, left, right; npukit (ONNX): begins, then ends
    } else {
      pads = {0, 0, 0, 0};
      for (size_t d = 0; d < 2 && (padding == "SAME" || padding == "same"); ++d) {
        const int64_t extent = (k[d] - 1) * dilations[d] + 1, in = x[2 + d], o = (in + strides[d] - 1) / strides[d];
        const int64_t total = std::max<int64_t>((o - 1) * strides[d] + extent - in, 0);
        pads[d] = total / 2;
        pads[d + 2] = total - total / 2;
      }
    }
  } else {
    strides.resize(2);
    pads.resize(4);
    for (size_t d = 0; d < 2; ++d) {
      auto w = InferWindow(x[2 + d], y[2 + d], k[d]);
      if (!w) return "the .om keeps no strides/pads for it and no VALID or SAME window makes " + ShapeToString(y) + " from " + ShapeToString(x);
      strides[d] = w->stride;
      pads[d] = w->pad_begin;
      pads[d + 2] = w->pad_end;
    }
  }
  n.attrs["strides"] = strides;
  n.attrs["pads"] = pads;
  n.attrs["dilations"] = dilations;
  n.attrs["kernel_shape"] = std::vector<int64_t>{k[0], k[1]};
  return {};
}

ConvertResult MapConv2D(GeOp& c) {
  if (!c.has_in(0) || !c.has_in(1)) return "it has no x or filter input";
  if (auto why = c.TrimOptional(3, "offset_w (int8)")) return why;
  if (auto why = NoOffsetX(c)) return why;
  const Shape &x = c.in(0).shape, &w = c.in(1).shape, &y = c.out(0).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return "x, filter and y are not all 4-D";
  if (w[1] < 1 || x[1] % w[1] != 0) return "the filter's " + std::to_string(w[1]) + " input channels do not divide the input's " + std::to_string(x[1]);
  c.node().attrs["group"] = x[1] / w[1];
  c.node().attrs.erase("kernel_shape");
  if (auto why = SetWindow(c, x, y, {w[2], w[3]})) return why;
  return ReadFusedEpilogue(c, {"conv2d"});
}

ConvertResult MapMatMul(GeOp& c) {
  if (!c.has_in(0) || !c.has_in(1)) return "it has no x1 or x2 input";
  if (auto why = c.TrimOptional(3, "offset_w (int8)")) return why;
  const bool ta = c.ge.attr_int("transpose_x1", 0) || c.ge.attr_int("transpose_a", 0);
  const bool tb = c.ge.attr_int("transpose_x2", 0) || c.ge.attr_int("transpose_b", 0);
  if (c.in(0).shape.size() != 2 || c.in(1).shape.size() != 2) return "x1 and x2 are not both 2-D";
  c.node().attrs["transA"] = int64_t{ta};
  c.node().attrs["transB"] = int64_t{tb};
  return ReadFusedEpilogue(c, {"mat_mul_v2", "matmul_v2", "mat_mul", "matmul"});
}

// BatchMatMul's adj_x1 / adj_x2 swap the last two dims of an operand: a Transpose before npukit's MatMul.
ConvertResult MapBatchMatMul(GeOp& c) {
  if (!c.has_in(0) || !c.has_in(1)) return "it has no x1 or x2 input";
  if (auto why = c.TrimOptional(2, "bias")) return why;
  for (size_t j = 0; j < 2; ++j) {
    const bool adj = c.ge.attr_int(j == 0 ? "adj_x1" : "adj_x2", 0) || c.ge.attr_int(j == 0 ? "transpose_x1" : "transpose_x2", 0);
    if (!adj) continue;
    const size_t rank = c.in(j).shape.size();
    if (rank < 2) return "an adjointed operand is not a matrix";
    std::vector<int64_t> perm(rank);
    for (size_t d = 0; d < rank; ++d) perm[d] = static_cast<int64_t>(d);
    std::swap(perm[rank - 1], perm[rank - 2]);
    c.TransposeInput(j, perm);
  }
  return {};
}

ConvertResult MapSoftmax(GeOp& c) {
  auto axes = c.ints(c.ge.has_attr("axes") ? "axes" : "axis");
  if (axes.empty()) axes = {-1};
  if (axes.size() != 1) return "it normalises over " + std::to_string(axes.size()) + " axes; npukit's Softmax takes one";
  auto axis = c.Axis(c.node().inputs[0], axes[0]);
  if (!axis) return "axis " + std::to_string(axes[0]) + " is outside the input's rank";
  c.node().attrs["axis"] = *axis;
  return {};
}

ConvertResult MapArgMax(GeOp& c) {
  auto axis = c.Axis(c.node().inputs[0], c.ge.attr_int("dimension", c.ge.attr_int("axis", 0)));
  if (!axis) return "its dimension is outside the input's rank";
  c.node().attrs["axis"] = *axis;
  c.node().attrs["keepdims"] = int64_t{0};
  c.node().attrs[kArgOutputType] = static_cast<int64_t>(c.out(0).dtype);
  return {};
}

ConvertResult MapRelu6(GeOp& c) {
  c.node().attrs["min"] = 0.0f;
  c.node().attrs["max"] = 6.0f;
  return {};
}

ConvertResult MapLeakyRelu(GeOp& c) {
  c.node().attrs["alpha"] = c.ge.attr_float("negative_slope", 0.0f);
  return {};
}

ConvertResult MapElu(GeOp& c) {
  c.node().attrs["alpha"] = c.ge.attr_float("alpha", 1.0f);
  return {};
}

// Broadcasting follows the framework's layout: next to an NHWC tensor held channels-first, a constant operand
// of a per-channel (or scalar) shape is laid out as [1, C, 1, 1] so it broadcasts the same way.
ConvertResult MapBinary(GeOp& c) {
  if (!c.OutHeldNhwc()) return {};
  for (size_t j = 0; j < c.node().inputs.size(); ++j) {
    const int v = c.node().inputs[j];
    if (v < 0 || c.HeldNhwc(v) || NumElements(c.g.values[v].shape) == 1) continue;
    Shape s = c.g.values[v].shape;
    if (!c.g.values[v].constant || s.size() > 4) return "operand " + std::to_string(j) + " " + ShapeToString(s) + " broadcasts against an NHWC tensor in a way npukit does not follow";
    s.insert(s.begin(), 4 - s.size(), 1);
    if (s[1] != 1 || s[2] != 1) return "operand " + std::to_string(j) + " " + ShapeToString(c.g.values[v].shape) + " is not per-channel against an NHWC tensor";
    c.node().inputs[j] = c.Reshaped(v, {s[0], s[3], 1, 1});
  }
  return {};
}

// BiasAdd: an Add whose bias runs along the data format's C.
ConvertResult MapBiasAdd(GeOp& c) {
  if (!c.has_in(0) || !c.has_in(1)) return "it has no x or bias input";
  const size_t rank = c.in(0).shape.size();
  const bool channels_first = rank >= 3 && !c.HeldNhwc(c.node().inputs[0]) && c.ge.attr_string("data_format", "NHWC").starts_with("NC");
  if (!channels_first && !c.HeldNhwc(c.node().inputs[0])) return {};
  if (!c.in(1).constant) return "its bias is not a constant";
  Shape s(rank - 1, 1);
  s[0] = NumElements(c.in(1).shape);
  c.node().inputs[1] = c.Reshaped(c.node().inputs[1], s);
  return {};
}

// Shape-only ops (GE's Reshape, Squeeze, ExpandDims, Flatten, ...): a Reshape to the shape the op makes.
ConvertResult MapReshape(GeOp& c) {
  if (!c.has_in(0)) return "it has no input";
  if ((c.HeldNhwc(c.node().inputs[0]) || c.OutHeldNhwc()) && c.in(0).shape != c.out(0).shape) return "it reshapes an NHWC tensor held channels-first";
  const Shape& s = c.out(0).shape;
  Tensor shape = Tensor::Empty(DType::kI64, {static_cast<int64_t>(s.size())});
  std::copy(s.begin(), s.end(), shape.mutable_data<int64_t>());
  c.node().inputs = {c.node().inputs[0], c.b.Constant(c.node().name + "/shape", std::move(shape))};
  return {};
}

ConvertResult MapConcat(GeOp& c) {
  auto& ins = c.node().inputs;
  ins.erase(std::remove(ins.begin(), ins.end(), -1), ins.end());
  std::vector<int> data;
  for (int v : ins)
    if (!(c.g.values[v].constant && c.g.values[v].shape.empty())) data.push_back(v);  // ConcatV2's axis input
  if (data.empty()) return "it has no inputs";
  int64_t dim = c.ge.attr_int("concat_dim", c.ge.attr_int("axis", 0));
  const bool held = c.HeldNhwc(data[0]);
  for (int v : data)
    if (c.HeldNhwc(v) != held) return "it joins NHWC tensors held channels-first with others";
  auto axis = c.Axis(data[0], dim);
  if (!axis) return "concat_dim " + std::to_string(dim) + " is outside the input's rank";
  ins = data;
  c.node().attrs["axis"] = *axis;
  return {};
}

ConvertResult MapTranspose(GeOp& c) {
  auto perm = c.ints("perm");
  if (perm.empty()) perm = c.IntConst(1).value_or(std::vector<int64_t>{});
  if (perm.empty()) return "its perm is neither an attribute nor a constant";
  if (c.HeldNhwc(c.node().inputs[0]) || c.OutHeldNhwc()) return "it transposes an NHWC tensor held channels-first";
  c.node().inputs.resize(1);
  c.node().attrs["perm"] = perm;
  return {};
}

ConvertResult MapReduce(GeOp& c) {
  const int x = c.node().inputs.at(0);
  auto axes = c.ints("axes");
  if (axes.empty()) axes = c.IntConst(1).value_or(std::vector<int64_t>{});
  const bool keep = c.ge.attr_int("keep_dims", c.ge.attr_int("keepdims", 0));
  std::vector<int64_t> mapped;
  for (int64_t a : axes) {
    auto m = c.Axis(x, a);
    if (!m) return "axis " + std::to_string(a) + " is outside the input's rank";
    mapped.push_back(*m);
  }
  if (c.HeldNhwc(x) && !keep) {  // the kept dims must come out in the framework's order
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < 4; ++d)
      if (std::find(mapped.begin(), mapped.end(), kNhwcAxisInNchw[static_cast<size_t>(d)]) == mapped.end()) kept.push_back(kNhwcAxisInNchw[static_cast<size_t>(d)]);
    if (!std::is_sorted(kept.begin(), kept.end())) return "it drops axes of an NHWC tensor held channels-first in a way that reorders the rest";
  }
  c.node().inputs.resize(1);
  c.node().attrs["axes"] = mapped;
  c.node().attrs["keepdims"] = int64_t{keep};
  return {};
}

ConvertResult MapPool(GeOp& c) {
  const Shape &x = c.in(0).shape, &y = c.out(0).shape;
  if (x.size() != 4 || y.size() != 4) return "its input and output are not 4-D";
  const std::string format = c.HeldNhwc(c.node().inputs[0]) ? "NHWC" : c.ge.attr_string("data_format", "NCHW");
  auto k = Spatial(c.ints(c.ge.has_attr("ksize") ? "ksize" : "kernel_size"), format);
  if (!k) return "its ksize does not fit data_format " + format;
  c.ge.attrs["data_format"] = format;
  if (auto why = SetWindow(c, x, y, *k)) return why;
  c.node().attrs.erase("dilations");
  if (c.node().op_type == "AveragePool") c.node().attrs["count_include_pad"] = int64_t{0};  // TF and CANN average the real pixels
  return {};
}

ConvertResult MapLayerNorm(GeOp& c) {
  c.node().attrs["axis"] = c.ge.attr_int("begin_norm_axis", -1);
  c.node().attrs["epsilon"] = c.ge.attr_float("epsilon", 1e-7f);
  // GE's outputs 1 and 2 are the mean and the variance, ONNX's the mean and 1/stddev: only y is kept.
  return c.KeepOnlyOutput0("mean or variance");
}

// TF's random ops (inside a FrameworkOp): seeded by seed/seed2 as the TF importer's are, in the output's dtype.
ConvertResult MapRandom(GeOp& c) {
  if (!IsFloat(c.out(0).dtype)) return "a random tensor of a type other than float";
  c.node().attrs["seed"] = c.ge.attr_int("seed", 0);
  c.node().attrs["seed2"] = c.ge.attr_int("seed2", 0);
  c.node().attrs["dtype"] = static_cast<int64_t>(c.out(0).dtype);
  c.node().inputs.resize(1);
  return {};
}

// Square(x) as Mul(x, x).
ConvertResult MapSquare(GeOp& c) {
  c.node().inputs = {c.node().inputs[0], c.node().inputs[0]};
  return {};
}

// Swish: x * sigmoid(scale * x); npukit's kernel names the factor alpha.
ConvertResult MapSwish(GeOp& c) {
  c.node().attrs["alpha"] = c.ge.attr_float("scale", 1.0f);
  return {};
}

// PRelu's weight runs along the channels: a [C] weight next to an NCHW tensor is laid out [C, 1, 1].
ConvertResult MapPRelu(GeOp& c) {
  if (!c.has_in(1)) return "it has no weight input";
  const Shape &x = c.in(0).shape, &w = c.in(1).shape;
  if (x.size() >= 3 && w.size() == 1 && w[0] > 1) {
    if (!c.in(1).constant || w[0] != x[1]) return "its weight " + ShapeToString(w) + " does not run along the channels of " + ShapeToString(x);
    Shape s(x.size() - 1, 1);
    s[0] = w[0];
    c.node().inputs[1] = c.Reshaped(c.node().inputs[1], s);
  }
  return {};
}

// TF's FusedBatchNorm in inference (GE's BatchNorm: x, scale, offset, mean, variance): only y is kept.
ConvertResult MapBatchNorm(GeOp& c) {
  if (c.ge.attr_int("is_training", 0) != 0) return "it computes batch statistics (is_training): a training op";
  if (c.node().inputs.size() < 5) return "it has no mean or variance input (inference needs both)";
  if (!c.HeldNhwc(c.node().inputs[0]) && c.ge.attr_string("data_format", "NCHW") == "NHWC" && c.in(0).shape.size() == 4)
    return "it normalises an NHWC tensor npukit does not hold channels-first";
  c.node().inputs.resize(5);
  c.node().attrs["epsilon"] = c.ge.attr_float("epsilon", 1e-4f);
  return c.KeepOnlyOutput0("batch mean or variance");
}

// DepthwiseConv2D: a grouped conv, one group per input channel (filter [C * multiplier, 1, kh, kw]).
ConvertResult MapDepthwiseConv(GeOp& c) {
  if (!c.has_in(1)) return "it has no filter input";
  const Shape &x = c.in(0).shape, &w = c.in(1).shape;
  if (x.size() != 4 || w.size() != 4 || w[1] != 1 || w[0] % x[1] != 0)
    return "its filter " + ShapeToString(w) + " is not [channels * multiplier, 1, kh, kw] for input " + ShapeToString(x);
  return MapConv2D(c);
}

struct GeOpRow {
  std::string_view ge_type, op_type;
  int opset;
  MapFn map;
};

// One row per GE type npukit runs; the kernel's op type and opset, and how its attributes become the kernel's.
constexpr GeOpRow kGeOps[] = {
    {"Cast", "Cast", 13, MapCast},
    {"TransData", "TransData", 0, MapTransData},
    {"Conv2D", "Conv", 11, MapConv2D},
    {"MatMul", "Gemm", 13, MapMatMul},
    {"MatMulV2", "Gemm", 13, MapMatMul},
    {"BatchMatMul", "MatMul", 13, MapBatchMatMul},
    {"BatchMatMulV2", "MatMul", 13, MapBatchMatMul},
    {"SoftmaxV2", "Softmax", 13, MapSoftmax},
    {"Softmax", "Softmax", 13, MapSoftmax},
    {"LogSoftmaxV2", "LogSoftmax", 13, MapSoftmax},
    {"ArgMaxD", "ArgMax", 13, MapArgMax},
    {"ArgMaxV2", "ArgMax", 13, MapArgMax},
    {"Relu", "Relu", 13, Plain},
    {"Relu6", "Clip", 6, MapRelu6},
    {"LeakyRelu", "LeakyRelu", 6, MapLeakyRelu},
    {"Elu", "Elu", 6, MapElu},
    {"Sigmoid", "Sigmoid", 13, Plain},
    {"Tanh", "Tanh", 13, Plain},
    {"Exp", "Exp", 13, Plain},
    {"Log", "Log", 13, Plain},
    {"Sqrt", "Sqrt", 13, Plain},
    {"Abs", "Abs", 13, Plain},
    {"Neg", "Neg", 13, Plain},
    {"Erf", "Erf", 13, Plain},
    {"Reciprocal", "Reciprocal", 13, Plain},
    {"Floor", "Floor", 13, Plain},
    {"Add", "Add", 14, MapBinary},
    {"AddV2", "Add", 14, MapBinary},
    {"Sub", "Sub", 14, MapBinary},
    {"Mul", "Mul", 14, MapBinary},
    {"RealDiv", "Div", 14, MapBinary},
    {"Div", "Div", 14, MapBinary},
    {"Maximum", "Max", 13, MapBinary},
    {"Minimum", "Min", 13, MapBinary},
    {"BiasAdd", "Add", 14, MapBiasAdd},
    {"Reshape", "Reshape", 13, MapReshape},
    {"Squeeze", "Reshape", 13, MapReshape},
    {"SqueezeV2", "Reshape", 13, MapReshape},
    {"Unsqueeze", "Reshape", 13, MapReshape},
    {"ExpandDims", "Reshape", 13, MapReshape},
    {"Flatten", "Reshape", 13, MapReshape},
    {"FlattenV2", "Reshape", 13, MapReshape},
    {"ConcatD", "Concat", 13, MapConcat},
    {"ConcatV2D", "Concat", 13, MapConcat},
    {"ConcatV2", "Concat", 13, MapConcat},
    {"Concat", "Concat", 13, MapConcat},
    {"TransposeD", "Transpose", 13, MapTranspose},
    {"Transpose", "Transpose", 13, MapTranspose},
    {"ReduceMeanD", "ReduceMean", 11, MapReduce},
    {"ReduceMean", "ReduceMean", 11, MapReduce},
    {"ReduceSumD", "ReduceSum", 11, MapReduce},
    {"ReduceSum", "ReduceSum", 11, MapReduce},
    {"MaxPool", "MaxPool", 12, MapPool},
    {"AvgPool", "AveragePool", 11, MapPool},
    {"LayerNorm", "LayerNormalization", 17, MapLayerNorm},
    {"PadD", "Pad", 13, MapPad},
    {"Pad", "Pad", 13, MapPad},
    {"PadV3D", "Pad", 13, MapPad},
    {"PadV3", "Pad", 13, MapPad},
    {"SplitD", "Split", 13, MapSplit},
    {"SplitVD", "Split", 13, MapSplit},
    {"SplitV", "Split", 13, MapSplit},
    {"TileD", "Tile", 13, MapTile},
    {"Tile", "Tile", 13, MapTile},
    {"StridedSliceD", "Slice", 13, MapStridedSlice},
    {"StridedSlice", "Slice", 13, MapStridedSlice},
    {"GatherV2D", "Gather", 13, MapGather},
    {"GatherV2", "Gather", 13, MapGather},
    {"Gather", "Gather", 13, MapGather},
    {"ResizeNearestNeighborV2D", "Resize", 13, MapResize},
    {"ResizeNearestNeighborV2", "Resize", 13, MapResize},
    {"ResizeBilinearV2D", "Resize", 13, MapResize},
    {"ResizeBilinearV2", "Resize", 13, MapResize},
    {"ReduceMinD", "ReduceMin", 11, MapReduce},
    {"ReduceMaxD", "ReduceMax", 11, MapReduce},
    {"ReduceMax", "ReduceMax", 11, MapReduce},
    {"ReduceProdD", "ReduceProd", 11, MapReduce},
    {"Pooling", "MaxPool", 12, MapCaffePooling},
    {"FullyConnection", "Gemm", 13, MapFullyConnection},
    {"Conv2DBackpropInputD", "ConvTranspose", 11, MapConvBackpropInput},
    {"Conv2DBackpropInput", "ConvTranspose", 11, MapConvBackpropInput},
    {"Deconvolution", "ConvTranspose", 11, MapDeconvolution},
    {"AscendQuant", "AscendQuant", 0, MapKeepAttrs},
    {"AscendDequant", "AscendDequant", 0, MapKeepAttrs},
    {"AscendAntiQuant", "AscendAntiQuant", 0, MapKeepAttrs},
    {"BatchMultiClassNonMaxSuppression", "BatchMultiClassNonMaxSuppression", 0, MapNms},
    {"OneHotD", "OneHot", 11, MapOneHot},
    {"OneHot", "OneHot", 11, MapOneHot},
    {"Square", "Mul", 14, MapSquare},
    {"Pow", "Pow", 13, Plain},
    {"Sin", "Sin", 7, Plain},
    {"Cos", "Cos", 7, Plain},
    {"Ceil", "Ceil", 13, Plain},
    {"Round", "Round", 11, Plain},
    {"Sign", "Sign", 13, Plain},
    {"Softplus", "Softplus", 1, Plain},
    {"Softsign", "Softsign", 1, Plain},
    {"HardSwish", "HardSwish", 14, Plain},
    {"Swish", "Swish", 1, MapSwish},
    {"PRelu", "PRelu", 16, MapPRelu},
    {"ClipByValue", "Clip", 13, Plain},
    {"Less", "Less", 13, MapBinary},
    {"LessEqual", "LessOrEqual", 16, MapBinary},
    {"Greater", "Greater", 13, MapBinary},
    {"GreaterEqual", "GreaterOrEqual", 16, MapBinary},
    {"Equal", "Equal", 13, MapBinary},
    {"LogicalAnd", "And", 7, MapBinary},
    {"LogicalOr", "Or", 7, MapBinary},
    {"LogicalNot", "Not", 1, Plain},
    {"SelectV2", "Where", 16, MapBinary},
    {"AddN", "Sum", 13, MapBinary},
    {"BatchNorm", "BatchNormalization", 15, MapBatchNorm},
    {"DepthwiseConv2D", "Conv", 11, MapDepthwiseConv},
    {"RandomStandardNormal", "RandomStandardNormal", 13, MapRandom},
    {"RandomUniform", "RandomUniform", 13, MapRandom},
    {"Identity", "Identity", 13, Plain},
    {"MemcpyAsync", "Identity", 13, Plain},
};

constexpr std::string_view kBookkeeping[] = {"AtomicAddrClean", "Send", "Recv", "StreamActive", "StreamSwitch", "StreamMerge",
                                             "LabelSet", "LabelGoto", "LabelGotoEx", "LabelSwitchByIndex", "NoOp"};

}  // namespace

bool IsGeBookkeepingOp(std::string_view type) { return std::find(std::begin(kBookkeeping), std::end(kBookkeeping), type) != std::end(kBookkeeping); }

void MapGeOps(Graph& g, std::vector<UnsupportedNode>& unrunnable) {
  RegisterBuiltinSchemas();
  const size_t count = g.nodes.size();  // map functions may append Transposes, which need no mapping
  GraphBuilder b(g);
  for (size_t k = 0; k < count; ++k) {
    const std::string type = g.nodes[k].op_type;
    const GeOpRow* row = nullptr;
    for (const GeOpRow& r : kGeOps)
      if (r.ge_type == type) row = &r;
    if (g.nodes[k].opset != 0) continue;  // already an npukit op (a Reshape the reader put back): GE ops carry no opset
    if (!row) {
      const bool fwk = g.nodes[k].ascend_type == kFrameworkOpType;
      unrunnable.push_back({g.nodes[k].name, fwk ? std::string(kFrameworkOpType) + " " + type : type, "", 0,
                            fwk ? "npukit has no kernel for this TensorFlow op (a FrameworkOp GE leaves to the AI CPU)" : "npukit has no kernel for this GE op type"});
      continue;
    }
    if (g.nodes[k].inputs.empty() || g.nodes[k].inputs[0] < 0 || g.nodes[k].outputs.empty()) {  // every row reads input 0
      unrunnable.push_back({g.nodes[k].name, type, "", 0, "it has no first input or no output"});
      continue;
    }
    GeOp op(b, static_cast<int>(k));
    op.node().op_type = std::string(row->op_type);
    op.node().opset = row->opset;
    ConvertResult why = row->map(op);
    // The kernels read a node's inputs by position: what the schema does not take is not run.
    if (const OpSchema* schema = why ? nullptr : OpSchemaRegistry::Get().Find(op.node().op_type))
      if (std::string arity = ArityProblem(*schema, g, op.node()); !arity.empty()) why = arity;
    if (why) {
      op.node().op_type = type;
      unrunnable.push_back({op.node().name, type, "", 0, why->reason});
    }
  }
  if (g.nodes.size() != count) (void)SortTopologically(g);
}

}  // namespace npu
