// One converter per Caffe layer type: the internal nodes it becomes, CANN's Ascend IR type for the node that
// stands for it (Ascend/parser's op_map.cc and the
// caffe_plugin registrations of CANN's built-in ops), and its parameters read with Caffe's defaults. Caffe is
// NCHW, as npukit's ops are.
#include <climits>
#include <cmath>

#include "frontend/caffe/caffe_convert.h"

namespace npu::caffe {

// ---- Converter -------------------------------------------------------------------------------------------------

std::string Converter::OutName(const Layer& l) const {
  bool in_place = l.top_size() > 0 && std::find(l.bottom().begin(), l.bottom().end(), l.top(0)) != l.bottom().end();
  return in_place || l.top_size() == 0 ? l.name() : l.top(0);
}

const std::vector<Tensor>* Converter::Weights(const std::string& layer) const {
  auto it = weights_.find(layer);
  return it == weights_.end() ? nullptr : &it->second;
}

int Converter::WeightValue(const Layer& l, int k, const std::string& suffix) {
  return b.Constant(l.name() + "/" + suffix, (*Weights(l.name()))[static_cast<size_t>(k)]);
}

namespace {

using R = ConvertResult;

// A weight blob reshaped to `shape` (legacy 4-D blobs hold a vector as [1, 1, 1, n]).
int WeightAs(Converter& c, const Layer& l, int k, const std::string& suffix, Shape shape) {
  const Tensor& t = (*c.Weights(l.name()))[static_cast<size_t>(k)];
  return c.b.Constant(l.name() + "/" + suffix, t.numel() == NumElements(shape) ? t.Reshaped(std::move(shape)) : t);
}

int64_t BlobElements(Converter& c, const Layer& l, int k) { return (*c.Weights(l.name()))[static_cast<size_t>(k)].numel(); }

// A per-channel vector broadcast along dim 1 of an N-D tensor: [C] -> [C, 1, 1] (for 4-D data).
Shape ChannelShape(int64_t c, int trailing) {
  Shape s{c};
  s.insert(s.end(), static_cast<size_t>(trailing), 1);
  return s;
}

// pad / kernel_size / stride: one value for both dims, two for (h, w), or the _h/_w fields.
std::pair<int64_t, int64_t> HW(const google::protobuf::RepeatedField<uint32_t>& v, bool has_hw, uint32_t h, uint32_t w, int64_t def) {
  if (has_hw) return {h, w};
  if (v.empty()) return {def, def};
  return {v.Get(0), v.size() > 1 ? v.Get(1) : v.Get(0)};
}

R Convolution(Converter& c, const Layer& l) {
  const auto& p = l.convolution_param();
  if (p.axis() != 1) return "axis other than 1";
  const bool deconv = l.type() == "Deconvolution";
  auto [kh, kw] = HW(p.kernel_size(), p.has_kernel_h() || p.has_kernel_w(), p.kernel_h(), p.kernel_w(), 0);
  auto [ph, pw] = HW(p.pad(), p.has_pad_h() || p.has_pad_w(), p.pad_h(), p.pad_w(), 0);
  auto [sh, sw] = HW(p.stride(), p.has_stride_h() || p.has_stride_w(), p.stride_h(), p.stride_w(), 1);
  auto [dh, dw] = HW(p.dilation(), false, 0, 0, 1);
  const Tensor& w = (*c.Weights(l.name()))[0];
  if (w.rank() != 4 || kh <= 0 || kw <= 0 || w.shape()[2] != kh || w.shape()[3] != kw)
    return "the weight blob " + ShapeToString(w.shape()) + " does not fit kernel " + std::to_string(kh) + "x" + std::to_string(kw);
  int64_t group = l.type() == "DepthwiseConvolution" ? w.shape()[0] : p.group();
  AttrMap attrs{{"strides", std::vector<int64_t>{sh, sw}}, {"dilations", std::vector<int64_t>{dh, dw}},
                {"pads", std::vector<int64_t>{ph, pw, ph, pw}}, {"group", group}, {"kernel_shape", std::vector<int64_t>{kh, kw}}};
  std::vector<int> ins{c.Bottom(l, 0), c.WeightValue(l, 0, "weight")};
  if (p.bias_term() && c.Weights(l.name())->size() > 1) ins.push_back(WeightAs(c, l, 1, "bias", {BlobElements(c, l, 1)}));
  std::string name = c.OutName(l);
  c.Top(l, 0, c.b.Add1(name, {deconv ? "ConvTranspose" : "Conv", ins, attrs, deconv ? "Deconvolution" : "Conv2D"}, {l.name()}));
  return std::nullopt;
}

R InnerProduct(Converter& c, const Layer& l) {
  const auto& p = l.inner_product_param();
  const std::string name = c.OutName(l);
  const Tensor& w = (*c.Weights(l.name()))[0];
  int64_t n = p.num_output(), k = n ? w.numel() / n : 0;
  if (n <= 0 || k * n != w.numel()) return "num_output " + std::to_string(n) + " does not divide the weight blob " + ShapeToString(w.shape());
  int flat = c.b.Add1(name + "/flatten", {"Flatten", {c.Bottom(l, 0)}, {{"axis", static_cast<int64_t>(p.axis())}}}, {l.name()});
  std::vector<int> ins{flat, WeightAs(c, l, 0, "weight", p.transpose() ? Shape{k, n} : Shape{n, k})};
  if (p.bias_term() && c.Weights(l.name())->size() > 1) ins.push_back(WeightAs(c, l, 1, "bias", {n}));
  c.Top(l, 0, c.b.Add1(name, {"Gemm", ins, {{"transB", int64_t{!p.transpose()}}}, "FullyConnection"}, {l.name()}));
  return std::nullopt;
}

R Pooling(Converter& c, const Layer& l) {
  const auto& p = l.pooling_param();
  if (p.pool() == npukit::caffe::PoolingParameter::STOCHASTIC) return "STOCHASTIC pooling (a training op)";
  const bool max = p.pool() == npukit::caffe::PoolingParameter::MAX;
  const std::string name = c.OutName(l);
  if (p.global_pooling()) {
    c.Top(l, 0, c.b.Add1(name, {max ? "GlobalMaxPool" : "GlobalAveragePool", {c.Bottom(l, 0)}, {}, "Pooling"}, {l.name()}));
    return std::nullopt;
  }
  int64_t kh = p.has_kernel_h() ? p.kernel_h() : p.kernel_size(), kw = p.has_kernel_w() ? p.kernel_w() : p.kernel_size();
  int64_t sh = p.has_stride_h() ? p.stride_h() : p.stride(), sw = p.has_stride_w() ? p.stride_w() : p.stride();
  int64_t ph = p.has_pad_h() ? p.pad_h() : p.pad(), pw = p.has_pad_w() ? p.pad_w() : p.pad();
  if (kh <= 0 || kw <= 0 || sh <= 0 || sw <= 0) return "kernel and stride must be positive";
  // Caffe rounds the output size up (unless round_mode: FLOOR) and counts the zero padding in an average
  // (not the part of a window past it): ONNX's ceil_mode and count_include_pad.
  AttrMap attrs{{"kernel_shape", std::vector<int64_t>{kh, kw}}, {"strides", std::vector<int64_t>{sh, sw}},
                {"pads", std::vector<int64_t>{ph, pw, ph, pw}}, {"ceil_mode", int64_t{p.round_mode() == npukit::caffe::PoolingParameter::CEIL}}};
  if (!max) attrs["count_include_pad"] = int64_t{1};
  c.Top(l, 0, c.b.Add1(name, {max ? "MaxPool" : "AveragePool", {c.Bottom(l, 0)}, attrs, "Pooling"}, {l.name()}));
  return std::nullopt;
}

R ReLU(Converter& c, const Layer& l) {
  float slope = l.relu_param().negative_slope();
  const std::string name = c.OutName(l);
  if (slope == 0.f) c.Top(l, 0, c.b.Add1(name, {"Relu", {c.Bottom(l, 0)}, {}, "Relu"}, {l.name()}));
  else c.Top(l, 0, c.b.Add1(name, {"LeakyRelu", {c.Bottom(l, 0)}, {{"alpha", slope}}, "LeakyRelu"}, {l.name()}));
  return std::nullopt;
}

R PReLU(Converter& c, const Layer& l) {
  int64_t n = BlobElements(c, l, 0);
  // The slope runs along the channels (dim 1); a shared one is a scalar.
  int slope = WeightAs(c, l, 0, "slope", l.prelu_param().channel_shared() ? Shape{1} : ChannelShape(n, 2));
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"PRelu", {c.Bottom(l, 0), slope}, {}, "PRelu"}, {l.name()}));
  return std::nullopt;
}

