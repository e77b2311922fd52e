// One converter per TensorFlow op: the internal nodes it becomes, CANN's Ascend IR type for the node that
// stands for it (Ascend/parser's op_map.cc and the
// tf_plugin registrations of CANN's built-in ops), and its attributes read as TF defines them. Ops with a
// data_format run channels-first inside (transposes around them, which frontend/layout.h cancels between
// neighbours); everything else keeps TF's own axes.
#include <climits>
#include <cstring>

#include "frontend/tf/tf_convert.h"
#include "ir/node_attrs.h"

namespace npu::tf {
namespace {

using npukit::tf::NodeDef;
using R = ConvertResult;

R Fail(std::string why) { return why; }
int CastTo(Converter& c, const std::string& name, int v, DType dt);

// ---- layout helpers ---------------------------------------------------------------------------------------

bool ChannelsLast(const Converter& c, const NodeDef& n) {
  std::string f = c.AttrString(n, "data_format", "NHWC");
  return f == "NHWC" || f == "NDHWC";
}

// TF lists strides, dilations and ksize over every dim of the data format; ONNX over the spatial dims.
std::vector<int64_t> Spatial(const std::vector<int64_t>& v, bool last, size_t rank, int64_t def) {
  std::vector<int64_t> out;
  for (size_t d = 0; d + 2 < rank; ++d) {
    size_t at = last ? d + 1 : d + 2;
    out.push_back(at < v.size() ? v[at] : def);
  }
  return out;
}

// Layout transposes are npukit's, not the framework's: no original name, so no golden dump of their own.
int ToFirst(Converter& c, const NodeDef& n, int v, bool last, size_t rank) {
  return last ? c.b.Transpose(n.name() + "/to_channels_first", v, ToChannelsFirst(rank), {}) : v;
}
// v, produced channels-first by the op that stands for n, back to TF's layout; that op is marked so dumps show
// its output as TF has it.
int ToLast(Converter& c, const NodeDef& n, int v, bool last, size_t rank) {
  if (!last) return v;
  Graph& g = c.b.graph();
  g.nodes[static_cast<size_t>(g.values[v].producer)].attrs[kFrameworkLayoutAttr] = std::string(rank == 5 ? "NDHWC" : "NHWC");
  return c.b.Transpose(n.name() + "/to_channels_last", v, ToChannelsLast(rank), {});
}

// padding = SAME | VALID | EXPLICIT (explicit_paddings: a (begin, end) pair per dim of the data format).
R PaddingAttrs(const Converter& c, const NodeDef& n, bool last, size_t rank, AttrMap& attrs) {
  std::string padding = c.AttrString(n, "padding", "VALID");
  std::vector<int64_t> pads(2 * (rank - 2), 0);
  if (padding == "SAME") {
    attrs["auto_pad"] = std::string("SAME_UPPER");  // TF puts the odd pixel at the end
    return std::nullopt;
  }
  if (padding == "EXPLICIT") {
    auto ex = c.AttrInts(n, "explicit_paddings");
    if (ex.size() != 2 * rank) return Fail("explicit_paddings has " + std::to_string(ex.size()) + " values, expected " + std::to_string(2 * rank));
    for (size_t d = 0; d + 2 < rank; ++d) {
      size_t at = last ? d + 1 : d + 2;
      pads[d] = ex[2 * at];
      pads[d + rank - 2] = ex[2 * at + 1];
    }
  } else if (padding != "VALID") {
    return Fail("padding '" + padding + "' is not SAME, VALID or EXPLICIT");
  }
  attrs["pads"] = pads;
  return std::nullopt;
}

// ---- element-wise ------------------------------------------------------------------------------------------

struct Simple {
  std::string_view tf, internal, ascend;
};
// One internal op per TF op, inputs in the same order.
constexpr Simple kSimple[] = {
    {"Relu", "Relu", "Relu"},          {"Sigmoid", "Sigmoid", "Sigmoid"}, {"Tanh", "Tanh", "Tanh"},
    {"Exp", "Exp", "Exp"},             {"Log", "Log", "Log"},             {"Sqrt", "Sqrt", "Sqrt"},
    {"Abs", "Abs", "Abs"},             {"Neg", "Neg", "Neg"},             {"Floor", "Floor", "Floor"},
    {"Ceil", "Ceil", "Ceil"},          {"Reciprocal", "Reciprocal", "Reciprocal"}, {"Round", "Round", "Round"},
    {"Sign", "Sign", "Sign"},          {"Softplus", "Softplus", "Softplus"}, {"Erf", "Erf", "Erf"},
    {"Add", "Add", "Add"},             {"AddV2", "Add", "Add"},           {"Sub", "Sub", "Sub"},
    {"Mul", "Mul", "Mul"},             {"RealDiv", "Div", "RealDiv"},     {"Maximum", "Max", "Maximum"},
    {"Minimum", "Min", "Minimum"},     {"Pow", "Pow", "Pow"},             {"Equal", "Equal", "Equal"},
    {"Less", "Less", "Less"},          {"Greater", "Greater", "Greater"}, {"LessEqual", "LessOrEqual", "LessEqual"},
    {"GreaterEqual", "GreaterOrEqual", "GreaterEqual"}, {"LogicalAnd", "And", "LogicalAnd"},
    {"LogicalOr", "Or", "LogicalOr"},  {"LogicalNot", "Not", "LogicalNot"}, {"Select", "Where", "Select"},
    {"SelectV2", "Where", "SelectV2"}, {"Range", "Range", "Range"},       {"Elu", "Elu", "Elu"},
    {"AddN", "Sum", "AddN"},           {"Selu", "Selu", "Selu"},          {"Softsign", "Softsign", "Softsign"},
    {"Einsum", "Einsum", "Einsum"},
};

R ConvertSimple(Converter& c, const NodeDef& n) {
  for (const Simple& s : kSimple) {
    if (s.tf != n.op()) continue;
    std::vector<int> ins;
    for (int j = 0; j < std::max(1, c.NumInputs(n)); ++j) ins.push_back(c.In(n, j));
    AttrMap attrs;
    if (n.op() == "Einsum") attrs["equation"] = c.AttrString(n, "equation");
    c.Bind(n, 0, c.b.Add1(n.name(), {std::string(s.internal), ins, attrs, std::string(s.ascend)}, {n.name()}));
    return std::nullopt;
  }
  return Fail("no converter");
}

// ZerosLike / OnesLike: a scalar of the input's type expanded to its shape.
R FilledLike(Converter& c, const NodeDef& n) {
  auto t = c.AttrType(n, "T");
  auto dt = t ? FromTfType(*t) : std::nullopt;
  if (!dt) return Fail("a type npukit does not compute in");
  int value = c.b.Constant(n.name() + "/value", Tensor::Zeros(*dt, {}));
  if (n.op() == "OnesLike")  // 1.0 cast to the type: a node constant folding removes
    value = CastTo(c, n.name() + "/one", c.b.Scalar(n.name() + "/one_f32", 1.f), *dt);
  int shape = c.b.Add1(n.name() + "/shape", {"Shape", {c.In(n, 0)}}, {n.name()});
  c.Bind(n, 0, c.b.Add1(n.name(), {"Expand", {value, shape}, {}, std::string(n.op())}, {n.name()}));
  return std::nullopt;
}

// FloorDiv and FloorMod on floats: floor(x / y) and x - floor(x / y) * y. On integers FloorMod is ONNX's Mod
// (the result takes the divisor's sign, as Python's); integer FloorDiv is not taken.
R FloorDivMod(Converter& c, const NodeDef& n) {
  auto t = c.AttrType(n, "T");
  auto dt = t ? FromTfType(*t) : std::nullopt;
  const bool mod = n.op() == "FloorMod";
  if (dt && !IsFloat(*dt)) {
    if (!mod) return Fail("FloorDiv on integers");
    c.Bind(n, 0, c.b.Add1(n.name(), {"Mod", {c.In(n, 0), c.In(n, 1)}, {{"fmod", int64_t{0}}}, "FloorMod"}, {n.name()}));
    return std::nullopt;
  }
  const std::string s = n.name();
  int q = c.b.Add1(mod ? s + "/floor" : s, {"Floor", {c.b.Add1(s + "/div", {"Div", {c.In(n, 0), c.In(n, 1)}}, {s})}, {}, mod ? "" : "FloorDiv"}, {s});
  if (mod) q = c.b.Add1(s, {"Sub", {c.In(n, 0), c.b.Add1(s + "/times", {"Mul", {q, c.In(n, 1)}}, {s})}, {}, "FloorMod"}, {s});
  c.Bind(n, 0, q);
  return std::nullopt;
}

// ClipByValue(x, lo, hi) = min(max(x, lo), hi): TF's bounds may be tensors, ONNX Clip's are scalars.
R ClipByValue(Converter& c, const NodeDef& n) {
  int lo = c.b.Add1(n.name() + "/max", {"Max", {c.In(n, 0), c.In(n, 1)}}, {n.name()});
  c.Bind(n, 0, c.b.Add1(n.name(), {"Min", {lo, c.In(n, 2)}, {}, "ClipByValue"}, {n.name()}));
  return std::nullopt;
}

// SpaceToDepth / DepthToSpace: TF's block order is ONNX's DCR.
R SpaceDepth(Converter& c, const NodeDef& n) {
  const bool last = ChannelsLast(c, n);
  AttrMap attrs{{"blocksize", c.AttrInt(n, "block_size", 2)}};
  if (n.op() == "DepthToSpace") attrs["mode"] = std::string("DCR");
  int y = c.b.Add1(n.name(), {std::string(n.op()), {ToFirst(c, n, c.In(n, 0), last, 4)}, attrs, std::string(n.op())}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, last, 4));
  return std::nullopt;
}

// TF's LRN sums x^2 over depth_radius channels each side and scales by alpha; ONNX's scales by alpha / size.
R Lrn(Converter& c, const NodeDef& n) {
  int64_t radius = c.AttrInt(n, "depth_radius", 5), size = 2 * radius + 1;
  AttrMap attrs{{"size", size}, {"alpha", c.AttrFloat(n, "alpha", 1.f) * static_cast<float>(size)}, {"beta", c.AttrFloat(n, "beta", 0.5f)},
                {"bias", c.AttrFloat(n, "bias", 1.f)}};
  int y = c.b.Add1(n.name(), {"LRN", {ToFirst(c, n, c.In(n, 0), true, 4)}, attrs, "LRN"}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, true, 4));
  return std::nullopt;
}

