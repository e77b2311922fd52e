#include "kernels/conv_dnnl.h"

#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "kernels/channels_last.h"
#include "kernels/conv_depthwise_avx512.h"
#include "kernels/conv_edge_taps.h"
#include "kernels/conv_grouped_avx2.h"
#include "kernels/conv_winograd.h"
#include "kernels/conv_winograd_avx2.h"
#include "kernels/dnnl_engine.h"
#include "kernels/kernel_util.h"
#include "kernels/numerics.h"

namespace npu {

int64_t PadAfter(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  return std::max<int64_t>(0, (out - 1) * stride + (k - 1) * dilation + 1 - in - pad);
}

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
// Output elements from which the finish over a primitive's result runs on every thread (see FinishResult).
constexpr size_t kEpilogueGrain = 1 << 14;
// The last-level cache that cpu0 shares with its neighbours, in bytes, from sysfs (index3: "32768K"); 0 when not
// known. Not sysconf's, which on the measured host adds up the L3 of every chiplet (320 MB for 32 MB shared).
int64_t SharedL3Bytes() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index3/size");
  int64_t kib = 0;
  std::string unit;
  if (!(in >> kib >> unit) || unit != "K" || kib <= 0) return 0;
  return kib * 1024;
}

// A batch's result from which a conv runs image by image (RunByImage): half the shared L3, past which the finish
// read the result back from memory. mobilenet_v2 at batch 8 (AVX-512 host, 32 MB L3; its 112 x 112 x 96 expand conv
// writes 38.5 MB, and its finish took 1.56 ms of the conv's 3.79): 1.14-1.15x ONNX Runtime's time before, 1.07-1.11x
// so (lower quartiles, two interleaved runs of three rounds). Where the L3 is not known, the measured host's half.
int64_t ByImageBytes() {
  static const int64_t bytes = [] {
    const int64_t l3 = SharedL3Bytes();
    return l3 > 0 ? l3 / 2 : int64_t{16} << 20;
  }();
  return bytes;
}

// A fused activation the primitive computes as an eltwise post-op (see InPrimitiveActivation).
struct PostOpActivation {
  dnnl::algorithm algorithm;
  float alpha = 0, beta = 0;
  bool operator==(const PostOpActivation&) const = default;
};

// A conv's primitive and its weights in the primitive's layout, built for one geometry, with the memory
// objects and arguments it runs on (each run points them at that run's tensors).
struct DnnlConv final : KernelState {
  Shape x_shape, w_shape;
  bool int8 = false;  // int8 x int8 -> int32 with an int32 bias (a quantized conv)
  bool has_bias = false, has_residual = false;
  // The primitive adds the residual by a sum post-op, into a destination that holds it already (SumDestination).
  // Why not a binary add reading it as a second map: oneDNN then leaves its brgemm 1x1 kernels for older ones
  // (AVX-512 host, 2 threads: 64 -> 256 channels at 56x56 224 us by sum against 314 us by binary add, 32 -> 16 at
  // 112x112 41 against 58 us; the same as without a residual within 5%). Only where the kernel is a brgemm one
  // (SumAfterProducts); the window-product path keeps the binary add too.
  bool residual_as_sum = false;
  bool has_epilogue = false;  // a fused activation was offered (which one is the task's node's, fixed)
  std::optional<PostOpActivation> activation;  // the fused activation, when the primitive computes it
  int threads = 0;
  bool usable = false;  // false: oneDNN offers only its reference kernel here
  Conv2DShape shape{};
  dnnl::convolution_forward prim;
  ReorderedWeights weights;
  memory src, dst, bias, residual;
  std::unordered_map<int, memory> args;
  // Groups merged per primitive group (see MergedGroups); above 1, `prim` reads block-diagonal weights, and
  // `exact` (the op's own groups) serves inputs holding an Inf or a NaN.
  int64_t merged = 1;
  Tensor block_diagonal;  // the weights expanded for `prim`
  Tensor expanded_from;   // the weights tensor they were expanded from (held: its storage cannot be reused meanwhile)
  dnnl::convolution_forward exact;
  ReorderedWeights exact_weights;
  std::unordered_map<int, memory> exact_args;
  std::unique_ptr<WinogradConv> winograd;  // set: the conv runs as Winograd bands instead (conv_winograd.h)
  // Set: the conv runs as npukit's own Winograd kernel (conv_winograd_avx2.h), and `prim` only where its result is
  // not finite.
  std::unique_ptr<Avx2WinogradConv> avx2_winograd;
  // Set: the conv runs as npukit's own grouped kernel (conv_grouped_avx2.h); `prim` is unused.
  std::unique_ptr<Avx2GroupedConv> grouped;
  // Set: the conv runs as npukit's own depthwise kernel (conv_depthwise_avx512.h); `prim` is unused.
  std::unique_ptr<Avx512DepthwiseConv> depthwise;
  // Set: the conv's taps read the map for bands of outputs (conv_edge_taps.h); `prim` is the conv of the taps
  // live for every output (the crop below), with the bias, and `edge_taps` adds the others' products after it.
  std::unique_ptr<EdgeTaps> edge_taps;
  // Set: the conv's windows tile the input (see PatchesPay), and `prim` is unused: `patches` multiplies the gathered
  // windows (`windows`, pixels x KH KW C) by the weights as a (KH KW C, M) matrix (`patch_w`, made from the tensor
  // at `patch_from`, held: its storage cannot be reused meanwhile).
  std::optional<dnnl::matmul> patches;
  Tensor windows, patch_w, patch_from;
  // The kernel cropped to the taps that read the input (see CropToLiveTaps): `shape` is the cropped conv's, and
  // the weights are cropped from the tensor at `cropped_from` (held: its storage cannot be reused meanwhile).
  int64_t first_row = 0, first_col = 0, full_kh = 0, full_kw = 0;
  Tensor cropped, cropped_from;
  // The primitive takes one image, and a run goes image by image, each finished right after it (RunByImage).
  bool by_image = false;
};

