// GE's layer ops that have no one-to-one ONNX twin: Caffe's Pooling and FullyConnection (as CANN's Caffe parser
// leaves them in an .om), TF's Conv2DBackpropInput(D) and Caffe's Deconvolution (a ConvTranspose), and AMCT's
// AscendQuant / AscendDequant / AscendAntiQuant, which npukit's kernels take with GE's own attributes.
#include <cstring>
#include <numeric>

#include "frontend/ge/ge_op.h"
#include "frontend/ge/ge_ops.h"

namespace npu {
namespace {

constexpr int64_t kCaffePoolMax = 0, kCaffePoolAvg = 1;  // Pooling's mode (CANN's Pooling op: 0 max, 1 avg)
// npukit's AscendDequant dtype attribute: ge::DataType's numbering (DT_FLOAT 0, DT_FLOAT16 1).
constexpr int64_t kGeDtFloat = 0, kGeDtFloat16 = 1;

// What a transposed convolution needs beside its window: the output_padding that makes the output's size, from
// y = (x - 1) * stride - pads + dilation * (k - 1) + 1 + output_padding.
ConvertResult SetTransposedWindow(GeOp& c, const Shape& x, const Shape& w, const Shape& y) {
  const std::string format = c.HeldNhwc(c.node().inputs[0]) ? "NHWC" : c.ge.attr_string("data_format", "NCHW");
  auto strides = Spatial(c.ints("strides"), format).value_or(std::array<int64_t, 2>{1, 1});
  auto dilations = Spatial(c.ints("dilations"), format).value_or(std::array<int64_t, 2>{1, 1});
  const std::string padding = c.ge.attr_string("padding", "");
  auto p = c.ints("pads");
  std::vector<int64_t> pads(4, 0);  // npukit (ONNX): begins, then ends
  std::vector<int64_t> output_padding(2);
  for (size_t d = 0; d < 2; ++d) {
    const int64_t k = (w[2 + d] - 1) * dilations[d] + 1, s = strides[d];
    if (padding == "SAME") {  // the forward conv's SAME padding, odd pixel at the end
      const int64_t total = std::max<int64_t>((x[2 + d] - 1) * s + k - y[2 + d], 0);
      pads[d] = total / 2, pads[d + 2] = total - total / 2;
    } else if (padding != "VALID" && p.size() == 4) {
      pads[d] = p[2 * d], pads[d + 2] = p[2 * d + 1];  // GE: top, bottom, left, right
    }
    output_padding[d] = y[2 + d] - ((x[2 + d] - 1) * s - pads[d] - pads[d + 2] + k);
    if (output_padding[d] < 0 || output_padding[d] >= std::max(s, dilations[d]))
      return "no output padding makes its output " + ShapeToString(y) + " from " + ShapeToString(x) + " with these strides and pads";
  }
  Node& n = c.node();
  n.attrs["kernel_shape"] = std::vector<int64_t>{w[2], w[3]};
  n.attrs["strides"] = std::vector<int64_t>{strides[0], strides[1]};
  n.attrs["dilations"] = std::vector<int64_t>{dilations[0], dilations[1]};
  n.attrs["pads"] = pads;
  n.attrs["output_padding"] = output_padding;
  n.attrs["group"] = c.ge.attr_int("groups", 1);
  return {};
}

}  // namespace

// Caffe's Pooling: mode 0 max, 1 average (Caffe counts the zero padding in an average); global_pooling; the
// window from window/stride/pad, rounding (ceil_mode) read off the output's size.
ConvertResult MapCaffePooling(GeOp& c) {
  const Shape &x = c.in(0).shape, &y = c.out(0).shape;
  if (x.size() != 4 || y.size() != 4) return "its input and output are not 4-D";
  const int64_t mode = c.ge.attr_int("mode", kCaffePoolMax);
  if (mode != kCaffePoolMax && mode != kCaffePoolAvg) return "its mode " + std::to_string(mode) + " (npukit pools by max or average)";
  Node& n = c.node();
  if (c.ge.attr_int("global_pooling", 0) != 0) {
    n.op_type = mode == kCaffePoolMax ? "GlobalMaxPool" : "GlobalAveragePool";
    n.opset = 1;
    return {};
  }
  auto k = Spatial(c.ints("window"), "NCHW"), s = Spatial(c.ints("stride"), "NCHW");
  auto p = c.ints("pad");
  if (!k || !s || p.size() != 4) return "its window, stride or pad attribute is missing";
  std::vector<int64_t> pads = {p[0], p[2], p[1], p[3]};  // GE: top, bottom, left, right
  int64_t ceil_mode = 0;
  for (size_t d = 0; d < 2; ++d) {
    const int64_t span = x[2 + d] + p[2 * d] + p[2 * d + 1] - (*k)[d];
    if (span < 0 || (*s)[d] < 1) return "its window does not fit its input";
    const int64_t floor_out = span / (*s)[d] + 1, ceil_out = (span + (*s)[d] - 1) / (*s)[d] + 1;
    if (y[2 + d] == ceil_out && ceil_out != floor_out) ceil_mode = 1;
    else if (y[2 + d] != floor_out) return "no rounding of its window makes the output " + ShapeToString(y);
  }
  n.op_type = mode == kCaffePoolMax ? "MaxPool" : "AveragePool";
  n.opset = mode == kCaffePoolMax ? 12 : 11;
  n.attrs["kernel_shape"] = std::vector<int64_t>{(*k)[0], (*k)[1]};
  n.attrs["strides"] = std::vector<int64_t>{(*s)[0], (*s)[1]};
  n.attrs["pads"] = pads;
  n.attrs["ceil_mode"] = ceil_mode;
  if (mode == kCaffePoolAvg) n.attrs["count_include_pad"] = int64_t{1};
  return {};
}

// FullyConnection: y = flatten(x from axis) times the weight (num_output rows, from Caffe; or a HWCN filter of a
// 1x1 conv TF's converter made one) plus bias, as a Gemm between a Reshape in and a Reshape out.
ConvertResult MapFullyConnection(GeOp& c) {
  if (!c.has_in(1) || !c.in(1).constant) return "its weight is not a constant";
  if (auto why = c.TrimOptional(3, "offset_w (int8)")) return why;
  if (auto why = NoOffsetX(c)) return why;
  const Shape& x = c.in(0).shape;
  const int64_t axis = c.ge.attr_int("axis", 1), n_out = c.ge.attr_int("num_output", 0);
  if (axis < 1 || axis > static_cast<int64_t>(x.size())) return "its axis " + std::to_string(axis) + " does not fit its input";
  const int64_t m = std::accumulate(x.begin(), x.begin() + axis, int64_t{1}, std::multiplies<>()),
                k = std::accumulate(x.begin() + axis, x.end(), int64_t{1}, std::multiplies<>());
  if (c.HeldNhwc(c.node().inputs[0]) && k != x[1]) return "it flattens an NHWC tensor held channels-first with H or W above 1";
  const Shape& w = c.in(1).shape;
  if (n_out < 1 || NumElements(w) != n_out * k) return "its weight " + ShapeToString(w) + " is not num_output " + std::to_string(n_out) + " by " + std::to_string(k);
  // Caffe's weight is [num_output, K...]; a filter TF's converter made is [..., K, num_output] (HWCN). A square
  // weight is read as Caffe's.
  const bool rows_are_outputs = w[0] == n_out && NumElements(Shape(w.begin() + 1, w.end())) == k;
  if (!rows_are_outputs && w.back() != n_out) return "its weight " + ShapeToString(w) + " has num_output neither first nor last";
  c.node().inputs[1] = c.Reshaped(c.node().inputs[1], rows_are_outputs ? Shape{n_out, k} : Shape{k, n_out});
  if (c.has_in(2)) {
    if (NumElements(c.in(2).shape) != n_out || !c.in(2).constant) return "its bias is not a constant of num_output values";
    c.node().inputs[2] = c.Reshaped(c.node().inputs[2], {n_out});
  }
  c.node().attrs["transB"] = int64_t{rows_are_outputs};
  if (x.size() != 2) c.InsertBefore(0, "Reshape", {}, {c.Ints("flat", {m, k})}, {m, k});
  if (c.out(0).shape != Shape{m, n_out}) c.InsertAfter("Reshape", {}, {c.Ints("shape", c.out(0).shape)}, {m, n_out});
  return {};
}

// Conv2DBackpropInputD (filter, out_backprop; input_size attr) and Conv2DBackpropInput (input_size, filter,
// out_backprop): the gradient of a conv by its input is the transposed conv of out_backprop by the filter.
ConvertResult MapConvBackpropInput(GeOp& c) {
  const bool d_form = c.ge_type.ends_with("D");
  const size_t f = d_form ? 0 : 1, dy = d_form ? 1 : 2;
  if (!c.has_in(f) || !c.has_in(dy)) return "it has no filter or out_backprop input";
  if (auto why = NoOffsetX(c)) return why;
  c.node().inputs = {c.node().inputs[dy], c.node().inputs[f]};
  const Shape &x = c.in(0).shape, &w = c.in(1).shape, &y = c.out(0).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return "its tensors are not all 4-D";
  return SetTransposedWindow(c, x, w, y);
}

// Caffe's Deconvolution (x, filter, bias).
ConvertResult MapDeconvolution(GeOp& c) {
  if (!c.has_in(1)) return "it has no filter input";
  if (auto why = c.TrimOptional(3, "offset_w (int8)")) return why;
  if (auto why = NoOffsetX(c)) return why;
  const Shape &x = c.in(0).shape, &w = c.in(1).shape, &y = c.out(0).shape;
  if (x.size() != 4 || w.size() != 4 || y.size() != 4) return "its tensors are not all 4-D";
  return SetTransposedWindow(c, x, w, y);
}

// AscendQuant (scale, offset, sqrt_mode, round_mode), AscendDequant (deq_scale input; sqrt_mode, relu_flag) and
// AscendAntiQuant (scale, offset, sqrt_mode): npukit's kernels read GE's attributes as they are; the result's
// dtype is the output desc's.
ConvertResult MapKeepAttrs(GeOp& c) {
  for (const auto& [k, v] : c.ge.attrs)
    if (!k.starts_with("_")) c.node().attrs[k] = v;
  if (c.ge_type == "AscendDequant" || c.ge_type == "AscendAntiQuant")
    c.node().attrs["dtype"] = c.out(0).dtype == DType::kF16 ? kGeDtFloat16 : kGeDtFloat;
  return {};
}

// BatchMultiClassNonMaxSuppression (boxes, scores, clip_window, num_valid_boxes): npukit's kernel takes GE's
// attributes; boxes laid out [batch, q, 4, anchors] (transpose_box) are not read.
ConvertResult MapNms(GeOp& c) {
  if (c.ge.attr_int("transpose_box", 0) != 0) return "its transpose_box (boxes as [batch, q, 4, anchors])";
  if (c.node().outputs.size() != 4) return "it has " + std::to_string(c.node().outputs.size()) + " outputs, not 4";
  auto& ins = c.node().inputs;
  while (!ins.empty() && ins.back() < 0) ins.pop_back();
  return MapKeepAttrs(c);
}

// OneHotD (x, on_value, off_value; depth, axis) and OneHot (x, depth, on_value, off_value; axis): ONNX's OneHot
// with values [off, on]; TF's negative indices give the off value (negative_is_off).
ConvertResult MapOneHot(GeOp& c) {
  const bool d_form = c.ge_type == "OneHotD";
  const size_t on = d_form ? 1 : 2, off = d_form ? 2 : 3;
  std::optional<int64_t> depth;
  if (d_form) depth = c.ge.attr_int("depth", 0);
  else if (auto d = c.IntConst(1); d && d->size() == 1) depth = (*d)[0];
  if (!depth || *depth < 1) return "its depth is not a positive constant";
  if (!c.has_in(on) || !c.has_in(off) || !c.in(on).constant || !c.in(off).constant || c.in(on).constant->numel() != 1 ||
      c.in(off).constant->numel() != 1 || c.in(on).dtype != c.in(off).dtype)
    return "its on_value and off_value are not constant scalars of one dtype";
  if (c.HeldNhwc(c.node().inputs[0])) return "its indices are an NHWC tensor held channels-first";
  const Tensor &on_t = *c.in(on).constant, &off_t = *c.in(off).constant;
  Tensor values = Tensor::Empty(on_t.dtype(), {2});
  const size_t size = DTypeSize(on_t.dtype());
  std::memcpy(values.mutable_raw(), off_t.raw(), size);
  std::memcpy(values.mutable_raw() + size, on_t.raw(), size);
  const int v = c.b.Constant(c.node().name + "/values", std::move(values));
  c.node().inputs = {c.node().inputs[0], c.Ints("depth", {*depth}), v};
  c.node().attrs["axis"] = c.ge.attr_int("axis", -1);
  c.node().attrs["negative_is_off"] = int64_t{1};
  return {};
}

}  // namespace npu