struct Unary {
  std::string_view caffe, internal, ascend;
};
constexpr Unary kUnary[] = {{"Sigmoid", "Sigmoid", "Sigmoid"}, {"TanH", "Tanh", "Tanh"}, {"AbsVal", "Abs", "Abs"}, {"BNLL", "Softplus", "BNLL"}};

R SimpleUnary(Converter& c, const Layer& l) {
  for (const Unary& u : kUnary)
    if (u.caffe == l.type()) c.Top(l, 0, c.b.Add1(c.OutName(l), {std::string(u.internal), {c.Bottom(l, 0)}, {}, std::string(u.ascend)}, {l.name()}));
  return std::nullopt;
}

R ELU(Converter& c, const Layer& l) {
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"Elu", {c.Bottom(l, 0)}, {{"alpha", l.elu_param().alpha()}}, "Elu"}, {l.name()}));
  return std::nullopt;
}

// shift + scale * x, skipping the identity parts.
int Affine(Converter& c, const Layer& l, int x, float scale, float shift) {
  const std::string name = c.OutName(l);
  if (scale != 1.f) x = c.b.Add1(name + "/scale", {"Mul", {x, c.b.Scalar(name + "/scale_value", scale)}}, {l.name()});
  if (shift != 0.f) x = c.b.Add1(name + "/shift", {"Add", {x, c.b.Scalar(name + "/shift_value", shift)}}, {l.name()});
  return x;
}