R Gather(Converter& c, const NodeDef& n) {
  c.Bind(n, 0, c.b.Add1(n.name(), {"Gather", {c.In(n, 0), c.In(n, 1)}, {{"axis", int64_t{0}}}, "GatherV2"}, {n.name()}));
  return std::nullopt;
}

// TopKV2(input, k): the k largest along the last axis, sorted; TF's indices are int32.
R TopK(Converter& c, const NodeDef& n) {
  auto k = c.IntsIn(n, 1);
  if (!k || k->size() != 1) return Fail("k must be a constant scalar");
  auto outs = c.b.Add(n.name(), {"TopK", {c.In(n, 0), c.b.Int64s(n.name() + "/k", *k)}, {{"axis", int64_t{-1}}, {"largest", int64_t{1}}, {"sorted", int64_t{1}}}, "TopKV2", 2},
                      {n.name()});
  c.Bind(n, 0, outs[0]);
  c.Bind(n, 1, CastTo(c, n.name() + ":1", outs[1], DType::kI32));
  return std::nullopt;
}

R LeakyRelu(Converter& c, const NodeDef& n) {
  c.Bind(n, 0, c.b.Add1(n.name(), {"LeakyRelu", {c.In(n, 0)}, {{"alpha", c.AttrFloat(n, "alpha", 0.2f)}}, "LeakyRelu"}, {n.name()}));
  return std::nullopt;
}

R Relu6(Converter& c, const NodeDef& n) {
  int lo = c.b.Scalar(n.name() + "/min", 0.f), hi = c.b.Scalar(n.name() + "/max", 6.f);
  c.Bind(n, 0, c.b.Add1(n.name(), {"Clip", {c.In(n, 0), lo, hi}, {}, "Relu6"}, {n.name()}));
  return std::nullopt;
}