// The kernel rows (or columns) that read the input for some output, as [first, first + count): a dilated
// kernel's outer taps can fall in the padding for every output, where the direct kernels skip them anyway and
// oneDNN's im2col path (its only one for large dilations on AVX2) multiplies zeros. deeplabv3's ASPP convs
// (dilation 12, 24 and 36 on a 14 x 14 map) took 9-10 ms each on AVX2; with dilation 24 and 36 only the centre tap
// reads the map, a 1 x 1 conv.
TapRange LiveKernelTaps(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  int64_t first = -1, last = -1;
  for (int64_t t = 0; t < k; ++t) {
    if (LiveOutputs(in, out, t, stride, dilation, pad).count == 0) continue;
    if (first < 0) first = t;
    last = t;
  }
  return first < 0 ? TapRange{0, k} : TapRange{first, last - first + 1};
}

// Whether a dim's output size is what oneDNN derives from PadAfter's padding: a crop that leaves input rows unread
// past the last window must not grow the output.
bool OutputFits(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  const int64_t extent = (k - 1) * dilation + 1;
  return (in + pad + PadAfter(in, out, k, stride, dilation, pad) - extent) / stride + 1 == out;
}

// The conv of the kernel cropped to taps [rows) x [cols) (the output is the same where those are all the taps that
// read the map): fewer taps, less padding before. A dim stays whole where the crop would change its output size.
void CropTo(DnnlConv& d, TapRange rows, TapRange cols) {
  Conv2DShape& s = d.shape;
  d.full_kh = s.KH;
  d.full_kw = s.KW;
  if (s.PT >= rows.first * s.DH && OutputFits(s.H, s.OH, rows.count, s.SH, s.DH, s.PT - rows.first * s.DH)) {
    d.first_row = rows.first;
    s.KH = rows.count;
    s.PT -= rows.first * s.DH;
  }
  if (s.PL >= cols.first * s.DW && OutputFits(s.W, s.OW, cols.count, s.SW, s.DW, s.PL - cols.first * s.DW)) {
    d.first_col = cols.first;
    s.KW = cols.count;
    s.PL -= cols.first * s.DW;
  }
}

void CropToLiveTaps(DnnlConv& d) {
  const Conv2DShape& s = d.shape;
  CropTo(d, LiveKernelTaps(s.H, s.OH, s.KH, s.SH, s.DH, s.PT), LiveKernelTaps(s.W, s.OW, s.KW, s.SW, s.DW, s.PL));
}

bool Cropped(const DnnlConv& d) { return d.shape.KH < d.full_kh || d.shape.KW < d.full_kw; }

// The weights (M, C/G, KH, KW), of any element size, cropped to the conv's live taps.
Tensor CropWeights(const Tensor& w, const DnnlConv& d) {
  const Conv2DShape& s = d.shape;
  Tensor out = Tensor::Empty(w.dtype(), {w.shape()[0], w.shape()[1], s.KH, s.KW});
  const size_t elem = DTypeSize(w.dtype());
  const std::byte* from = w.raw();
  std::byte* to = out.mutable_raw();
  const int64_t filters = w.shape()[0] * w.shape()[1];
  for (int64_t f = 0; f < filters; ++f)
    for (int64_t kh = 0; kh < s.KH; ++kh) {
      const int64_t src = (f * d.full_kh + d.first_row + kh) * d.full_kw + d.first_col, dst = (f * s.KH + kh) * s.KW;
      std::memcpy(to + dst * elem, from + src * elem, static_cast<size_t>(s.KW) * elem);
    }
  return out;
}

// The weights the primitives read: the op's, or their crop.
const Tensor& ConvWeights(DnnlConv& d, const Tensor& w) {
  if (!Cropped(d)) return w;
  if (!(d.cropped_from.defined() && d.cropped_from.raw() == w.raw())) {
    d.cropped = CropWeights(w, d);
    d.cropped_from = w;
  }
  return d.cropped;
}

// Whether oneDNN's clip to [0, inf) gives our Relu's values (x > 0 ? x : +0) for NaN, -0 and the
// infinities, so that it can stand for a fused Relu. It does where its JIT takes max(x, 0) with the
// operand order x86's maxps returns 0 for a NaN in; asked once per process rather than assumed, since a
// JIT for another ISA may order them otherwise (then the Relu keeps our pass).
bool ClipGivesOurRelu() {
  static const bool same = [] {
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    std::vector<float> x = {nan, -0.0f, inf, -inf, -1.5f, 2.5f, 0.0f, -nan}, y(x.size());
    try {
      memory::desc desc({static_cast<memory::dim>(x.size())}, kF32, Tag::a);
      dnnl::eltwise_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_clip, desc, 0.0f, inf);
      dnnl::eltwise_forward prim(dnnl::eltwise_forward::primitive_desc(op, DnnlEngine()));
      dnnl::stream st(DnnlEngine());
      prim.execute(st, {{DNNL_ARG_SRC, memory(desc, DnnlEngine(), x.data())}, {DNNL_ARG_DST, memory(desc, DnnlEngine(), y.data())}});
      st.wait();
    } catch (const dnnl::error&) {
      return false;
    }
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = x[i] > 0 ? x[i] : 0.0f;
      if (std::memcmp(&want, &y[i], sizeof(float)) != 0) return false;
    }
    return true;
  }();
  return same;
}

// A fused activation oneDNN computes as an eltwise post-op: on the values while they are in registers, where
// our own pass would read and write the whole result again (30% of efficientnet_b0's time for Swish). Only
// those whose results agree with the ops' own kernels, NaN, Inf and -0 included: Swish (oneDNN's exp differs
// from ours, kernels/logistic.h, by an ulp or two), HardSwish (x * relu6(x + 3) / 6, the op's x * clamp(x / 6 + 1/2, 0, 1)
// within an ulp) and Relu as a clip to [0, inf) where that gives its values bit for bit (ClipGivesOurRelu).
// The others keep our pass: oneDNN's relu keeps NaN and -0, and its clip turns NaN into the lower bound
// where our Clip keeps NaN.
std::optional<PostOpActivation> InPrimitiveActivation(const KernelContext& c) {
  if (!c.epilogue) return std::nullopt;
  const std::string op = c.node.attr_string(kEpilogueOp);
  if (op == "Swish") return PostOpActivation{dnnl::algorithm::eltwise_swish, c.node.attr_float(std::string(kEpilogueAttrPrefix) + "alpha", 1.0f)};
  if (op == "HardSwish") return PostOpActivation{dnnl::algorithm::eltwise_hardswish};
  if (op == "Relu" && ClipGivesOurRelu()) return PostOpActivation{dnnl::algorithm::eltwise_clip, 0.0f, std::numeric_limits<float>::infinity()};
  return std::nullopt;
}