R Power(Converter& c, const Layer& l) {
  const auto& p = l.power_param();
  int x = Affine(c, l, c.Bottom(l, 0), p.scale(), p.shift());
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"Pow", {x, c.b.Scalar(c.OutName(l) + "/power", p.power())}, {}, "Power"}, {l.name()}));
  return std::nullopt;
}

// Exp: base^(shift + scale x) = e^((shift + scale x) ln base). Log: log_base(shift + scale x) = ln(...) / ln base.
R ExpLog(Converter& c, const Layer& l) {
  const bool exp = l.type() == "Exp";
  const auto& p = exp ? l.exp_param() : l.log_param();
  if (p.base() != -1.f && p.base() <= 0.f) return "base must be positive (or -1 for e)";
  const float ln_base = p.base() == -1.f ? 1.f : std::log(p.base());
  const std::string name = c.OutName(l);
  int x = Affine(c, l, c.Bottom(l, 0), p.scale() * (exp ? ln_base : 1.f), p.shift() * (exp ? ln_base : 1.f));
  if (exp) {
    c.Top(l, 0, c.b.Add1(name, {"Exp", {x}, {}, "Exp"}, {l.name()}));
  } else {
    int y = c.b.Add1(ln_base == 1.f ? name : name + "/ln", {"Log", {x}, {}, ln_base == 1.f ? "Log" : ""}, {l.name()});
    if (ln_base != 1.f) y = c.b.Add1(name, {"Mul", {y, c.b.Scalar(name + "/inv_ln_base", 1.f / ln_base)}, {}, "Log"}, {l.name()});
    c.Top(l, 0, y);
  }
  return std::nullopt;
}

R Softmax(Converter& c, const Layer& l) {
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"Softmax", {c.Bottom(l, 0)}, {{"axis", static_cast<int64_t>(l.softmax_param().axis())}}, "SoftmaxV2"}, {l.name()}));
  return std::nullopt;
}