R Square(Converter& c, const NodeDef& n) {
  int x = c.In(n, 0);
  c.Bind(n, 0, c.b.Add1(n.name(), {"Mul", {x, x}, {}, "Square"}, {n.name()}));
  return std::nullopt;
}

R Rsqrt(Converter& c, const NodeDef& n) {
  int s = c.b.Add1(n.name() + "/sqrt", {"Sqrt", {c.In(n, 0)}}, {n.name()});
  c.Bind(n, 0, c.b.Add1(n.name(), {"Reciprocal", {s}, {}, "Rsqrt"}, {n.name()}));
  return std::nullopt;
}

R SquaredDifference(Converter& c, const NodeDef& n) {
  int d = c.b.Add1(n.name() + "/diff", {"Sub", {c.In(n, 0), c.In(n, 1)}}, {n.name()});
  c.Bind(n, 0, c.b.Add1(n.name(), {"Mul", {d, d}, {}, "SquaredDifference"}, {n.name()}));
  return std::nullopt;
}

R Softmax(Converter& c, const NodeDef& n) {
  bool log = n.op() == "LogSoftmax";
  c.Bind(n, 0, c.b.Add1(n.name(), {log ? "LogSoftmax" : "Softmax", {c.In(n, 0)}, {{"axis", int64_t{-1}}}, log ? "LogSoftmaxV2" : "SoftmaxV2"}, {n.name()}));
  return std::nullopt;
}

R Cast(Converter& c, const NodeDef& n) {
  auto t = c.AttrType(n, "DstT");
  auto dt = t ? FromTfType(*t) : std::nullopt;
  if (!dt) return Fail("cast to TF type " + std::to_string(t.value_or(0)) + ", which npukit does not compute in");
  c.Bind(n, 0, c.b.Add1(n.name(), {"Cast", {c.In(n, 0)}, {{"to", static_cast<int64_t>(*dt)}}, "Cast"}, {n.name()}));
  return std::nullopt;
}

// ---- graph structure -----------------------------------------------------------------------------------------

R Placeholder(Converter& c, const NodeDef& n) {
  auto t = c.AttrType(n, "dtype");
  auto dt = t ? FromTfType(*t) : std::nullopt;
  if (!dt) return Fail("input of TF type " + std::to_string(t.value_or(0)) + " (strings and resources are not tensors npukit computes on)");
  Shape shape;
  bool known = false;
  if (const auto* a = c.Attr(n, "shape"); a && a->has_shape() && !a->shape().unknown_rank()) {
    known = true;
    for (const auto& d : a->shape().dim()) shape.push_back(d.size() < 0 ? -1 : d.size());
  }
  int v = c.b.GraphInput(n.name(), *dt, shape, known);
  if (known && shape.size() == 4) c.b.graph().values[v].layout = "NHWC";  // TF's image layout; --input_format overrides
  if (known && shape.size() == 5) c.b.graph().values[v].layout = "NDHWC";
  c.Bind(n, 0, v);
  return std::nullopt;
}

R Const(Converter& c, const NodeDef& n) {
  const auto* a = c.Attr(n, "value");
  if (!a || !a->has_tensor()) return Fail("a Const without a tensor 'value'");
  auto t = c.TensorOf(a->tensor(), n.name());
  if (!t.ok() && t.status().code() == "E10041") {  // corrupt, not unsupported
    c.SetError(t.status());
    return std::nullopt;
  }
  if (!t.ok()) return Fail(t.status().reason());
  c.Bind(n, 0, c.b.Constant(n.name(), std::move(t).value()));
  return std::nullopt;
}

// Identity, StopGradient, Snapshot, PreventGradient, IdentityN and PlaceholderWithDefault compute nothing.
R Passthrough(Converter& c, const NodeDef& n) {
  for (int k = 0; k < std::max(1, c.NumInputs(n)) && k < c.NumInputs(n); ++k) c.Bind(n, k, c.In(n, k));
  return std::nullopt;
}

R NoOp(Converter&, const NodeDef&) { return std::nullopt; }

// ---- convolution and pooling ---------------------------------------------------------------------------------

// SpaceToBatchND / BatchToSpaceND with two block dims on NHWC data. The import passes make the pair around a VALID
// conv (TF 1's atrous convolution) one dilated conv (frontend/import_fusion.h).
R SpaceBatchNd(Converter& c, const NodeDef& n) {
  const bool to_batch = n.op() == "SpaceToBatchND";
  auto block = c.IntsIn(n, 1), pads = c.IntsIn(n, 2);
  if (!block || !pads || block->size() != 2 || pads->size() != 4 || c.RankOf(c.In(n, 0)).value_or(4) != 4)
    return Fail("only two block dims of a 4-D input, with block_shape and " + std::string(to_batch ? "paddings" : "crops") + " constant");
  AttrMap attrs{{"block_shape", *block}, {to_batch ? "paddings" : "crops", *pads}};
  c.Bind(n, 0, c.b.Add1(n.name(), {std::string(n.op()), {c.In(n, 0)}, attrs, std::string(n.op())}, {n.name()}));
  return std::nullopt;
}