// An int8 conv's bias is added after the primitive, in integers (dnnl_engine.h FinishInt8Sums).
bool BiasInPrimitive(const KernelContext& c) { return c.has(2) && c.in(0).dtype() != DType::kI8; }

// Channels per group (in and out) up to which merging groups is tried: a vector register of fp32 lanes on
// AVX-512 (16; 8 on AVX2). oneDNN 2.6's direct kernels need whole registers of channels per group; with fewer it
// runs its im2col GEMM, one small product per group: resnext50_32x4d's 4-channel groups on 56x56 took 3.3 ms
// where the same conv with 8-channel groups took 0.70 (AVX2, 2 threads), twice the multiply-adds.
constexpr int64_t kMergedChannelsMax = 16;

bool GemmBased(const dnnl::convolution_forward::primitive_desc& pd) { return std::string_view(pd.impl_info_str()).find("gemm") != std::string_view::npos; }

// Whether the kernel adds a sum post-op's destination to its finished sums of products, so that the result has the
// bits of the conv's result plus the residual: oneDNN 2.6's brgemm kernels (AVX-512) do; its jit:avx2 kernel starts
// its sums from the destination instead, another order of the same additions (other bits: seen in
// ChannelsLast.FusedResidualAndActivationComeInThatOrder under ONEDNN_MAX_CPU_ISA=AVX2).
bool SumAfterProducts(const dnnl::convolution_forward::primitive_desc& pd) { return std::string_view(pd.impl_info_str()).starts_with("brg"); }

// How many neighbouring groups to merge into one so that oneDNN runs a direct kernel instead of its GEMM, with
// weights that are zero between the merged groups (1: none). Merged groups read contiguous channels of the
// channels-last maps, so the maps are unchanged; the extra products are of zeros and change no finite sum.
int64_t MergedGroups(const Conv2DShape& s, const std::function<dnnl::convolution_forward::primitive_desc(int64_t)>& primitive) {
  const int64_t in = s.C / s.G, out = s.M / s.G;
  if (s.G == 1 || (in == 1 && out == 1)) return 1;  // depthwise convs have kernels of their own
  for (int64_t r = 2; r <= s.G && s.G % r == 0 && in * r <= kMergedChannelsMax && out * r <= kMergedChannelsMax; r *= 2) {
    const auto pd = primitive(s.G / r);
    if (!GemmBased(pd) && !IsReferenceImpl(pd)) return r;
  }
  return 1;
}

// The weights (M, C/G, KH, KW) as those of G/r groups of r times the channels, block-diagonal: the merged group's
// output channel m reads only the input channels of the group it came from.
Tensor BlockDiagonal(const Tensor& w, const Conv2DShape& s, int64_t r) {
  const int64_t in = s.C / s.G, out = s.M / s.G, taps = s.KH * s.KW;
  Tensor b = Tensor::Zeros(DType::kF32, {s.G / r, out * r, in * r, s.KH, s.KW});
  const float* from = w.data<float>();
  float* to = b.mutable_data<float>();
  for (int64_t m = 0; m < s.M; ++m) {  // row m of the weights: merged group m / (out r), its block (m / out) % r
    const int64_t block = (m / out) % r;
    float* row = to + m * in * r * taps + block * in * taps;
    std::copy(from + m * in * taps, from + (m + 1) * in * taps, row);
  }
  return b;
}

// Convs whose windows tile the input without overlap or padding (kernel == stride, ConvNeXt's 2x2 stride-2
// downsampling) are one matrix product: each output pixel's window is KH runs of KW C contiguous channels-last
// floats, gathered into a row. 2 threads of a Zen 3 EPYC, with the gather: 0.66-0.79 of oneDNN's jit:avx2 conv
// time (96 -> 192 on 56x56, 192 -> 384 on 28x28, 384 -> 768 on 14x14: the conv at 90-118 GFLOP/s, the product at
// 129-159); with 3 input channels (a 4x4 stride-4 stem) 1.24-1.64, so from 8 channels.
constexpr int64_t kMinPatchChannels = 8;
bool PatchesPay(const Conv2DShape& s) {
  return s.KH == s.SH && s.KW == s.SW && s.DH == 1 && s.DW == 1 && s.G == 1 && s.PT == 0 && s.PL == 0 && s.C >= kMinPatchChannels &&
         PadAfter(s.H, s.OH, s.KH, s.SH, s.DH, s.PT) == 0 && PadAfter(s.W, s.OW, s.KW, s.SW, s.DW, s.PL) == 0 && (s.KH > 1 || s.KW > 1);
}

// The conv weights (M, C, KH, KW) as the product's right operand (KH KW C, M), rows in the gathered windows' order.
Tensor PatchWeights(const Tensor& w, const Conv2DShape& s) {
  Tensor b = Tensor::Empty(DType::kF32, {s.KH * s.KW * s.C, s.M});
  const float* from = w.data<float>();
  float* to = b.mutable_data<float>();
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t c = 0; c < s.C; ++c)
      for (int64_t k = 0; k < s.KH * s.KW; ++k) to[(k * s.C + c) * s.M + m] = from[(m * s.C + c) * s.KH * s.KW + k];
  return b;
}

// Each output pixel's window of the channels-last x into a row of `windows`.
void GatherWindows(const float* x, const Conv2DShape& s, float* windows, ThreadPool& pool) {
  const int64_t run = s.KW * s.C, row = s.KH * run;
  pool.ParallelFor(static_cast<size_t>(s.N * s.OH * s.OW), kEpilogueGrain / static_cast<size_t>(row) + 1, [&](size_t p0, size_t p1) {
    for (auto p = static_cast<int64_t>(p0); p < static_cast<int64_t>(p1); ++p) {
      const int64_t n = p / (s.OH * s.OW), oy = p / s.OW % s.OH, ox = p % s.OW;
      for (int64_t ky = 0; ky < s.KH; ++ky)
        std::memcpy(windows + p * row + ky * run, x + ((n * s.H + oy * s.KH + ky) * s.W + ox * s.KW) * s.C, static_cast<size_t>(run) * sizeof(float));
    }
  });
}