// BatchNorm's blobs are (mean, variance, moving-average factor): the statistics are the first two divided by
// the factor (0 when it is 0). The Scale layer after it becomes its gamma and beta in the import passes
// (frontend/import_fusion.h).
R BatchNorm(Converter& c, const Layer& l) {
  const auto& w = *c.Weights(l.name());
  if (w.size() < 2) return "BatchNorm needs mean and variance blobs";
  const int64_t ch = w[0].numel();
  float factor = w.size() > 2 && w[2].numel() > 0 ? w[2].data<float>()[0] : 1.f;
  float inv = factor == 0.f ? 0.f : 1.f / factor;
  Tensor mean = Tensor::Empty(DType::kF32, {ch}), var = Tensor::Empty(DType::kF32, {ch});
  if (w[1].numel() != ch) return "the mean and variance blobs differ in size";
  for (int64_t i = 0; i < ch; ++i) {
    mean.mutable_data<float>()[i] = w[0].data<float>()[i] * inv;
    var.mutable_data<float>()[i] = w[1].data<float>()[i] * inv;
  }
  Tensor gamma = Tensor::Empty(DType::kF32, {ch}), beta = Tensor::Zeros(DType::kF32, {ch});
  std::fill_n(gamma.mutable_data<float>(), ch, 1.f);
  std::vector<int> ins{c.Bottom(l, 0), c.b.Constant(l.name() + "/gamma", gamma), c.b.Constant(l.name() + "/beta", beta),
                       c.b.Constant(l.name() + "/mean", mean), c.b.Constant(l.name() + "/variance", var)};
  int y = c.b.Add1(c.OutName(l), {"BatchNormalization", ins, {{"epsilon", l.batch_norm_param().eps()}}, "BNInference"}, {l.name()});
  c.Top(l, 0, y);
  return std::nullopt;
}

// Scale / Bias: a per-channel (axis 1, one axis) factor or offset from the blobs or a second bottom.
R ScaleBias(Converter& c, const Layer& l) {
  const bool is_scale = l.type() == "Scale";
  int axis = is_scale ? l.scale_param().axis() : l.bias_param().axis(), axes = is_scale ? l.scale_param().num_axes() : l.bias_param().num_axes();
  if (axis != 1 || axes != 1) return "only axis 1 with num_axes 1 (a per-channel factor) is supported";
  const std::string name = c.OutName(l);
  const bool from_bottom = l.bottom_size() > 1;
  auto factor = [&](int blob, const std::string& suffix) {
    if (from_bottom && blob == 0) {  // [C] of the second bottom, broadcast along dim 1
      return c.b.Add1(name + "/" + suffix, {"Reshape", {c.Bottom(l, 1), c.b.Int64s(name + "/" + suffix + "_shape", {-1, 1, 1})}}, {l.name()});
    }
    int k = from_bottom ? blob - 1 : blob;
    return WeightAs(c, l, k, suffix, ChannelShape(BlobElements(c, l, k), 2));
  };
  int y = c.Bottom(l, 0);
  if (is_scale) {
    const bool bias = l.scale_param().bias_term();
    y = c.b.Add1(bias ? name + "/mul" : name, {"Mul", {y, factor(0, "scale")}, {}, bias ? "" : "Scale"}, {l.name()});
    if (bias) y = c.b.Add1(name, {"Add", {y, factor(1, "bias")}, {}, "Scale"}, {l.name()});
  } else {
    y = c.b.Add1(name, {"Add", {y, factor(0, "bias")}, {}, "Bias"}, {l.name()});
  }
  c.Top(l, 0, y);
  return std::nullopt;
}

R Eltwise(Converter& c, const Layer& l) {
  using E = npukit::caffe::EltwiseParameter;
  const auto& p = l.eltwise_param();
  if (l.bottom_size() < 2) return "Eltwise needs two or more bottoms";
  if (p.coeff_size() && (p.coeff_size() != l.bottom_size() || p.operation() != E::SUM)) return "coeff must give one value per bottom, for SUM only";
  const std::string name = c.OutName(l);
  const char* op = p.operation() == E::PROD ? "Mul" : p.operation() == E::MAX ? "Max" : "Add";
  auto term = [&](int j) {
    int x = c.Bottom(l, j);
    if (p.coeff_size() && p.coeff(j) != 1.f) x = c.b.Add1(name + "/coeff" + std::to_string(j), {"Mul", {x, c.b.Scalar(name + "/c" + std::to_string(j), p.coeff(j))}}, {l.name()});
    return x;
  };
  int y = term(0);
  for (int j = 1; j < l.bottom_size(); ++j) {
    bool last = j + 1 == l.bottom_size();
    y = c.b.Add1(last ? name : name + "/" + std::to_string(j), {op, {y, term(j)}, {}, last ? "Eltwise" : ""}, {l.name()});
  }
  c.Top(l, 0, y);
  return std::nullopt;
}