R Conv(Converter& c, const NodeDef& n) {
  const bool depthwise = n.op() == "DepthwiseConv2dNative", is3d = n.op() == "Conv3D";
  const size_t rank = is3d ? 5 : 4;
  const bool last = ChannelsLast(c, n);
  const Tensor* filter_value = c.ConstIn(n, 1);
  if (!filter_value || filter_value->rank() != static_cast<int64_t>(rank)) return Fail("the filter must be a constant of rank " + std::to_string(rank));
  const Shape w = filter_value->shape();  // a copy: adding values below moves the constants
  AttrMap attrs{{"strides", Spatial(c.AttrInts(n, "strides"), last, rank, 1)}, {"dilations", Spatial(c.AttrInts(n, "dilations"), last, rank, 1)}};
  if (auto bad = PaddingAttrs(c, n, last, rank, attrs)) return bad;
  // TF filters are [spatial..., in, out] (depthwise: [h, w, in, multiplier]); npukit's are [out, in/group, spatial...].
  int filter;
  if (depthwise) {
    int64_t in = w[2], mult = w[3];
    int t = c.b.Transpose(n.name() + "/filter", c.In(n, 1), {2, 3, 0, 1}, {n.name()});
    filter = c.b.Add1(n.name() + "/filter_oihw", {"Reshape", {t, c.b.Int64s(n.name() + "/filter_shape", {in * mult, 1, w[0], w[1]})}}, {n.name()});
    attrs["group"] = in;
  } else {
    filter = c.b.Transpose(n.name() + "/filter", c.In(n, 1), is3d ? std::vector<int64_t>{4, 3, 0, 1, 2} : std::vector<int64_t>{3, 2, 0, 1}, {n.name()});
  }
  std::vector<int> ins{ToFirst(c, n, c.In(n, 0), last, rank), filter};
  int y = c.b.Add1(n.name(), {"Conv", ins, attrs, depthwise ? "DepthwiseConv2D" : std::string(n.op())}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, last, rank));
  return std::nullopt;
}

// Conv2DBackpropInput(input_sizes, filter [h, w, out, in], out_backprop): a transposed convolution.
R ConvBackpropInput(Converter& c, const NodeDef& n) {
  const bool last = ChannelsLast(c, n);
  auto sizes = c.IntsIn(n, 0);
  const Tensor* w = c.ConstIn(n, 1);
  if (!sizes || sizes->size() != 4 || !w || w->rank() != 4) return Fail("input_sizes and the filter must be constants (4 values, rank 4)");
  auto strides = Spatial(c.AttrInts(n, "strides"), last, 4, 1), dil = Spatial(c.AttrInts(n, "dilations"), last, 4, 1);
  std::string padding = c.AttrString(n, "padding", "VALID");
  if (padding != "SAME" && padding != "VALID") return Fail("padding '" + padding + "' of a Conv2DBackpropInput");
  std::vector<int64_t> pads(4), out_pad(2);
  for (size_t d = 0; d < 2; ++d) {
    int64_t out = (*sizes)[last ? d + 1 : d + 2], k = (w->shape()[d] - 1) * dil[d] + 1, s = strides[d];
    if (s <= 0 || out <= 0) return Fail("strides and input_sizes must be positive");
    // The forward conv this op is the gradient of maps `out` to `in`; its pads make the shapes agree.
    int64_t in = padding == "SAME" ? (out + s - 1) / s : (out - k) / s + 1;
    int64_t total = padding == "SAME" ? std::max<int64_t>((in - 1) * s + k - out, 0) : 0;
    pads[d] = total / 2;
    pads[d + 2] = total - total / 2;
    out_pad[d] = out - ((in - 1) * s + k - total);
    if (out_pad[d] < 0 || out_pad[d] >= s) return Fail("input_sizes do not fit the filter and strides");
  }
  int filter = c.b.Transpose(n.name() + "/filter", c.In(n, 1), {3, 2, 0, 1}, {n.name()});
  AttrMap attrs{{"strides", strides}, {"dilations", dil}, {"pads", pads}, {"output_padding", out_pad}};
  std::vector<int> ins{ToFirst(c, n, c.In(n, 2), last, 4), filter};
  int y = c.b.Add1(n.name(), {"ConvTranspose", ins, attrs, "Conv2DBackpropInput"}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, last, 4));
  return std::nullopt;
}

R Pool(Converter& c, const NodeDef& n) {
  const bool is3d = n.op() == "MaxPool3D" || n.op() == "AvgPool3D", avg = n.op() == "AvgPool" || n.op() == "AvgPool3D";
  const size_t rank = is3d ? 5 : 4;
  const bool last = ChannelsLast(c, n);
  AttrMap attrs{{"kernel_shape", Spatial(c.AttrInts(n, "ksize"), last, rank, 1)}, {"strides", Spatial(c.AttrInts(n, "strides"), last, rank, 1)}};
  if (auto bad = PaddingAttrs(c, n, last, rank, attrs)) return bad;
  if (avg) attrs["count_include_pad"] = int64_t{0};  // TF averages over the pixels inside the image only
  int y = c.b.Add1(n.name(), {avg ? "AveragePool" : "MaxPool", {ToFirst(c, n, c.In(n, 0), last, rank)}, attrs, std::string(n.op())}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, last, rank));
  return std::nullopt;
}

// The import passes fold a BiasAdd into the conv or matmul before it (frontend/import_fusion.h).
R BiasAdd(Converter& c, const NodeDef& n) {
  int bias = c.In(n, 1);
  if (!ChannelsLast(c, n)) {  // NCHW: the bias runs along dim 1
    int64_t rank = c.RankOf(c.In(n, 0)).value_or(4);  // NCHW data is 4-D unless the graph says otherwise
    std::vector<int64_t> shape(static_cast<size_t>(std::max<int64_t>(rank - 1, 1)), 1);
    if (const Tensor* t = c.ConstIn(n, 1); t && t->rank() == 1) {  // a constant stays one, for the import passes
      shape[0] = t->numel();
      bias = c.b.Constant(n.name() + "/bias_nchw", t->Reshaped(shape));
    } else {
      shape[0] = -1;
      bias = c.b.Add1(n.name() + "/bias_nchw", {"Reshape", {bias, c.b.Int64s(n.name() + "/bias_shape", shape)}}, {n.name()});
    }
  }
  c.Bind(n, 0, c.b.Add1(n.name(), {"Add", {c.In(n, 0), bias}, {}, "BiasAdd"}, {n.name()}));
  return std::nullopt;
}

R FusedBatchNorm(Converter& c, const NodeDef& n) {
  if (c.AttrBool(n, "is_training", true)) return Fail("the training form (is_training=true); freeze the graph for inference");
  for (int k = 1; k < 6; ++k)
    if (c.Readers(n.name(), k) > 0) return Fail("output " + std::to_string(k) + " (batch statistics) is read; only y is an inference result");
  const bool last = ChannelsLast(c, n);
  auto rank = c.RankOf(c.In(n, 0)).value_or(4);
  std::vector<int> ins{ToFirst(c, n, c.In(n, 0), last, static_cast<size_t>(rank))};
  for (int j = 1; j < 5; ++j) ins.push_back(c.In(n, j));
  int y = c.b.Add1(n.name(), {"BatchNormalization", ins, {{"epsilon", c.AttrFloat(n, "epsilon", 1e-4f)}}, "BatchNorm"}, {n.name()});
  c.Bind(n, 0, ToLast(c, n, y, last, static_cast<size_t>(rank)));
  return std::nullopt;
}