// The direct conv of shape `s` (its strides, dilations and padding, the bottom and right as PadAfter counts them)
// from `src` to `dst`; `bias` may be empty.
dnnl::convolution_forward::desc ConvDesc(const Conv2DShape& s, const memory::desc& src, const memory::desc& weights, const memory::desc& bias,
                                         const memory::desc& dst) {
  const int64_t pb = PadAfter(s.H, s.OH, s.KH, s.SH, s.DH, s.PT), pr = PadAfter(s.W, s.OW, s.KW, s.SW, s.DW, s.PL);
  return dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, bias, dst,
                                         {s.SH, s.SW}, {s.DH - 1, s.DW - 1}, {s.PT, s.PL}, {pb, pr});
}

// Whether oneDNN runs the fp32 conv of shape `s` on its im2col path (as it does large dilations on AVX2).
bool OnIm2col(const Conv2DShape& s) try {
  const memory::desc src({s.N, s.C, s.H, s.W}, kF32, Tag::nhwc), dst({s.N, s.M, s.OH, s.OW}, kF32, Tag::nhwc);
  const memory::desc weights({s.M, s.C / s.G, s.KH, s.KW}, kF32, Tag::any);
  return GemmBased(dnnl::convolution_forward::primitive_desc(ConvDesc(s, src, weights, memory::desc(), dst), DnnlEngine()));
} catch (const dnnl::error&) {
  return false;
}

// Crops the conv to its live taps, or, where its taps read the map for bands of outputs and oneDNN would multiply
// the padding (its im2col path), to the taps live for every output with the others' bands in d.edge_taps.
void CropKernel(DnnlConv& d) {
  const Conv2DShape op_shape = d.shape;
  CropToLiveTaps(d);
  std::unique_ptr<EdgeTaps> edges = d.int8 ? nullptr : EdgeTaps::Plan(op_shape);
  if (!edges || !OnIm2col(d.shape) || !edges->BuildProducts()) return;
  d.shape = op_shape;
  d.first_row = d.first_col = 0;
  CropTo(d, edges->full_rows(), edges->full_cols());
  if (d.first_row == edges->full_rows().first && d.shape.KH == edges->full_rows().count && d.first_col == edges->full_cols().first &&
      d.shape.KW == edges->full_cols().count) {
    d.edge_taps = std::move(edges);
    return;
  }
  d.shape = op_shape;  // a crop oneDNN's padding cannot express: the live taps' conv after all
  d.first_row = d.first_col = 0;
  CropToLiveTaps(d);
}

// A fused residual goes into the primitive, unless taps' bands are added after it (then the runtime adds it).
bool ResidualInPrimitive(const DnnlConv& d) { return d.has_residual && !d.edge_taps; }

bool SameBuild(const DnnlConv& d, const KernelContext& c) {
  return d.int8 == (c.in(0).dtype() == DType::kI8) && d.x_shape == c.in(0).shape() && d.w_shape == c.in(1).shape() && d.has_bias == BiasInPrimitive(c) &&
         d.has_residual == c.residual.defined() && d.has_epilogue == static_cast<bool>(c.epilogue) && d.threads == c.pool.size();
}

// The primitive's memory objects without data, and its arguments; each run sets their handles (BindMaps; creating
// them per run was 4% of a small net). `src` and `dst` are the maps as the primitive reads and writes them.
void MakeArgs(DnnlConv& d, const memory::desc& src, const memory::desc& dst, const memory::desc& bias) {
  MakeConvArgs(d, src, dst, bias);
  if (ResidualInPrimitive(d) && !d.residual_as_sum) {
    d.residual = Unbound(dst);
    d.args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, d.residual);
  }
}

// Points the memory objects at one run's maps (bias and residual where the primitive takes them; `residual` is
// where the part of it that matches `dst` starts).
void BindMaps(DnnlConv& d, const void* src, void* dst, const Tensor* bias, const float* residual) {
  d.src.set_data_handle(const_cast<void*>(src));
  d.dst.set_data_handle(dst);
  if (d.has_bias) d.bias.set_data_handle(const_cast<std::byte*>(bias->raw()));
  if (ResidualInPrimitive(d) && !d.residual_as_sum) d.residual.set_data_handle(const_cast<float*>(residual));
}

const float* FloatsOrNull(const Tensor& t) { return t.defined() ? t.data<float>() : nullptr; }

// The product PatchesPay takes the conv as: windows (pixels, KH KW C) x weights (KH KW C, M) + bias, with the
// conv's post-ops on the (pixels, M) result.
Status BuildPatches(DnnlConv& d, const dnnl::primitive_attr& attr, const memory::desc& rows) try {
  const Conv2DShape& s = d.shape;
  const int64_t pixels = s.N * s.OH * s.OW, depth = s.KH * s.KW * s.C;
  const memory::desc a({pixels, depth}, kF32, Tag::ab), bias({1, s.M}, kF32, Tag::ab), plain_w({depth, s.M}, kF32, Tag::ab);
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, memory::desc({depth, s.M}, kF32, Tag::any), d.has_bias ? bias : memory::desc(), rows),
                                        attr, DnnlEngine());
  if (IsReferenceImpl(pd)) return Status::Ok();
  d.patches = dnnl::matmul(pd);
  d.weights = ReorderedWeights(pd.weights_desc(), plain_w);
  d.windows = Tensor::Empty(DType::kF32, {pixels, depth});
  MakeArgs(d, a, rows, bias);
  d.usable = true;
  return Status::Ok();
} catch (const dnnl::error&) {
  d.patches.reset();
  return Status::Ok();  // a geometry oneDNN does not take: the caller's path
}

// NPUKIT_DEPTHWISE=0 runs depthwise convs on oneDNN's kernel instead of npukit's (to compare them: bench/depthwise).
bool OwnDepthwiseKernel() {
  const char* setting = std::getenv("NPUKIT_DEPTHWISE");
  return !(setting && std::string_view(setting) == "0");
}