R Concat(Converter& c, const Layer& l) {
  const auto& p = l.concat_param();
  int64_t axis = p.has_axis() ? p.axis() : p.has_concat_dim() ? static_cast<int64_t>(p.concat_dim()) : 1;
  std::vector<int> ins;
  for (int j = 0; j < l.bottom_size(); ++j) ins.push_back(c.Bottom(l, j));
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"Concat", ins, {{"axis", axis}}, "ConcatD"}, {l.name()}));
  return std::nullopt;
}

// Slice: tops cut along `axis` at slice_point (or in equal parts); each top is a Slice of the bottom.
R Slice(Converter& c, const Layer& l) {
  const auto& p = l.slice_param();
  int64_t axis = p.has_axis() ? p.axis() : p.has_slice_dim() ? static_cast<int64_t>(p.slice_dim()) : 1;
  const int tops = l.top_size();
  std::vector<int64_t> points(p.slice_point().begin(), p.slice_point().end());
  if (!points.empty() && static_cast<int>(points.size()) != tops - 1) return "slice_point must give one value fewer than the tops";
  if (points.empty()) {
    auto outs = c.b.Add(l.name(), {"Split", {c.Bottom(l, 0)}, {{"axis", axis}}, "SplitVD", tops}, {l.name()}, {l.top().begin(), l.top().end()});
    for (int k = 0; k < tops; ++k) c.Top(l, k, outs[static_cast<size_t>(k)]);
    return std::nullopt;
  }
  for (int k = 0; k < tops; ++k) {
    int64_t b = k == 0 ? 0 : points[static_cast<size_t>(k - 1)], e = k + 1 == tops ? INT64_MAX : points[static_cast<size_t>(k)];
    const std::string& top = l.top(k);
    c.Top(l, k, c.b.Add1(top, {"Slice", {c.Bottom(l, 0), c.b.Int64s(top + "/begin", {b}), c.b.Int64s(top + "/end", {e}), c.b.Int64s(top + "/axis", {axis})}, {}, "SplitVD"},
                         {l.name()}));
  }
  return std::nullopt;
}

// Split copies its bottom to every top; Dropout is the identity at inference: neither computes anything.
R Alias(Converter& c, const Layer& l) {
  for (int k = 0; k < l.top_size(); ++k) c.Top(l, k, c.Bottom(l, 0));
  return std::nullopt;
}

R Flatten(Converter& c, const Layer& l) {
  const auto& p = l.flatten_param();
  if (p.end_axis() != -1) return "end_axis other than -1";
  // Caffe keeps the dims before `axis` (ONNX's Flatten would merge them): copy them with Reshape's 0.
  std::vector<int64_t> shape(static_cast<size_t>(std::max(p.axis(), 0)), 0);
  shape.push_back(-1);
  const std::string name = c.OutName(l);
  c.Top(l, 0, c.b.Add1(name, {"Reshape", {c.Bottom(l, 0), c.b.Int64s(name + "/shape", shape)}, {}, "FlattenV2"}, {l.name()}));
  return std::nullopt;
}

R Reshape(Converter& c, const Layer& l) {
  const auto& p = l.reshape_param();
  if (p.axis() != 0 || p.num_axes() != -1) return "axis/num_axes other than the whole shape";
  std::vector<int64_t> shape(p.shape().dim().begin(), p.shape().dim().end());  // Caffe's 0 and -1 are ONNX's
  const std::string name = c.OutName(l);
  c.Top(l, 0, c.b.Add1(name, {"Reshape", {c.Bottom(l, 0), c.b.Int64s(name + "/shape", shape)}, {}, "Reshape"}, {l.name()}));
  return std::nullopt;
}

R Permute(Converter& c, const Layer& l) {
  std::vector<int64_t> order(l.permute_param().order().begin(), l.permute_param().order().end());
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"Transpose", {c.Bottom(l, 0)}, {{"perm", order}}, "Permute"}, {l.name()}));
  return std::nullopt;
}