// ---- matmul ----------------------------------------------------------------------------------------------------

R MatMul(Converter& c, const NodeDef& n) {
  AttrMap attrs{{"transA", int64_t{c.AttrBool(n, "transpose_a", false)}}, {"transB", int64_t{c.AttrBool(n, "transpose_b", false)}}};
  c.Bind(n, 0, c.b.Add1(n.name(), {"Gemm", {c.In(n, 0), c.In(n, 1)}, attrs, "MatMulV2"}, {n.name()}));
  return std::nullopt;
}

R BatchMatMul(Converter& c, const NodeDef& n) {
  bool ax = c.AttrBool(n, "adj_x", false), ay = c.AttrBool(n, "adj_y", false);
  if (!ax && !ay) {
    c.Bind(n, 0, c.b.Add1(n.name(), {"MatMul", {c.In(n, 0), c.In(n, 1)}, {}, "BatchMatMulV2"}, {n.name()}));
    return std::nullopt;
  }
  std::string eq = std::string("...") + (ax ? "ji" : "ij") + ",..." + (ay ? "kj" : "jk") + "->...ik";
  c.Bind(n, 0, c.b.Add1(n.name(), {"Einsum", {c.In(n, 0), c.In(n, 1)}, {{"equation", eq}}, "BatchMatMulV2"}, {n.name()}));
  return std::nullopt;
}

// ---- reductions ------------------------------------------------------------------------------------------------

R Reduce(Converter& c, const NodeDef& n) {
  static const std::pair<std::string_view, std::string_view> kReduce[] = {
      {"Mean", "ReduceMean"}, {"Sum", "ReduceSum"}, {"Max", "ReduceMax"}, {"Min", "ReduceMin"}, {"Prod", "ReduceProd"}};
  std::string_view internal;
  for (const auto& [tf, op] : kReduce)
    if (tf == n.op()) internal = op;
  auto axes = c.IntsIn(n, 1);
  if (!axes) return Fail("reduction_indices must be a constant");
  if (axes->empty()) {  // TF reduces nothing over an empty axis list
    c.Bind(n, 0, c.b.Add1(n.name(), {"Identity", {c.In(n, 0)}}, {n.name()}));
    return std::nullopt;
  }
  AttrMap attrs{{"keepdims", int64_t{c.AttrBool(n, "keep_dims", false)}}};
  std::vector<int> ins{c.In(n, 0)};
  if (internal == "ReduceSum") ins.push_back(c.b.Int64s(n.name() + "/axes", *axes));
  else attrs["axes"] = *axes;
  c.Bind(n, 0, c.b.Add1(n.name(), {std::string(internal), ins, attrs, std::string(internal)}, {n.name()}));
  return std::nullopt;
}

R ArgMax(Converter& c, const NodeDef& n) {
  auto axis = c.IntsIn(n, 1);
  if (!axis || axis->size() != 1) return Fail("dimension must be a constant scalar");
  bool max = n.op() == "ArgMax";
  // With a constant dimension CANN makes it an attribute: the real .om of the A3C net holds ArgMaxD.
  auto t = c.AttrType(n, "output_type");
  DType out = t && *t == 3 /* DT_INT32 */ ? DType::kI32 : DType::kI64;
  AttrMap attrs{{"axis", (*axis)[0]}, {"keepdims", int64_t{0}}, {kArgOutputType, static_cast<int64_t>(out)}};
  c.Bind(n, 0, c.b.Add1(n.name(), {max ? "ArgMax" : "ArgMin", {c.In(n, 0)}, attrs, max ? "ArgMaxD" : "ArgMinD"}, {n.name()}));
  return std::nullopt;
}

// ---- shape and data movement -----------------------------------------------------------------------------------

int CastTo(Converter& c, const std::string& name, int v, DType dt) {
  return c.b.Add1(name, {"Cast", {v}, {{"to", static_cast<int64_t>(dt)}}}, {name});
}

R ConcatV2(Converter& c, const NodeDef& n) {
  int count = c.NumInputs(n) - 1;
  auto axis = c.IntsIn(n, count);
  if (count < 1 || !axis || axis->size() != 1) return Fail("axis (the last input) must be a constant scalar");
  std::vector<int> ins;
  for (int j = 0; j < count; ++j) ins.push_back(c.In(n, j));
  c.Bind(n, 0, c.b.Add1(n.name(), {"Concat", ins, {{"axis", (*axis)[0]}}, "ConcatV2"}, {n.name()}));
  return std::nullopt;
}

R Pack(Converter& c, const NodeDef& n) {
  int64_t axis = c.AttrInt(n, "axis", 0);
  int axes = c.b.Int64s(n.name() + "/axis", {axis});
  std::vector<int> parts;
  for (int j = 0; j < c.NumInputs(n); ++j)
    parts.push_back(c.b.Add1(n.name() + "/expand_" + std::to_string(j), {"Unsqueeze", {c.In(n, j), axes}}, {n.name()}));
  c.Bind(n, 0, c.b.Add1(n.name(), {"Concat", parts, {{"axis", axis}}, "Pack"}, {n.name()}));
  return std::nullopt;
}

R Unpack(Converter& c, const NodeDef& n) {
  int64_t axis = c.AttrInt(n, "axis", 0), num = c.AttrInt(n, "num", 0);
  if (num < 1) return Fail("num must be positive");
  auto parts = c.b.Add(n.name() + "/split", {"Split", {c.In(n, 0)}, {{"axis", axis}}, "", static_cast<int>(num)}, {n.name()});
  int axes = c.b.Int64s(n.name() + "/axis", {axis});
  for (int k = 0; k < num; ++k) {
    std::string name = k == 0 ? n.name() : n.name() + ":" + std::to_string(k);
    c.Bind(n, k, c.b.Add(name, {"Squeeze", {parts[static_cast<size_t>(k)], axes}, {}, "Unpack"}, {n.name()}, {name})[0]);
  }
  return std::nullopt;
}