Status Build(DnnlConv& d, const KernelContext& c, const std::function<Result<Conv2DShape>()>& geometry) {
  NPU_ASSIGN_OR_RETURN(d.shape, geometry());
  d.int8 = c.in(0).dtype() == DType::kI8;
  CropKernel(d);
  const Conv2DShape& s = d.shape;
  d.x_shape = c.in(0).shape();
  d.w_shape = c.in(1).shape();
  d.has_bias = BiasInPrimitive(c);
  d.has_residual = c.residual.defined();
  d.has_epilogue = static_cast<bool>(c.epilogue);
  // With taps' bands added after the primitive, the activation comes after them: the op's own pass.
  if (!d.edge_taps) d.activation = InPrimitiveActivation(c);
  d.threads = c.pool.size();
  d.usable = false;
  const auto x_dt = d.int8 ? memory::data_type::s8 : kF32, acc_dt = d.int8 ? memory::data_type::s32 : kF32;
  const memory::desc src({s.N, s.C, s.H, s.W}, x_dt, Tag::nhwc), dst({s.N, s.M, s.OH, s.OW}, acc_dt, Tag::nhwc), bias({s.M}, acc_dt, Tag::a);
  if (!d.int8 && !d.edge_taps) d.grouped = Avx2GroupedConv::Build(s);
  if (d.grouped) {
    d.activation.reset();  // its tasks run the op's own activation on their pixels
    d.usable = true;
    return Status::Ok();
  }
  if (!d.int8 && !d.edge_taps && OwnDepthwiseKernel()) d.depthwise = Avx512DepthwiseConv::Build(s);
  if (d.depthwise) {
    d.activation.reset();  // it runs a Relu in its registers, any other activation on its rows (DepthwiseFinishFor)
    d.usable = true;
    return Status::Ok();
  }
  const WinogradChoice choice = WinogradSetting();
  const bool winograd = !d.int8 && !d.edge_taps && choice != WinogradChoice::kNever;
  if (winograd && choice == WinogradChoice::kWherePays && !d.has_residual && WinogradPays(s, d.threads)) {
    d.winograd = WinogradConv::Build(s, d.threads, d.has_bias);
    if (d.winograd) {
      d.activation.reset();  // the bands run the op's own activation on their rows
      d.usable = true;
      return Status::Ok();
    }
  }
  if (winograd && !d.winograd && Avx2WinogradTiling(s) != WinogradTiling::kNone) {
    d.avx2_winograd = Avx2WinogradConv::Build(s, d.threads);
    if (d.avx2_winograd) d.activation.reset();  // its tasks run the op's own activation on their rows, as the bands do
  }
  const bool patches = !d.int8 && !d.avx2_winograd && !d.edge_taps && PatchesPay(s);
  // A batch whose result is larger than the caches goes image by image (RunByImage): one group (no merged groups),
  // and not the fallback of npukit's AVX2 Winograd kernel, which runs the whole batch.
  d.by_image = !patches && !d.int8 && !d.avx2_winograd && !d.edge_taps && s.G == 1 && s.N > 1 &&
               s.N * s.OH * s.OW * s.M * int64_t{sizeof(float)} >= ByImageBytes();
  const memory::desc run_src = d.by_image ? memory::desc({1, s.C, s.H, s.W}, x_dt, Tag::nhwc) : src;
  const memory::desc run_dst = d.by_image ? memory::desc({1, s.M, s.OH, s.OW}, acc_dt, Tag::nhwc) : dst;
  const int64_t pixels = s.N * s.OH * s.OW;
  const memory::desc rows({pixels, s.M}, kF32, Tag::ab);  // the channels-last result as the product's
  dnnl::primitive_attr attr;
  auto set_post_ops = [&](bool residual_as_sum) {
    dnnl::post_ops ops;  // in the fused op's order: the residual, then the activation
    if (residual_as_sum) ops.append_sum(1.0f);
    else if (ResidualInPrimitive(d)) ops.append_binary(dnnl::algorithm::binary_add, patches ? rows : run_dst);
    if (d.activation) ops.append_eltwise(1.0f, d.activation->algorithm, d.activation->alpha, d.activation->beta);
    attr.set_post_ops(ops);
    d.residual_as_sum = residual_as_sum;
  };
  set_post_ops(ResidualInPrimitive(d) && !patches);
  if (patches) return BuildPatches(d, attr, rows);
  auto weights_dims = [&](int64_t groups) {
    return groups == 1 ? memory::dims{s.M, s.C, s.KH, s.KW} : memory::dims{groups, s.M / groups, s.C / groups, s.KH, s.KW};
  };
  auto primitive = [&](int64_t groups) {
    const memory::desc weights(weights_dims(groups), x_dt, Tag::any);
    return dnnl::convolution_forward::primitive_desc(ConvDesc(s, run_src, weights, d.has_bias ? bias : memory::desc(), run_dst), attr, DnnlEngine());
  };
  auto plain_weights = [&](int64_t groups) { return memory::desc(weights_dims(groups), x_dt, groups == 1 ? Tag::oihw : Tag::goihw); };
  try {
    auto pd = primitive(s.G);
    if (d.residual_as_sum && !SumAfterProducts(pd)) {
      set_post_ops(false);
      pd = primitive(s.G);
    }
    if (IsReferenceImpl(pd)) return Status::Ok();
    d.merged = !d.int8 && GemmBased(pd) ? MergedGroups(s, primitive) : 1;
    if (d.merged > 1) {
      const auto merged = primitive(s.G / d.merged);
      d.prim = dnnl::convolution_forward(merged);
      d.weights = ReorderedWeights(merged.weights_desc(), plain_weights(s.G / d.merged));
      d.exact = dnnl::convolution_forward(pd);
      d.exact_weights = ReorderedWeights(pd.weights_desc(), plain_weights(s.G));
    } else {
      d.prim = dnnl::convolution_forward(pd);
      d.weights = ReorderedWeights(pd.weights_desc(), plain_weights(s.G));
    }
  } catch (const dnnl::error&) {
    return Status::Ok();  // a geometry oneDNN does not take: the caller's path
  }
  MakeArgs(d, run_src, run_dst, bias);
  if (d.merged > 1) {
    d.exact_args = d.args;  // the same maps: memory objects are handles
    d.exact_args[DNNL_ARG_WEIGHTS] = d.exact_weights.memory();
  }
  d.usable = true;
  return Status::Ok();
}