R LRN(Converter& c, const Layer& l) {
  const auto& p = l.lrn_param();
  if (p.norm_region() != npukit::caffe::LRNParameter::ACROSS_CHANNELS) return "WITHIN_CHANNEL normalization";
  AttrMap attrs{{"size", static_cast<int64_t>(p.local_size())}, {"alpha", p.alpha()}, {"beta", p.beta()}, {"bias", p.k()}};
  c.Top(l, 0, c.b.Add1(c.OutName(l), {"LRN", {c.Bottom(l, 0)}, attrs, "LRN"}, {l.name()}));
  return std::nullopt;
}

// Crop bottom 0 to the shape of bottom 1 from `axis` on, at `offset` (one for all dims or one per dim).
R Crop(Converter& c, const Layer& l) {
  if (l.bottom_size() != 2) return "Crop needs two bottoms";
  const auto& p = l.crop_param();
  constexpr int64_t kRank = 4;  // Caffe's crops are on NCHW blobs
  int64_t axis = p.axis() < 0 ? p.axis() + kRank : p.axis();
  if (axis < 0 || axis >= kRank) return "axis out of range";
  std::vector<int64_t> offsets, axes;
  for (int64_t d = axis; d < kRank; ++d) {
    axes.push_back(d);
    offsets.push_back(p.offset_size() == 0 ? 0 : p.offset_size() == 1 ? p.offset(0) : p.offset(static_cast<int>(std::min<int64_t>(d - axis, p.offset_size() - 1))));
  }
  const std::string name = c.OutName(l);
  int shape = c.b.Add1(name + "/ref_shape", {"Shape", {c.Bottom(l, 1)}}, {l.name()});
  int dims = c.b.Add1(name + "/ref_dims", {"Slice", {shape, c.b.Int64s(name + "/from", {axis}), c.b.Int64s(name + "/to", {kRank})}}, {l.name()});
  int starts = c.b.Int64s(name + "/offsets", offsets);
  int ends = c.b.Add1(name + "/ends", {"Add", {dims, starts}}, {l.name()});
  c.Top(l, 0, c.b.Add1(name, {"Slice", {c.Bottom(l, 0), starts, ends, c.b.Int64s(name + "/axes", axes)}, {}, "Crop"}, {l.name()}));
  return std::nullopt;
}

// ArgMax (top_k 1, out_max_val false) along `axis`, kept as a dim of 1 as Caffe does; Caffe's indices are floats.
R ArgMax(Converter& c, const Layer& l) {
  const auto& p = l.argmax_param();
  if (!p.has_axis() || p.top_k() != 1 || p.out_max_val()) return "only top_k 1 along an explicit axis, without out_max_val";
  const std::string name = c.OutName(l);
  int idx = c.b.Add1(name + "/index", {"ArgMax", {c.Bottom(l, 0)}, {{"axis", static_cast<int64_t>(p.axis())}, {"keepdims", int64_t{1}}}, "ArgMaxWithK"}, {l.name()});
  c.Top(l, 0, c.b.Add1(name, {"Cast", {idx}, {{"to", static_cast<int64_t>(DType::kF32)}}}, {l.name()}));
  return std::nullopt;
}

// Reduction over every dim from `axis` on (SUM, ASUM, SUMSQ, MEAN), times coeff; the reduced dims go.
R Reduction(Converter& c, const Layer& l) {
  using P = npukit::caffe::ReductionParameter;
  const auto& p = l.reduction_param();
  if (p.axis() < 0) return "a negative axis";
  const std::string name = c.OutName(l);
  int x = c.Bottom(l, 0);
  if (p.operation() == P::ASUM) x = c.b.Add1(name + "/abs", {"Abs", {x}}, {l.name()});
  if (p.operation() == P::SUMSQ) x = c.b.Add1(name + "/square", {"Mul", {x, x}}, {l.name()});
  // Flatten from `axis`, then reduce that one dim: the rank need not be known here.
  std::vector<int64_t> shape(static_cast<size_t>(p.axis()), 0);
  shape.push_back(-1);
  int flat = c.b.Add1(name + "/flat", {"Reshape", {x, c.b.Int64s(name + "/flat_shape", shape)}}, {l.name()});
  const char* op = p.operation() == P::MEAN ? "ReduceMean" : "ReduceSum";
  AttrMap attrs{{"keepdims", int64_t{0}}};
  std::vector<int> ins{flat};
  if (std::string_view(op) == "ReduceSum") ins.push_back(c.b.Int64s(name + "/axes", {p.axis()}));
  else attrs["axes"] = std::vector<int64_t>{p.axis()};
  const bool scaled = p.coeff() != 1.f;
  int y = c.b.Add1(scaled ? name + "/reduce" : name, {op, ins, attrs, scaled ? "" : "Reduction"}, {l.name()});
  if (scaled) y = c.b.Add1(name, {"Mul", {y, c.b.Scalar(name + "/coeff", p.coeff())}, {}, "Reduction"}, {l.name()});
  c.Top(l, 0, y);
  return std::nullopt;
}