R Split(Converter& c, const NodeDef& n) {
  const bool v = n.op() == "SplitV";
  auto axis = c.IntsIn(n, v ? 2 : 0);
  if (!axis || axis->size() != 1) return Fail("the split axis must be a constant scalar");
  int x = c.In(n, v ? 0 : 1);
  int64_t num = c.AttrInt(n, "num_split", 0);
  std::vector<int> ins{x};
  if (v) {
    auto sizes = c.IntsIn(n, 1);
    if (!sizes || std::find(sizes->begin(), sizes->end(), -1) != sizes->end()) return Fail("size_splits must be constants without -1");
    ins.push_back(c.b.Int64s(n.name() + "/sizes", *sizes));
    num = static_cast<int64_t>(sizes->size());
  }
  if (num < 1) return Fail("num_split must be positive");
  auto outs = c.b.Add(n.name(), {"Split", ins, {{"axis", (*axis)[0]}}, v ? "SplitV" : "Split", static_cast<int>(num)}, {n.name()});
  for (int k = 0; k < num; ++k) c.Bind(n, k, outs[static_cast<size_t>(k)]);
  return std::nullopt;
}

R Slice(Converter& c, const NodeDef& n) {
  auto begin = c.IntsIn(n, 1), size = c.IntsIn(n, 2);
  if (!begin || !size || begin->size() != size->size()) return Fail("begin and size must be constants of one length");
  std::vector<int64_t> ends, axes;
  for (size_t d = 0; d < begin->size(); ++d) {
    ends.push_back((*size)[d] < 0 ? INT64_MAX : (*begin)[d] + (*size)[d]);
    axes.push_back(static_cast<int64_t>(d));
  }
  std::string s = n.name();
  c.Bind(n, 0, c.b.Add1(s, {"Slice", {c.In(n, 0), c.b.Int64s(s + "/begin", *begin), c.b.Int64s(s + "/end", ends), c.b.Int64s(s + "/axes", axes)}, {}, "Slice"}, {s}));
  return std::nullopt;
}

R StridedSlice(Converter& c, const NodeDef& n) {
  auto begin = c.IntsIn(n, 1), end = c.IntsIn(n, 2), strides = c.IntsIn(n, 3);
  if (!begin || !end || !strides || begin->size() != end->size() || begin->size() != strides->size()) return Fail("begin, end and strides must be constants of one length");
  if (c.AttrInt(n, "ellipsis_mask", 0) || c.AttrInt(n, "new_axis_mask", 0)) return Fail("ellipsis_mask and new_axis_mask are not supported");
  int64_t bm = c.AttrInt(n, "begin_mask", 0), em = c.AttrInt(n, "end_mask", 0), sm = c.AttrInt(n, "shrink_axis_mask", 0);
  std::vector<int64_t> starts, ends, axes, steps, squeeze;
  for (size_t d = 0; d < begin->size(); ++d) {
    int64_t s = (*strides)[d], b = (*begin)[d], e = (*end)[d];
    if (s == 0) return Fail("a stride is 0");
    if (sm >> d & 1) {
      e = b == -1 ? INT64_MAX : b + 1;
      s = 1;
      squeeze.push_back(static_cast<int64_t>(d));
    } else {
      if (bm >> d & 1) b = s > 0 ? 0 : INT64_MAX;
      if (em >> d & 1) e = s > 0 ? INT64_MAX : INT64_MIN;
    }
    starts.push_back(b), ends.push_back(e), axes.push_back(static_cast<int64_t>(d)), steps.push_back(s);
  }
  std::string s = n.name();
  int y = c.b.Add1(squeeze.empty() ? s : s + "/slice",
                   {"Slice", {c.In(n, 0), c.b.Int64s(s + "/begin", starts), c.b.Int64s(s + "/end", ends), c.b.Int64s(s + "/axes", axes), c.b.Int64s(s + "/strides", steps)}, {},
                    squeeze.empty() ? "StridedSlice" : ""},
                   {s});
  if (!squeeze.empty()) y = c.b.Add1(s, {"Squeeze", {y, c.b.Int64s(s + "/shrink", squeeze)}, {}, "StridedSlice"}, {s});
  c.Bind(n, 0, y);
  return std::nullopt;
}

R Reshape(Converter& c, const NodeDef& n) {
  AttrMap attrs;
  if (auto shape = c.IntsIn(n, 1); shape && std::find(shape->begin(), shape->end(), 0) != shape->end()) attrs["allowzero"] = int64_t{1};  // TF's 0 is a 0
  c.Bind(n, 0, c.b.Add1(n.name(), {"Reshape", {c.In(n, 0), CastTo(c, n.name() + "/shape_i64", c.In(n, 1), DType::kI64)}, attrs, "Reshape"}, {n.name()}));
  return std::nullopt;
}

R Squeeze(Converter& c, const NodeDef& n) {
  auto dims = c.AttrInts(n, "squeeze_dims");
  std::vector<int> ins{c.In(n, 0)};
  if (!dims.empty()) ins.push_back(c.b.Int64s(n.name() + "/axes", dims));
  c.Bind(n, 0, c.b.Add1(n.name(), {"Squeeze", ins, {}, "Squeeze"}, {n.name()}));
  return std::nullopt;
}

R ExpandDims(Converter& c, const NodeDef& n) {
  auto dim = c.IntsIn(n, 1);
  if (!dim || dim->size() != 1) return Fail("dim must be a constant scalar");
  c.Bind(n, 0, c.b.Add1(n.name(), {"Unsqueeze", {c.In(n, 0), c.b.Int64s(n.name() + "/axes", *dim)}, {}, "ExpandDims"}, {n.name()}));
  return std::nullopt;
}