// What npukit's own kernels (the Winograd bands and kernel, the grouped kernel) run on their rows as they finish
// them: the fused activation, and the runtime's 16-bit rounding and a merged next activation
// (KernelRunOptions::then_act) when the result is returned in the order they wrote it (the rounding records the
// first exception by its index in the result).
ChunkFinish RowsFinish(KernelContext& c, bool stays_channels_last) {
  if (stays_channels_last) return c.TakeChunkFinish(true);
  ChunkFinish f;
  if (c.epilogue && !c.epilogue_applied) {
    f.act = &c.epilogue;
    c.epilogue_applied = true;
  }
  return f;
}

// What the depthwise kernel runs on its results: a fused Relu and then the fp16 rounding in its registers, where
// they are what is left to run in that order; the rest (another activation, a bf16 rounding, the next task's
// activation) on its rows after it stores them.
DepthwiseFinish DepthwiseFinishFor(KernelContext& c, bool stays_channels_last) {
  DepthwiseFinish f;
  if (c.epilogue && !c.epilogue_applied && c.node.attr_string(kEpilogueOp) == "Relu") {
    f.relu = true;
    c.epilogue_applied = true;
  }
  f.rest = RowsFinish(c, stays_channels_last);
  if (!f.rest.act && f.rest.round && f.rest.round->to() == DType::kF16) {
    f.half = f.rest.round;
    f.rest.round = nullptr;
  }
  return f;
}

// `f` over out[0, count), element `first` of output 0 onwards. Each thread takes the even part of the result its own
// core is likeliest to have written (ThreadPool::SplitEvenly): dealt in chunks to whichever thread came first, the
// force_fp16 rounding read half of them from the other core (mnasnet1_0, squeezenet1_1 and regnet_y_800mf
// force_fp16 0.936, 0.975 and 0.977 of their time, AVX-512 machine).
void FinishSpan(const ChunkFinish& f, float* out, size_t count, size_t first, ThreadPool& pool) {
  pool.SplitEvenly(count, kEpilogueGrain, [&](size_t b, size_t e) {
    for (size_t at = b; at < e; at += kFinishChunk) f({out + at, std::min(e, at + kFinishChunk) - at}, first + at);
  });
}

// What is left to run over a primitive's result, in one pass in memory order (elementwise, so the order does not
// matter): the fused activation oneDNN did not compute and, as RowsFinish gives them, the rounding and a merged
// next activation. A residual oneDNN did not add comes first: the runtime adds it, then runs the rest.
void FinishResult(KernelContext& c, Tensor& y, bool stays_channels_last) {
  if (c.residual.defined() && !c.residual_applied) return;
  const ChunkFinish f = RowsFinish(c, stays_channels_last);
  if (f) FinishSpan(f, y.mutable_data<float>(), static_cast<size_t>(y.numel()), 0, c.pool);
}

// The plain primitive over one image at a time, each image's finish (FinishResult's pass) right after it while its
// result is in cache: after a whole batch of large maps, that pass read the result back from memory.
void RunByImage(DnnlConv& d, KernelContext& c, const Tensor& x, const Tensor& w, Tensor& y, const Tensor& residual, bool stays_channels_last) {
  const Conv2DShape& s = d.shape;
  if (d.activation) c.epilogue_applied = true;
  const ChunkFinish f = c.residual.defined() && !c.residual_applied ? ChunkFinish{} : RowsFinish(c, stays_channels_last);
  const auto in_image = static_cast<size_t>(s.H * s.W * s.C), out_image = static_cast<size_t>(s.OH * s.OW * s.M);
  dnnl::stream& st = DnnlStream();
  d.weights.Update(w, st);
  for (int64_t n = 0; n < s.N; ++n) {
    float* out = y.mutable_data<float>() + static_cast<size_t>(n) * out_image;
    const float* image_residual = residual.defined() ? residual.data<float>() + static_cast<size_t>(n) * out_image : nullptr;
    BindMaps(d, x.data<float>() + static_cast<size_t>(n) * in_image, out, c.has(2) ? &c.in(2) : nullptr, image_residual);
    d.prim.execute(st, d.args);
    st.wait();
    if (f) FinishSpan(f, out, out_image, static_cast<size_t>(n) * out_image, c.pool);
  }
}

// An fp32 conv primitive of `outputs` channels over an int8 conv's geometry, without bias, with its weights.
struct FloatConv {
  dnnl::convolution_forward prim;
  ReorderedWeights weights;
  Tensor w;  // the weights as floats, in the plain (G, outputs/G, C/G, KH, KW) order
  memory src, dst;
  std::unordered_map<int, memory> args;
};

// An int8 conv computed by fp32 convs: of the weights as they are where the input's magnitudes bound every sum
// below 2^24, else of the split weights.
struct SplitInt8Conv final : KernelState {
  Shape x_shape, w_shape;
  int threads = 0;
  Conv2DShape shape{};
  FloatConv whole, split;
  int64_t max_abs_row = 0;  // the largest sum of |w| over one output's weights
  Tensor x, sums;           // the input as floats and the fp32 sums: scratch kept between runs (fresh pages fault)
  Tensor w_from;            // the weights tensor the two were made from (held: its storage cannot be reused meanwhile)
};

FloatConv BuildFloatConv(const Conv2DShape& s, int64_t outputs) {
  const memory::desc src({s.N, s.C, s.H, s.W}, kF32, Tag::nhwc), dst({s.N, outputs, s.OH, s.OW}, kF32, Tag::nhwc);
  const memory::dims wdims{s.G, outputs / s.G, s.C / s.G, s.KH, s.KW};
  dnnl::convolution_forward::primitive_desc pd(ConvDesc(s, src, memory::desc(wdims, kF32, Tag::any), memory::desc(), dst), DnnlEngine());
  FloatConv f;
  if (IsReferenceImpl(pd)) return f;
  f.prim = dnnl::convolution_forward(pd);
  f.weights = ReorderedWeights(pd.weights_desc(), memory::desc(wdims, kF32, Tag::goihw));
  f.src = Unbound(src);
  f.dst = Unbound(dst);
  f.args = {{DNNL_ARG_SRC, f.src}, {DNNL_ARG_WEIGHTS, f.weights.memory()}, {DNNL_ARG_DST, f.dst}};
  return f;
}