// Threshold: 1 where x > threshold, else 0.
R Threshold(Converter& c, const Layer& l) {
  const std::string name = c.OutName(l);
  int above = c.b.Add1(name + "/above", {"Greater", {c.Bottom(l, 0), c.b.Scalar(name + "/threshold", l.threshold_param().threshold())}}, {l.name()});
  c.Top(l, 0, c.b.Add1(name, {"Cast", {above}, {{"to", static_cast<int64_t>(DType::kF32)}}, "Threshold"}, {l.name()}));
  return std::nullopt;
}

R Tile(Converter& c, const Layer& l) {
  const auto& p = l.tile_param();
  constexpr int64_t kRank = 4;  // Caffe blobs are NCHW here
  int64_t axis = p.axis() < 0 ? p.axis() + kRank : p.axis();
  if (axis < 0 || axis >= kRank || p.tiles() <= 0) return "axis out of range or tiles not positive";
  std::vector<int64_t> repeats(kRank, 1);
  repeats[static_cast<size_t>(axis)] = p.tiles();
  const std::string name = c.OutName(l);
  c.Top(l, 0, c.b.Add1(name, {"Tile", {c.Bottom(l, 0), c.b.Int64s(name + "/repeats", repeats)}, {}, "TileWithAxis"}, {l.name()}));
  return std::nullopt;
}

constexpr LayerEntry kLayers[] = {
    {"Input", nullptr},       {"Convolution", Convolution}, {"DepthwiseConvolution", Convolution}, {"Deconvolution", Convolution},
    {"InnerProduct", InnerProduct}, {"Pooling", Pooling}, {"ReLU", ReLU}, {"PReLU", PReLU}, {"Sigmoid", SimpleUnary},
    {"TanH", SimpleUnary},    {"AbsVal", SimpleUnary},    {"BNLL", SimpleUnary}, {"ELU", ELU}, {"Power", Power}, {"Exp", ExpLog},
    {"Log", ExpLog},          {"Softmax", Softmax},       {"BatchNorm", BatchNorm}, {"Scale", ScaleBias}, {"Bias", ScaleBias},
    {"Eltwise", Eltwise},     {"Concat", Concat},         {"Slice", Slice}, {"Split", Alias}, {"Dropout", Alias},
    {"Flatten", Flatten},     {"Reshape", Reshape},       {"Permute", Permute}, {"LRN", LRN}, {"Crop", Crop},
    {"ArgMax", ArgMax},       {"Reduction", Reduction},   {"Threshold", Threshold}, {"Tile", Tile},
};

}  // namespace

const LayerEntry* FindLayer(std::string_view type) {
  for (const LayerEntry& e : kLayers)
    if (e.type == type) return &e;
  return nullptr;
}

std::pair<int, int> BlobCount(const Layer& l) {
  const std::string& t = l.type();
  if (t == "Convolution" || t == "DepthwiseConvolution" || t == "Deconvolution") return {1, l.convolution_param().bias_term() ? 2 : 1};
  if (t == "InnerProduct") return {1, l.inner_product_param().bias_term() ? 2 : 1};
  if (t == "PReLU") return {1, 1};
  if (t == "BatchNorm") return {2, 3};
  if (t == "Scale") return l.bottom_size() > 1 ? std::pair{0, 1} : std::pair{1, l.scale_param().bias_term() ? 2 : 1};
  if (t == "Bias") return l.bottom_size() > 1 ? std::pair{0, 0} : std::pair{1, 1};
  return {0, 0};
}

}  // namespace npu::caffe