R Transpose(Converter& c, const NodeDef& n) {
  auto perm = c.IntsIn(n, 1);
  if (!perm) return Fail("perm must be a constant");
  c.Bind(n, 0, c.b.Add1(n.name(), {"Transpose", {c.In(n, 0)}, {{"perm", *perm}}, "Transpose"}, {n.name()}));
  return std::nullopt;
}

R Pad(Converter& c, const NodeDef& n) {
  auto p = c.IntsIn(n, 1);
  if (!p || p->size() % 2) return Fail("paddings must be a constant [rank, 2]");
  size_t rank = p->size() / 2;
  std::vector<int64_t> pads(p->size());
  for (size_t d = 0; d < rank; ++d) pads[d] = (*p)[2 * d], pads[d + rank] = (*p)[2 * d + 1];
  AttrMap attrs{{"mode", std::string("constant")}};
  if (n.op() == "MirrorPad") {
    std::string mode = c.AttrString(n, "mode", "REFLECT");
    if (mode != "REFLECT") return Fail("MirrorPad mode '" + mode + "' (only REFLECT is supported)");
    attrs["mode"] = std::string("reflect");
  }
  std::vector<int> ins{c.In(n, 0), c.b.Int64s(n.name() + "/pads", pads)};
  if (n.op() == "PadV2") ins.push_back(c.In(n, 2));
  c.Bind(n, 0, c.b.Add1(n.name(), {"Pad", ins, attrs, std::string(n.op())}, {n.name()}));
  return std::nullopt;
}

R Tile(Converter& c, const NodeDef& n) {
  c.Bind(n, 0, c.b.Add1(n.name(), {"Tile", {c.In(n, 0), CastTo(c, n.name() + "/multiples_i64", c.In(n, 1), DType::kI64)}, {}, "Tile"}, {n.name()}));
  return std::nullopt;
}

R GatherV2(Converter& c, const NodeDef& n) {
  auto axis = c.IntsIn(n, 2);
  if (!axis || axis->size() != 1) return Fail("axis must be a constant scalar");
  if (c.AttrInt(n, "batch_dims", 0) != 0) return Fail("batch_dims other than 0");
  c.Bind(n, 0, c.b.Add1(n.name(), {"Gather", {c.In(n, 0), c.In(n, 1)}, {{"axis", (*axis)[0]}}, "GatherV2"}, {n.name()}));
  return std::nullopt;
}