// The int8 weights (M, C/G, KH, KW) as floats, whole, and split into (G, 2 M/G, C/G, KH, KW): each group's hi
// parts, then its lo parts; and the largest sum of |w| over an output's weights.
void MakeFloatWeights(SplitInt8Conv& d, const Tensor& w) {
  const Conv2DShape& s = d.shape;
  const int64_t out = s.M / s.G, row = s.C / s.G * s.KH * s.KW;
  d.whole.w = Tensor::Empty(DType::kF32, {s.G, out, s.C / s.G, s.KH, s.KW});
  d.split.w = Tensor::Empty(DType::kF32, {s.G, 2 * out, s.C / s.G, s.KH, s.KW});
  const int8_t* from = w.data<int8_t>();
  float* whole = d.whole.w.mutable_data<float>();
  float* split = d.split.w.mutable_data<float>();
  d.max_abs_row = 0;
  for (int64_t m = 0; m < s.M; ++m) {
    float* hi = split + ((m / out) * 2 * out + m % out) * row;
    float* lo = hi + out * row;
    int64_t abs_row = 0;
    for (int64_t k = 0; k < row; ++k) {
      const int v = from[m * row + k];
      whole[m * row + k] = static_cast<float>(v);
      hi[k] = SplitHigh(v);
      lo[k] = SplitLow(v);
      abs_row += std::abs(v);
    }
    d.max_abs_row = std::max(d.max_abs_row, abs_row);
  }
  d.w_from = w;
}

}  // namespace

Result<bool> RunSplitInt8Conv(KernelContext& c, const std::function<Result<Conv2DShape>()>& geometry) try {
  if (c.in(0).dtype() != DType::kI8 || c.in(1).dtype() != DType::kI8 || (c.has(2) && c.in(2).dtype() != DType::kI32)) return false;
  omp_set_num_threads(c.pool.size());
  std::unique_ptr<KernelState> local;
  std::unique_ptr<KernelState>* slot = c.options.state ? c.options.state : &local;
  auto* d = dynamic_cast<SplitInt8Conv*>(slot->get());
  // The task's state may be RunDnnlConv's (with VNNI, declined for sums past 2^24): it stays, this one is per run.
  if (!d && *slot) slot = &local;
  if (!d || d->x_shape != c.in(0).shape() || d->w_shape != c.in(1).shape() || d->threads != c.pool.size()) {
    NPU_ASSIGN_OR_RETURN(Conv2DShape s, geometry());
    if (s.C / s.G * s.KH * s.KW > kMaxSplitProducts) return false;
    *slot = std::make_unique<SplitInt8Conv>();
    d = static_cast<SplitInt8Conv*>(slot->get());
    d->shape = s;
    d->x_shape = c.in(0).shape();
    d->w_shape = c.in(1).shape();
    d->threads = c.pool.size();
    d->whole = BuildFloatConv(s, s.M);
    d->split = BuildFloatConv(s, 2 * s.M);
  }
  if (!d->whole.prim || !d->split.prim) return false;
  const Conv2DShape& s = d->shape;
  if (!(d->w_from.defined() && d->w_from.raw() == c.in(1).raw())) MakeFloatWeights(*d, c.in(1));
  const Tensor x8 = ToChannelsLast(c.in(0), c.pool);
  // Every partial sum is at most max|x| * sum|w| of its output: below 2^24, the weights as they are give exact sums.
  const bool split = MaxAbsInt8(x8, c.pool) * d->max_abs_row >= kExactInFp32;
  FloatConv& f = split ? d->split : d->whole;
  if (!d->x.defined()) {
    d->x = Tensor::Empty(DType::kF32, x8.shape());
    d->sums = Tensor::Empty(DType::kF32, {s.N, s.OH, s.OW, 2 * s.M});  // room for the split sums
  }
  Tensor& x = d->x;
  Int8ToFloat(x8, x, c.pool);
  Tensor& sums = d->sums;
  dnnl::stream& st = DnnlStream();
  f.weights.Update(f.w, st);
  f.src.set_data_handle(x.mutable_raw());
  f.dst.set_data_handle(sums.mutable_raw());
  f.prim.execute(st, f.args);
  st.wait();
  Tensor y = Tensor::Empty(DType::kI32, {s.N, s.M, s.OH, s.OW});
  JoinInt8Sums(sums.data<float>(), s.N * s.OH * s.OW, s.G, s.M / s.G, split, c.has(2) ? c.in(2).data<int32_t>() : nullptr,
               y.mutable_data<int32_t>(), c.pool);
  y.channels_last = OrdersDiffer(y.shape());
  c.outputs[0] = std::move(y);
  return true;
} catch (const dnnl::error& e) {
  return c.Fail(std::string("oneDNN failed: ") + e.what());
}

WinogradChoice WinogradSetting() {
  const char* setting = std::getenv("NPUKIT_WINOGRAD");
  const std::string_view v = setting ? setting : "";
  return v == "0" ? WinogradChoice::kNever : v == "4x4" ? WinogradChoice::kF4x4 : v == "2x2" ? WinogradChoice::kF2x2 : WinogradChoice::kWherePays;
}

// A destination holding the residual, for a primitive that adds it by a sum post-op: the residual's own storage
// when nothing else holds it (the conv's result then goes over the map it reads, as the block's Add would), else a
// copy.
Tensor SumDestination(Tensor residual, const Shape& shape, ThreadPool& pool) {
  if (residual.sole_owner()) return residual;
  Tensor y = Tensor::Empty(DType::kF32, shape);
  const float* from = residual.data<float>();
  float* to = y.mutable_data<float>();
  pool.ParallelFor(static_cast<size_t>(y.numel()), kElementwiseGrain, [&](size_t b, size_t e) { std::copy(from + b, from + e, to + b); });
  return y;
}

// The ranges of y the AVX2 Winograd kernel left unfinished (their values not finite), from the direct kernel.
void FinishByDirectKernel(DnnlConv& d, const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& residual, Tensor& y,
                          std::span<const std::pair<size_t, size_t>> ranges, const ChunkFinish& finish) {
  Tensor direct = d.residual_as_sum ? residual.Clone() : Tensor::Empty(DType::kF32, y.shape());
  dnnl::stream& st = DnnlStream();
  d.weights.Update(w, st);
  BindMaps(d, x.raw(), direct.mutable_raw(), bias, FloatsOrNull(residual));
  d.prim.execute(st, d.args);
  st.wait();
  float* to = y.mutable_data<float>();
  for (const auto& [begin, end] : ranges) {
    std::copy(direct.data<float>() + begin, direct.data<float>() + end, to + begin);
    if (finish) finish({to + begin, end - begin}, begin);
  }
}

Result<bool> RunDnnlConv(KernelContext& c, const std::function<Result<Conv2DShape>()>& geometry) try {
  const bool int8 = c.in(0).dtype() == DType::kI8 && c.in(1).dtype() == DType::kI8 && (!c.has(2) || c.in(2).dtype() == DType::kI32);
  if (int8 && (!ExactInt8Products() || c.residual.defined())) return false;
  if (!int8 && (c.in(0).dtype() != DType::kF32 || c.in(1).dtype() != DType::kF32)) return false;
  // oneDNN's threads (OpenMP) as many as the session's pool. Before the primitive is built: it plans its
  // work split for the thread count it sees then.
  omp_set_num_threads(c.pool.size());
  std::unique_ptr<KernelState> local;
  bool fresh = false;
  auto* d = TaskState<DnnlConv>(c.options.state, local, [&](const DnnlConv& kept) { return SameBuild(kept, c); }, fresh);
  if (fresh) NPU_RETURN_IF_ERROR(Build(*d, c, geometry));
  if (!d->usable) return false;
  const Conv2DShape& s = d->shape;
  Tensor x = ToChannelsLast(c.in(0), c.pool);
  Tensor residual;
  if (ResidualInPrimitive(*d)) {
    residual = c.residual.channels_last ? std::move(c.residual) : ToChannelsLast(c.residual, c.pool);
    c.residual_applied = true;
  }
  const Shape y_shape{s.N, s.M, s.OH, s.OW};
  if (residual.defined() && residual.shape() != y_shape)
    return c.Fail("internal error: the fused residual is " + ShapeToString(residual.shape()) + ", the result " + ShapeToString(y_shape));
  const bool avx2_winograd = d->avx2_winograd && !c.options.inputs_may_hold_non_finite;  // else the direct kernel, not both
  Tensor y = d->residual_as_sum && !avx2_winograd ? SumDestination(std::move(residual), y_shape, c.pool)
                                                   : Tensor::Empty(d->int8 ? DType::kI32 : DType::kF32, y_shape);
  y.channels_last = true;
  const bool stays_channels_last = c.options.channels_last_out || !OrdersDiffer(y.shape());
  const Tensor& w = ConvWeights(*d, c.in(1));
  if (d->winograd) {
    d->winograd->Run(x.data<float>(), w, d->has_bias ? c.in(2).data<float>() : nullptr, y.mutable_data<float>(),
                     RowsFinish(c, stays_channels_last), c.pool);
  } else if (d->patches) {
    if (!(d->patch_from.defined() && d->patch_from.raw() == w.raw())) {
      d->patch_w = PatchWeights(w, s);
      d->patch_from = w;
    }
    dnnl::stream& st = DnnlStream();
    d->weights.Update(d->patch_w, st);
    GatherWindows(x.data<float>(), s, d->windows.mutable_data<float>(), c.pool);
    BindMaps(*d, d->windows.raw(), y.mutable_raw(), c.has(2) ? &c.in(2) : nullptr, FloatsOrNull(residual));
    d->patches->execute(st, d->args);
    st.wait();
  } else if (d->grouped) {
    d->grouped->Run(x.data<float>(), w, d->has_bias ? c.in(2).data<float>() : nullptr, d->has_residual ? residual.data<float>() : nullptr,
                    y.mutable_data<float>(), RowsFinish(c, stays_channels_last), c.pool);
  } else if (d->depthwise) {
    d->depthwise->Run(x.data<float>(), w, d->has_bias ? c.in(2).data<float>() : nullptr, d->has_residual ? residual.data<float>() : nullptr,
                      y.mutable_data<float>(), DepthwiseFinishFor(c, stays_channels_last), c.pool);
  } else if (avx2_winograd) {
    const ChunkFinish finish = RowsFinish(c, stays_channels_last);
    const auto unfinished = d->avx2_winograd->Run(x.data<float>(), w, d->has_bias ? c.in(2).data<float>() : nullptr,
                                                  d->has_residual ? residual.data<float>() : nullptr, y.mutable_data<float>(), finish, c.pool);
    if (!unfinished.empty()) FinishByDirectKernel(*d, x, w, c.has(2) ? &c.in(2) : nullptr, residual, y, unfinished, finish);
  } else if (d->by_image) {
    RunByImage(*d, c, x, w, y, residual, stays_channels_last);
  } else {
    dnnl::stream& st = DnnlStream();
    BindMaps(*d, x.raw(), y.mutable_raw(), c.has(2) ? &c.in(2) : nullptr, FloatsOrNull(residual));
    // Merged groups multiply the other groups' inputs by zeros: an Inf or a NaN would reach their outputs.
    if (d->merged > 1 && AnyNonFinite(std::span(x.data<float>(), static_cast<size_t>(x.numel())))) {
      d->exact_weights.Update(w, st);
      d->exact.execute(st, d->exact_args);
    } else {
      if (d->merged > 1 && !(d->expanded_from.defined() && d->expanded_from.raw() == w.raw())) {
        d->block_diagonal = BlockDiagonal(w, s, d->merged);
        d->expanded_from = w;
      }
      d->weights.Update(d->merged > 1 ? d->block_diagonal : w, st);
      d->prim.execute(st, d->args);
    }
    st.wait();
    if (d->edge_taps) d->edge_taps->Run(x.data<float>(), c.in(1), y.mutable_data<float>(), c.pool);
  }
  // y's channel is innermost (NHWC); not exact: the caller's integer GEMM is, at any size
  if (d->int8 && !FinishInt8Sums(y, c.has(2) ? &c.in(2) : nullptr, c.pool)) return false;
  if (d->activation) c.epilogue_applied = true;
  FinishResult(c, y, stays_channels_last && !d->int8);  // an int8 conv's int32 sums are not the result yet
  if (!OrdersDiffer(y.shape())) y.channels_last = false;
  // An int8 conv's int32 result stays channels-last for its fused dequant/requant (ConvInt8 converts after it).
  c.outputs[0] = c.options.channels_last_out || d->int8 ? std::move(y) : ToChannelsFirst(y, c.pool);
  return true;
} catch (const dnnl::error& e) {
  return c.Fail(std::string("oneDNN failed: ") + e.what());
}

}  // namespace npu