R Resize(Converter& c, const NodeDef& n) {
  const bool bilinear = n.op() == "ResizeBilinear";
  bool align = c.AttrBool(n, "align_corners", false), half = c.AttrBool(n, "half_pixel_centers", false);
  AttrMap attrs{{"mode", std::string(bilinear ? "linear" : "nearest")}};
  attrs["coordinate_transformation_mode"] = std::string(align ? "align_corners" : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nearest") : "asymmetric");
  if (!bilinear) attrs["nearest_mode"] = std::string(align ? "round_prefer_ceil" : "floor");
  const std::string s = n.name();
  int x = ToFirst(c, n, c.In(n, 0), true, 4);
  // sizes = [N, C] of the input, then TF's [new_height, new_width].
  int shape = c.b.Add1(s + "/shape", {"Shape", {x}}, {s});
  int nc = c.b.Add1(s + "/nc", {"Slice", {shape, c.b.Int64s(s + "/zero", {0}), c.b.Int64s(s + "/two", {2})}}, {s});
  int sizes = c.b.Add1(s + "/sizes", {"Concat", {nc, CastTo(c, s + "/size_i64", c.In(n, 1), DType::kI64)}, {{"axis", int64_t{0}}}}, {s});
  int y = c.b.Add1(s, {"Resize", {x, -1, -1, sizes}, attrs, bilinear ? "ResizeBilinearV2" : "ResizeNearestNeighborV2"}, {s});
  c.Bind(n, 0, ToLast(c, n, y, true, 4));
  return std::nullopt;
}

// OneHot(indices, depth, on, off) over the last axis: (indices[..., None] == range(depth)) ? on : off.
R OneHot(Converter& c, const NodeDef& n) {
  if (c.AttrInt(n, "axis", -1) != -1) return Fail("axis other than -1");
  const std::string s = n.name();
  int idx = c.b.Add1(s + "/indices", {"Unsqueeze", {CastTo(c, s + "/indices_i64", c.In(n, 0), DType::kI64), c.b.Int64s(s + "/last", {-1})}}, {s});
  int depth = CastTo(c, s + "/depth_i64", c.In(n, 1), DType::kI64);
  int zero = c.b.Constant(s + "/start", Tensor::Zeros(DType::kI64, {}));
  Tensor one_t = Tensor::Empty(DType::kI64, {});
  *one_t.mutable_data<int64_t>() = 1;
  int range = c.b.Add1(s + "/range", {"Range", {zero, depth, c.b.Constant(s + "/delta", std::move(one_t))}}, {s});
  int hit = c.b.Add1(s + "/hit", {"Equal", {idx, range}}, {s});
  c.Bind(n, 0, c.b.Add1(s, {"Where", {hit, c.In(n, 2), c.In(n, 3)}, {}, "OneHot"}, {s}));
  return std::nullopt;
}

R ShapeOps(Converter& c, const NodeDef& n) {
  const std::string s = n.name();
  auto t = c.AttrType(n, "out_type");
  DType out = t && *t == 9 /* DT_INT64 */ ? DType::kI64 : DType::kI32;
  int y;
  if (n.op() == "Shape") y = c.b.Add1(s + "/i64", {"Shape", {c.In(n, 0)}, {}, "Shape"}, {s});
  else if (n.op() == "Size") y = c.b.Add1(s + "/i64", {"Size", {c.In(n, 0)}, {}, "Size"}, {s});
  else y = c.b.Add1(s + "/i64", {"Size", {c.b.Add1(s + "/shape", {"Shape", {c.In(n, 0)}}, {s})}, {}, "Rank"}, {s});
  c.Bind(n, 0, CastTo(c, s, y, n.op() == "Rank" ? DType::kI32 : out));
  return std::nullopt;
}

R Fill(Converter& c, const NodeDef& n) {
  c.Bind(n, 0, c.b.Add1(n.name(), {"Expand", {c.In(n, 1), CastTo(c, n.name() + "/dims_i64", c.In(n, 0), DType::kI64)}, {}, "Fill"}, {n.name()}));
  return std::nullopt;
}

// Random ops run on the AI CPU on the device; here too they are seeded by seed/seed2, so a run repeats.
R Random(Converter& c, const NodeDef& n) {
  auto t = c.AttrType(n, "dtype");
  auto dt = t ? FromTfType(*t) : std::nullopt;
  if (!dt || !IsFloat(*dt)) return Fail("a random tensor of a type other than float");
  AttrMap attrs{{"seed", c.AttrInt(n, "seed", 0)}, {"seed2", c.AttrInt(n, "seed2", 0)}, {"dtype", static_cast<int64_t>(*dt)}};
  bool normal = n.op() == "RandomStandardNormal";
  c.Bind(n, 0, c.b.Add1(n.name(), {normal ? "RandomStandardNormal" : "RandomUniform", {CastTo(c, n.name() + "/shape_i64", c.In(n, 0), DType::kI64)}, attrs, std::string(n.op())}, {n.name()}));
  return std::nullopt;
}

constexpr OpEntry kOps[] = {
    {"Placeholder", Placeholder}, {"PlaceholderWithDefault", Passthrough}, {"Const", Const},
    {"Identity", Passthrough}, {"IdentityN", Passthrough}, {"StopGradient", Passthrough}, {"Snapshot", Passthrough},
    {"PreventGradient", Passthrough}, {"NoOp", NoOp},
    {"Conv2D", Conv}, {"DepthwiseConv2dNative", Conv}, {"Conv3D", Conv}, {"Conv2DBackpropInput", ConvBackpropInput},
    {"MaxPool", Pool}, {"AvgPool", Pool}, {"MaxPool3D", Pool}, {"AvgPool3D", Pool},
    {"BiasAdd", BiasAdd}, {"FusedBatchNorm", FusedBatchNorm}, {"FusedBatchNormV2", FusedBatchNorm}, {"FusedBatchNormV3", FusedBatchNorm},
    {"MatMul", MatMul}, {"BatchMatMul", BatchMatMul}, {"BatchMatMulV2", BatchMatMul},
    {"Relu6", Relu6}, {"LeakyRelu", LeakyRelu}, {"Square", Square}, {"Rsqrt", Rsqrt}, {"SquaredDifference", SquaredDifference},
    {"Softmax", Softmax}, {"LogSoftmax", Softmax}, {"Cast", Cast},
    {"Mean", Reduce}, {"Sum", Reduce}, {"Max", Reduce}, {"Min", Reduce}, {"Prod", Reduce}, {"ArgMax", ArgMax}, {"ArgMin", ArgMax},
    {"ConcatV2", ConcatV2}, {"Pack", Pack}, {"Unpack", Unpack}, {"Split", Split}, {"SplitV", Split}, {"Slice", Slice},
    {"StridedSlice", StridedSlice}, {"Reshape", Reshape}, {"Squeeze", Squeeze}, {"ExpandDims", ExpandDims}, {"Transpose", Transpose},
    {"Pad", Pad}, {"PadV2", Pad}, {"MirrorPad", Pad}, {"Tile", Tile}, {"GatherV2", GatherV2},
    {"ResizeBilinear", Resize}, {"ResizeNearestNeighbor", Resize}, {"OneHot", OneHot},
    {"Shape", ShapeOps}, {"Size", ShapeOps}, {"Rank", ShapeOps}, {"Fill", Fill},
    {"RandomStandardNormal", Random}, {"RandomUniform", Random},
    {"ZerosLike", FilledLike}, {"OnesLike", FilledLike}, {"FloorDiv", FloorDivMod}, {"FloorMod", FloorDivMod},
    {"ClipByValue", ClipByValue}, {"SpaceToDepth", SpaceDepth}, {"DepthToSpace", SpaceDepth}, {"LRN", Lrn},
    {"Gather", Gather}, {"TopKV2", TopK}, {"SpaceToBatchND", SpaceBatchNd}, {"BatchToSpaceND", SpaceBatchNd},
};

// Ops CANN's TF parser knows but npukit does not convert, with why.
constexpr std::pair<std::string_view, std::string_view> kKnownUnsupported[] = {
    {"Switch", "control flow (tf.cond / tf.while_loop); freeze the graph with the branch taken"},
    {"RefSwitch", "control flow"}, {"Merge", "control flow"}, {"RefMerge", "control flow"}, {"Enter", "control flow (a while loop)"},
    {"RefEnter", "control flow"}, {"Exit", "control flow (a while loop)"}, {"RefExit", "control flow"},
    {"NextIteration", "control flow (a while loop)"}, {"RefNextIteration", "control flow"}, {"LoopCond", "control flow (a while loop)"},
    {"PartitionedCall", "a function call (E12013); inline the function before freezing"},
    {"StatefulPartitionedCall", "a function call (E12013); inline the function before freezing"},
    {"VarHandleOp", "a resource variable; freeze the graph (variables to constants)"},
    {"ReadVariableOp", "a resource variable; freeze the graph (variables to constants)"},
    {"VariableV2", "a variable; freeze the graph (variables to constants)"},
    {"Variable", "a variable; freeze the graph (variables to constants)"},
    {"Assign", "a variable update"}, {"AssignVariableOp", "a variable update"},
    {"StringJoin", "a string op"}, {"AsString", "a string op"}, {"DecodeJpeg", "a string op (image decoding)"},
    {"ParseExample", "a string op (tf.Example parsing)"},
};

}  // namespace

const OpEntry* FindOp(std::string_view tf_type) {
  for (const OpEntry& e : kOps)
    if (e.tf_type == tf_type) return &e;
  for (const Simple& s : kSimple)
    if (s.tf == tf_type) {
      static const OpEntry simple{"", ConvertSimple};
      return &simple;
    }
  return nullptr;
}

std::optional<std::string> KnownUnsupported(std::string_view tf_type) {
  for (const auto& [op, why] : kKnownUnsupported)
    if (op == tf_type) return std::string(why);
  return std::nullopt;
}

}  // namespace npu::tf
