// Kernel checks against small hand-computed cases; the ONNX node tests cover the rest.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <dnnl.hpp>

#include "base/half.h"
#include "ir/op_schema.h"
#include "kernels/conv_depthwise_avx512.h"
#include "kernels/conv_dnnl.h"
#include "kernels/conv_edge_taps.h"
#include "kernels/conv_grouped_avx2.h"
#include "kernels/gemv.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "kernels/registry.h"
#include "test_util.h"

namespace npu {
namespace {

std::vector<Tensor> RunOp(const std::string& op, std::vector<Tensor> ins, AttrMap attrs = {}, int opset = 13, int outs = 1) {
  RegisterBuiltinOps();
  Node n;
  n.name = "n";
  n.op_type = op;
  n.opset = opset;
  n.attrs = std::move(attrs);
  for (int i = 0; i < outs; ++i) n.outputs.push_back(i);
  n.inputs.assign(ins.size(), 0);
  std::vector<Tensor> out;
  Status s = RunKernel(n, std::move(ins), out, ThreadPool::Global());
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(Kernels, AddBroadcastsRowAgainstMatrix) {
  auto y = RunOp("Add", {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({3}, {10, 20, 30})})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  std::vector<float> want = {11, 22, 33, 14, 25, 36};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], want[i]);
}

// Constant Pad copies rows: growing and cropping (negative pads) on every axis, against an element-by-element walk.
TEST(Kernels, ConstantPadGrowsAndCropsEveryAxis) {
  const Shape in = {2, 3, 4};
  const std::vector<int64_t> begin = {1, -1, 2}, end = {0, 1, -1};
  Tensor x = Random(in, 7);
  Tensor pads = I64({begin[0], begin[1], begin[2], end[0], end[1], end[2]}), value = F32({}, {7.5f});
  auto y = RunOp("Pad", {x, pads, value})[0];
  const Shape os = {3, 3, 5};
  ASSERT_EQ(y.shape(), os);
  for (int64_t a = 0; a < os[0]; ++a)
    for (int64_t b = 0; b < os[1]; ++b)
      for (int64_t c = 0; c < os[2]; ++c) {
        int64_t i = a - begin[0], j = b - begin[1], k = c - begin[2];
        bool inside = i >= 0 && i < in[0] && j >= 0 && j < in[1] && k >= 0 && k < in[2];
        float want = inside ? x.data<float>()[(i * in[1] + j) * in[2] + k] : 7.5f;
        EXPECT_EQ(y.data<float>()[(a * os[1] + b) * os[2] + c], want) << a << "," << b << "," << c;
      }
}

// Pads of zero on every axis leave the input as it is, without a copy; one that grows and crops the same axis
// (same shape) moves its values.
TEST(Kernels, PadOfNothingIsTheInput) {
  Tensor x = Random({2, 3, 4}, 8);
  const Tensor same = RunOp("Pad", {x, I64({0, 0, 0, 0, 0, 0})})[0];
  EXPECT_EQ(same.raw(), x.raw());
  const Tensor shifted = RunOp("Pad", {x, I64({0, 0, 1, 0, 0, -1})})[0];
  ASSERT_EQ(shifted.shape(), x.shape());
  EXPECT_EQ(shifted.data<float>()[0], 0.f);
  EXPECT_EQ(shifted.data<float>()[1], x.data<float>()[0]);
}

// An image resize (N and C kept) takes the row-wise path; the same resize with a leading unit axis takes the general
// one. Both give the same bits, for every mode, and upsampling as well as downsampling, with an infinite input too.
TEST(Kernels, ImageResizeMatchesTheGeneralPathBitForBit) {
  Tensor x = Random({2, 3, 5, 7}, 11);
  for (bool finite : {true, false}) {  // then an infinity: the row-wise path's padded taps must not reach it
    if (!finite) x.mutable_data<float>()[40] = INFINITY;
    for (const char* mode : {"nearest", "linear", "cubic"})
      for (float sh : {2.0f, 0.6f})
        for (float sw : {1.5f, 8.0f})  // W taps gathered per output, and read once per run of outputs
          for (const char* ct : {"half_pixel", "align_corners", "asymmetric"}) {
            AttrMap attrs = {{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string(ct)}};
            Tensor scales4 = F32({4}, {1, 1, sh, sw}), scales5 = F32({5}, {1, 1, 1, sh, sw});
            auto image = RunOp("Resize", {x, Tensor(), scales4}, attrs)[0];
            auto general = RunOp("Resize", {x.Reshaped({1, 2, 3, 5, 7}), Tensor(), scales5}, attrs)[0];
            ASSERT_EQ(image.numel(), general.numel());
            EXPECT_EQ(std::memcmp(image.raw(), general.raw(), image.nbytes()), 0) << mode << " " << sh << " " << sw << " " << ct << " finite " << finite;
          }
  }
}

TEST(Kernels, ConvWithPaddingMatchesHandComputation) {
  // 1x1x3x3 input of ones, 3x3 kernel of ones, pad 1: centre 9, edges 6, corners 4.
  auto y = RunOp("Conv", {F32({1, 1, 3, 3}, std::vector<float>(9, 1)), F32({1, 1, 3, 3}, std::vector<float>(9, 1))},
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
  std::vector<float> want = {4, 6, 4, 6, 9, 6, 4, 6, 4};
  ASSERT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], want[i]);
}

// A conv in fp64, one output at a time, and each output's sum of |x| |w| over its window (the scale of the
// rounding error any fp32 evaluation of it may make). pads: top, left, bottom, right; w: (M, C / group, KH, KW).
struct ExactConv {
  std::vector<double> y, scale;
};
struct ConvWindow {
  int64_t group = 1, stride = 1, dh = 1, dw = 1;  // dh, dw: dilations
};
ExactConv ExactConvSum(const Tensor& x, const Tensor& w, const Tensor* b, const std::vector<int64_t>& pads, ConvWindow k = {}) {
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3], M = w.shape()[0];
  const int64_t KH = w.shape()[2], KW = w.shape()[3];
  const int64_t in = C / k.group, out = M / k.group;
  const int64_t OH = (H + pads[0] + pads[2] - (KH - 1) * k.dh - 1) / k.stride + 1, OW = (W + pads[1] + pads[3] - (KW - 1) * k.dw - 1) / k.stride + 1;
  ExactConv r{std::vector<double>(static_cast<size_t>(N * M * OH * OW)), std::vector<double>(static_cast<size_t>(N * M * OH * OW))};
  const float *xp = x.data<float>(), *wp = w.data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double sum = b ? b->data<float>()[m] : 0.0, scale = std::abs(sum);
          for (int64_t c = 0; c < in; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * k.stride + kh * k.dh - pads[0], iw = ow * k.stride + kw * k.dw - pads[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                const double p = static_cast<double>(xp[((n * C + m / out * in + c) * H + ih) * W + iw]) * wp[((m * in + c) * KH + kh) * KW + kw];
                sum += p;
                scale += std::abs(p);
              }
          const size_t i = static_cast<size_t>(((n * M + m) * OH + oh) * OW + ow);
          r.y[i] = sum;
          r.scale[i] = scale;
        }
  return r;
}

// A conv's result y against the exact sums: NaN or the infinity exactly where the exact sum has one, every other
// output finite and within `bound` of its sum of |x| |w| (the rounding's scale); and non-finite outputs present
// exactly when the input held a non-finite value.
void ExpectTheExactSum(const Tensor& y, const ExactConv& want, double bound, bool non_finite, const std::string& what) {
  ASSERT_EQ(y.numel(), static_cast<int64_t>(want.y.size())) << what;
  const float* got = y.data<float>();
  double worst = 0;
  int64_t non_finite_outputs = 0;
  for (size_t i = 0; i < want.y.size(); ++i) {
    if (!std::isfinite(want.y[i])) {
      ++non_finite_outputs;
      if (std::isnan(want.y[i])) EXPECT_TRUE(std::isnan(got[i])) << i << " " << what;
      else EXPECT_EQ(static_cast<double>(got[i]), want.y[i]) << i << " " << what;
      continue;
    }
    ASSERT_TRUE(std::isfinite(got[i])) << i << " " << what;
    worst = std::max(worst, std::abs(got[i] - want.y[i]) / want.scale[i]);
  }
  EXPECT_LT(worst, bound) << what;
  EXPECT_EQ(non_finite_outputs > 0, non_finite) << what;
}

// The Winograd bands (conv_winograd.h) on 1-3 threads, and the whole-map form, with bias or without, batch 2, valid
// and asymmetric padding, maps whose rows do not divide into whole tiles: every output within the transform's rounding of the exact sum
// (a band reading the wrong rows or missing its padding is off by a whole product), and where an input is NaN or
// infinite, the outputs the direct sum gives: NaN or the infinity exactly where a window holds one, finite elsewhere.
// On AVX2 hosts the same cases check npukit's own kernel (conv_winograd_avx2.h): both tilings, its blocks of tiles
// across images, its output channels split between tasks (64 channels on 14x14), a last panel of 8 channels (24),
// and its non-finite tiles recomputed by the direct kernel.
TEST(Kernels, WinogradConvIsTheDirectSumWithinItsRounding) {
  RegisterBuiltinOps();
  struct Case {
    Shape x;
    int64_t M;
    std::vector<int64_t> pads;
    bool bias;
    std::vector<int> threads;
    WinogradTiling avx2 = WinogradTiling::kF4x4;  // the tiling npukit's AVX2 kernel takes it with (on hosts it is built for)
    bool onednn = true;  // oneDNN's Winograd kernel takes it (AVX-512 hosts)
  };
  const std::vector<Case> cases = {
      {{1, 32, 60, 28}, 48, {1, 1, 1, 1}, true, {1, 2, 3}},
      {{2, 32, 33, 33}, 48, {0, 0, 0, 0}, false, {1, 2}},
      {{1, 32, 57, 41}, 16, {1, 0, 0, 1}, true, {1, 2, 3}},
      {{1, 256, 14, 13}, 256, {1, 1, 1, 1}, true, {1, 2}, WinogradTiling::kF2x2},  // bands too small: the whole map on oneDNN's threads
      {{1, 96, 28, 28}, 96, {1, 1, 1, 1}, true, {1, 2}},           // a large map: the whole map on any count of threads
      {{1, 64, 14, 14}, 64, {1, 1, 1, 1}, true, {2, 3}, WinogradTiling::kF4x4, false},  // AVX2: tiles too few, channels split too
      {{1, 32, 30, 30}, 24, {1, 1, 1, 1}, false, {2}, WinogradTiling::kF4x4, false},    // AVX2: a last panel of 8 channels
      {{1, 128, 7, 7}, 128, {1, 1, 1, 1}, true, {1, 2}, WinogradTiling::kF2x2, false},  // AVX2: F(2x2, 3x3), 16 tiles of a 7x7 map
      {{1, 48, 13, 13}, 64, {1, 1, 1, 1}, false, {2}, WinogradTiling::kF2x2, false},    // AVX2: F(2x2, 3x3), tiles past the map's edge
  };
  unsigned seed = 50;
  for (const Case& k : cases) {
    Tensor x = Random(k.x, seed++), w = Random({k.M, k.x[1], 3, 3}, seed++), b = Random({k.M}, seed++);
    for (bool non_finite : {false, true}) {
      if (non_finite) {  // in different bands, one on a map's edge
        float* p = x.mutable_data<float>();
        p[5 * k.x[3] + 7] = NAN;
        p[(k.x[1] - 1) * k.x[2] * k.x[3] + (k.x[2] - 2) * k.x[3] + k.x[3] - 1] = -INFINITY;
      }
      const ExactConv want = ExactConvSum(x, w, k.bias ? &b : nullptr, k.pads);
      Node conv = MakeNode("Conv", k.bias ? 3 : 2, {{"pads", k.pads}});
      for (int threads : k.threads) {
        const int64_t OH = k.x[2] + k.pads[0] + k.pads[2] - 2, OW = k.x[3] + k.pads[1] + k.pads[3] - 2;
        const Conv2DShape geometry{k.x[0], k.x[1], k.x[2], k.x[3], k.M, 1, 3, 3, 1, 1, 1, 1, k.pads[0], k.pads[1], OH, OW};
        // oneDNN 2.6 has Winograd kernels for AVX-512 only (as oneDNN sees the CPU: ONEDNN_MAX_CPU_ISA=AVX2 hides
        // them), npukit's own is built for AVX2 without AVX-512; elsewhere the direct kernel runs and is checked alike.
        if ((static_cast<int>(dnnl::get_effective_cpu_isa()) & dnnl_cpu_isa_avx512_core) == dnnl_cpu_isa_avx512_core) {
          if (k.onednn) {
            ASSERT_TRUE(WinogradPays(geometry, threads)) << "the case must take the Winograd path";
            ASSERT_TRUE(WinogradBuilds(geometry, threads)) << "oneDNN has no Winograd kernel for the case";
          }
        } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
          ASSERT_EQ(Avx2WinogradTiling(geometry), k.avx2) << "the case must take the AVX2 kernel's tiling, or not the kernel";
        }
        ThreadPool pool(threads);
        std::vector<Tensor> ins = {x, w};
        if (k.bias) ins.push_back(b);
        std::vector<Tensor> out;
        ASSERT_TRUE(RunKernel(conv, ins, out, pool).ok());
        // fp32 has 2^-24 = 6e-8 per rounding; F(4x4, 3x3)'s transforms (entries up to 8 in magnitude) multiply it.
        ExpectTheExactSum(out[0], want, 5e-6, non_finite, "threads " + std::to_string(threads));
      }
    }
  }
}

// A conv whose input may hold an Inf (the runtime saw a task before it produce one) runs the direct kernel alone on
// hosts where npukit's AVX2 Winograd kernel would take it: its result is the direct kernel's, bit for bit, where the
// Winograd kernel would have computed the map and then the direct kernel for the chunks the Inf reaches.
TEST(Kernels, ConvOfInputsThatMayHoldInfsIsTheDirectKernels) {
  RegisterBuiltinOps();
  const Shape xs = {1, 32, 60, 28};
  const int64_t M = 48;
  const Conv2DShape geometry{1, 32, 60, 28, M, 1, 3, 3, 1, 1, 1, 1, 1, 1, 60, 28};
  if (Avx2WinogradTiling(geometry) == WinogradTiling::kNone) GTEST_SKIP() << "npukit's AVX2 Winograd kernel does not run on this host";
  Tensor x = Random(xs, 111), w = Random({M, 32, 3, 3}, 112), b = Random({M}, 113);
  x.mutable_data<float>()[40 * 28 + 5] = INFINITY;
  const Node conv = MakeNode("Conv", 3, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  ThreadPool pool(2);
  const auto run = [&](bool may_hold_non_finite) {
    std::vector<Tensor> out;
    KernelRunOptions options;
    options.inputs_may_hold_non_finite = may_hold_non_finite;
    EXPECT_TRUE(RunKernel(conv, {x, w, b}, out, pool, ExecContext{}, nullptr, options).ok());
    return out[0];
  };
  setenv("NPUKIT_WINOGRAD", "0", 1);  // read when the conv's primitive is built: every conv the direct sum
  const Tensor direct = run(false);
  unsetenv("NPUKIT_WINOGRAD");
  const Tensor flagged = run(true), winograd = run(false);
  ASSERT_EQ(flagged.nbytes(), direct.nbytes());
  EXPECT_EQ(std::memcmp(flagged.raw(), direct.raw(), direct.nbytes()), 0) << "the flagged conv must be the direct kernel's";
  EXPECT_NE(std::memcmp(winograd.raw(), direct.raw(), direct.nbytes()), 0) << "unflagged, Winograd's bits must show where no Inf reaches";
}

// 1x7 and 7x1 convs (inception's factorised 7x7s), and 1x3 and 3x1 ones, which npukit's AVX2 kernel computes by
// F(4, 7) or F(4, 3) along the rows or the columns: every output within the transform's rounding of the exact sum,
// on maps whose rows divide into whole tiles (12x12, 16x16) and do not (17x17, 15x15), with the padding on either side, on 1 and 2 threads; where an input is NaN
// or infinite, the outputs the direct sum gives (NaN or the infinity exactly where a window holds one).
TEST(Kernels, WinogradRowsAndColumnsAreTheDirectSum) {
  RegisterBuiltinOps();
  struct Case {
    int64_t C, M, side, kh, kw;
    WinogradTiling tiling;
  };
  unsigned seed = 90;
  for (const Case& k : {Case{64, 64, 12, 1, 7, WinogradTiling::kRow7}, Case{64, 64, 12, 7, 1, WinogradTiling::kColumn7},
                        Case{64, 48, 17, 1, 7, WinogradTiling::kRow7}, Case{48, 64, 17, 7, 1, WinogradTiling::kColumn7},
                        Case{96, 96, 16, 1, 3, WinogradTiling::kRow3}, Case{96, 80, 15, 3, 1, WinogradTiling::kColumn3}}) {
    const std::vector<int64_t> pads = {k.kh / 2, k.kw / 2, k.kh / 2, k.kw / 2};
    Tensor x = Random({1, k.C, k.side, k.side}, seed++), w = Random({k.M, k.C, k.kh, k.kw}, seed++), b = Random({k.M}, seed++);
    const Conv2DShape geometry{1, k.C, k.side, k.side, k.M, 1, k.kh, k.kw, 1, 1, 1, 1, pads[0], pads[1], k.side, k.side};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f")) {
      ASSERT_EQ(Avx2WinogradTiling(geometry), k.tiling) << "the case must take the AVX2 kernel's tiling";
    }
    for (bool non_finite : {false, true}) {
      if (non_finite) {
        x.mutable_data<float>()[3 * k.side + 5] = NAN;
        x.mutable_data<float>()[(k.C - 1) * k.side * k.side + k.side * k.side - 2] = INFINITY;
      }
      const ExactConv want = ExactConvSum(x, w, &b, pads);
      Node conv = MakeNode("Conv", 3, {{"pads", pads}});
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::vector<Tensor> out;
        ASSERT_TRUE(RunKernel(conv, {x, w, b}, out, pool).ok());
        ExpectTheExactSum(out[0], want, 5e-6, non_finite,
                          std::to_string(k.kh) + "x" + std::to_string(k.kw) + " on " + std::to_string(k.side) + ", threads " + std::to_string(threads));
      }
    }
  }
}

// Convs whose windows tile the input (kernel == stride, ConvNeXt's downsampling), which run as one matrix product of
// the gathered windows: the exact sum within fp32's rounding, with a bias, a fused residual and Relu, batch 2, a map
// whose last column no window reads (13 wide), and a NaN input reaching only its own window's outputs.
TEST(Kernels, PatchConvsAreTheDirectSum) {
  RegisterBuiltinOps();
  const int64_t N = 2, C = 16, M = 24, H = 12, W = 13, OH = 6, OW = 6;
  Tensor x = Random({N, C, H, W}, 101), w = Random({M, C, 2, 2}, 102), b = Random({M}, 103), r = Random({N, M, OH, OW}, 104, -4, 4);
  x.mutable_data<float>()[(C + 3) * H * W + 4 * W + 7] = NAN;  // image 1, channel 3: output (2, 3) of every channel
  const ExactConv want = ExactConvSum(x, w, &b, {0, 0, 0, 0}, {.stride = 2});
  Node conv = MakeNode("Conv", 4, {{"strides", std::vector<int64_t>{2, 2}}, {kEpilogueOp, std::string("Relu")},
                                   {kEpilogueResidualInput, int64_t{3}}});
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(RunKernel(conv, {x, w, b, r}, out, pool).ok());
    ASSERT_EQ(out[0].shape(), (Shape{N, M, OH, OW}));
    const float* got = out[0].data<float>();
    double worst = 0;
    for (size_t i = 0; i < want.y.size(); ++i) {
      const double rv = r.data<float>()[i];
      if (std::isnan(want.y[i])) {
        EXPECT_EQ(got[i], 0.0f) << i;  // Relu takes NaN to 0 (ChannelsLast.FusedResidualAndActivationComeInThatOrder)
        continue;
      }
      worst = std::max(worst, std::abs(got[i] - std::max(0.0, want.y[i] + rv)) / (want.scale[i] + std::abs(rv)));
    }
    EXPECT_LT(worst, 1e-6) << "threads " << threads;
  }
}

// Finite inputs whose Winograd transform overflows where the direct sum does not (inputs near 1e37: the input
// transform multiplies by up to 100, past fp32's 3.4e38): every output is the direct sum, with the fused Relu run
// on the recomputed rows, on 1 and 2 threads. On AVX2 hosts npukit's kernel hands those rows to the direct one.
TEST(Kernels, WinogradOverflowGivesTheDirectSum) {
  RegisterBuiltinOps();
  const int64_t C = 32, M = 32, H = 28, W = 28;
  const Tensor x = Random({1, C, H, W}, 71, 1e37f, 3e37f), w = Random({M, C, 3, 3}, 72, -1e-3f, 1e-3f), b = Random({M}, 73);
  const Conv2DShape geometry{1, C, H, W, M, 1, 3, 3, 1, 1, 1, 1, 1, 1, H, W};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f")) {
    ASSERT_EQ(Avx2WinogradTiling(geometry), WinogradTiling::kF4x4) << "the case must take the AVX2 kernel";
  }
  const ExactConv want = ExactConvSum(x, w, &b, {1, 1, 1, 1});
  Node conv = MakeNode("Conv", 3, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueOp, std::string("Relu")}});
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(RunKernel(conv, {x, w, b}, out, pool).ok());
    ASSERT_EQ(out[0].numel(), static_cast<int64_t>(want.y.size()));
    const float* got = out[0].data<float>();
    double worst = 0;
    for (size_t i = 0; i < want.y.size(); ++i) {
      ASSERT_TRUE(std::isfinite(want.y[i]));
      ASSERT_TRUE(std::isfinite(got[i])) << i << " threads " << threads;
      worst = std::max(worst, std::abs(got[i] - std::max(0.0, want.y[i])) / want.scale[i]);
    }
    EXPECT_LT(worst, 1e-6) << "threads " << threads;  // the direct kernel's rounding
  }
}

// A fused residual and activation on the Winograd path (on AVX2 hosts npukit's kernel adds the residual in its
// output transform, where oneDNN's AVX-512 kernel takes none and the direct one runs): Relu(conv + bias + r) within
// the transform's rounding, and an infinite residual's outputs (left to the direct kernel) Inf, or 0 after Relu.
TEST(Kernels, WinogradAddsAFusedResidualBeforeTheActivation) {
  RegisterBuiltinOps();
  const int64_t C = 32, M = 40, H = 29, W = 30;
  const Tensor x = Random({1, C, H, W}, 81), w = Random({M, C, 3, 3}, 82), b = Random({M}, 83);
  Tensor r = Random({1, M, H, W}, 84, -4, 4);
  const int64_t plus = 7 * H * W + 100, minus = 30 * H * W + 500;  // channels-first indices
  r.mutable_data<float>()[plus] = INFINITY;
  r.mutable_data<float>()[minus] = -INFINITY;
  const Conv2DShape geometry{1, C, H, W, M, 1, 3, 3, 1, 1, 1, 1, 1, 1, H, W};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f")) {
    ASSERT_EQ(Avx2WinogradTiling(geometry), WinogradTiling::kF4x4) << "the case must take the AVX2 kernel";
  }
  const ExactConv want = ExactConvSum(x, w, &b, {1, 1, 1, 1});
  Node conv = MakeNode("Conv", 4, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueOp, std::string("Relu")},
                                   {kEpilogueResidualInput, int64_t{3}}});
  for (int threads : {1, 2}) {
    ThreadPool pool(threads);
    std::vector<Tensor> out;
    ASSERT_TRUE(RunKernel(conv, {x, w, b, r}, out, pool).ok());
    ASSERT_EQ(out[0].numel(), static_cast<int64_t>(want.y.size()));
    const Tensor& y = out[0];
    ASSERT_FALSE(y.channels_last);
    const float* got = y.data<float>();
    double worst = 0;
    for (size_t i = 0; i < want.y.size(); ++i) {
      const double rv = r.data<float>()[i];
      if (!std::isfinite(rv)) {
        EXPECT_EQ(got[i], rv > 0 ? INFINITY : 0.0f) << i;
        continue;
      }
      worst = std::max(worst, std::abs(got[i] - std::max(0.0, want.y[i] + rv)) / (want.scale[i] + std::abs(rv)));
    }
    EXPECT_LT(worst, 5e-6) << "threads " << threads;
  }
}

// A fused residual where an infinite input makes some rows' sums infinite: on AVX2 hosts npukit's Winograd kernel hands
// those rows to oneDNN's direct primitive, which adds the residual by its sum post-op into a destination holding it
// (conv_dnnl.cc SumDestination); elsewhere the primitive computes every row so. Every output is the exact sum plus the
// residual, the infinite ones with their sign, whether the residual is the conv's to write over or held elsewhere too.
TEST(Kernels, AFusedResidualReachesRowsTheDirectPrimitiveFinishes) {
  RegisterBuiltinOps();
  const int64_t C = 32, M = 48, H = 60, W = 28;
  Tensor x = Random({1, C, H, W}, 121), w = Random({M, C, 3, 3}, 122), b = Random({M}, 123);
  x.mutable_data<float>()[40 * W + 5] = INFINITY;  // channel 0: one tap of each window around it, so +-inf sums
  const Tensor r = Random({1, M, H, W}, 124, -4, 4);
  const ExactConv want = ExactConvSum(x, w, &b, {1, 1, 1, 1});
  const Node conv = MakeNode("Conv", 4, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueResidualInput, int64_t{3}}});
  for (bool shared : {false, true}) {
    ThreadPool pool(2);
    std::vector<Tensor> out;
    Tensor residual = r.Clone();
    const Tensor other_holder = shared ? residual : Tensor();
    ASSERT_TRUE(RunKernel(conv, {x, w, b, std::move(residual)}, out, pool).ok());
    const float* got = out[0].data<float>();
    int64_t infinite = 0;
    double worst = 0;
    for (size_t i = 0; i < want.y.size(); ++i) {
      const double rv = r.data<float>()[i];
      if (!std::isfinite(want.y[i])) {
        ++infinite;
        EXPECT_EQ(got[i], static_cast<float>(want.y[i])) << i;
        continue;
      }
      worst = std::max(worst, std::abs(got[i] - (want.y[i] + rv)) / (want.scale[i] + std::abs(rv)));
    }
    EXPECT_GT(infinite, 0);
    EXPECT_LT(worst, 5e-6) << (shared ? "shared residual" : "residual written over");
    if (shared) {
      EXPECT_EQ(std::memcmp(other_holder.raw(), r.raw(), r.nbytes()), 0) << "a residual held elsewhere keeps its values";
    }
  }
}

// Grouped convs with 2-4 channels per group, which oneDNN computes with neighbouring groups merged and zeros
// between them (conv_dnnl.cc MergedGroups), and npukit's own kernel on AVX2 hosts where the groups have 4 channels
// in and out (conv_grouped_avx2.h): every output within fp32's rounding of the exact grouped sum, and an Inf
// or a NaN in one group's input reaches that group's outputs only (the zeros of the merged weights would carry
// it to the others).
TEST(Kernels, NarrowGroupedConvsKeepTheirGroupsApart) {
  RegisterBuiltinOps();
  struct Case {
    int64_t C, M, G;
  };
  for (const Case& k : {Case{64, 64, 16}, Case{64, 128, 32}, Case{48, 48, 24}}) {
    const int64_t H = 13, W = 11, in = k.C / k.G, out = k.M / k.G;
    Tensor x = Random({1, k.C, H, W}, 61), w = Random({k.M, in, 3, 3}, 62), b = Random({k.M}, 63);
    for (bool non_finite : {false, true}) {
      const int64_t poisoned = 5;  // an input channel of group 5 / in
      if (non_finite) {
        x.mutable_data<float>()[(poisoned * H + 4) * W + 6] = NAN;
        x.mutable_data<float>()[(poisoned * H + 9) * W + 2] = INFINITY;
      }
      const Tensor y = RunOp("Conv", {x, w, b}, {{"group", k.G}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}})[0];
      ASSERT_EQ(y.shape(), (Shape{1, k.M, H, W}));
      const ExactConv want = ExactConvSum(x, w, &b, {1, 1, 1, 1}, {.group = k.G});
      const float* got = y.data<float>();
      for (int64_t m = 0; m < k.M; ++m) {
        bool any_non_finite = false;
        for (int64_t i = m * H * W; i < (m + 1) * H * W; ++i) {
          const double sum = want.y[static_cast<size_t>(i)];
          if (!std::isfinite(sum)) {
            any_non_finite = true;
            EXPECT_FALSE(std::isfinite(got[i])) << "m " << m;
            continue;
          }
          ASSERT_TRUE(std::isfinite(got[i])) << "C " << k.C << " G " << k.G << " output " << i;
          EXPECT_LE(std::abs(got[i] - sum), want.scale[static_cast<size_t>(i)] * 1e-6) << "m " << m;
        }
        EXPECT_EQ(any_non_finite, non_finite && m / out == poisoned / in) << "output channel " << m;
      }
    }
  }
}

// Depthwise convs (npukit's own kernel on AVX-512 hosts, conv_depthwise_avx512.h; oneDNN's elsewhere, and for 3x3
// at stride 2): 3x3, 5x5 and 7x7 windows at stride 1 and 2, channel counts that leave a partial register, maps whose
// rows take tiles of 7 and of 8 and a map of 7 rows whose channels are split between tasks, padding on one side
// only and none, a batch of two, with bias or without, a fused residual and Relu: every output within fp32's
// rounding of the exact sum, the same bits on 1 and 2 threads, and a NaN or an Inf in one channel's input in that
// channel's outputs only.
TEST(Kernels, DepthwiseConvsGiveTheExactSumsChannelByChannel) {
  RegisterBuiltinOps();
  struct Case {
    int64_t N, C, H, W, K, stride;
    std::vector<int64_t> pads;
    bool bias, relu, residual;
    bool ours = true;  // npukit's kernel takes it on AVX-512 hosts (3x3 at stride 2 stays oneDNN's)
  };
  const Case cases[] = {
      {1, 24, 15, 15, 3, 1, {1, 1, 1, 1}, true, true, false},  {1, 40, 13, 17, 5, 2, {2, 2, 2, 2}, true, false, false},
      {1, 72, 14, 14, 5, 1, {2, 2, 2, 2}, true, true, false},  {1, 48, 28, 28, 5, 2, {2, 2, 2, 2}, false, false, false},
      {1, 40, 7, 7, 7, 1, {3, 3, 3, 3}, true, false, true},    {2, 33, 9, 23, 3, 1, {0, 0, 0, 0}, true, true, true},
      {1, 32, 16, 16, 5, 2, {1, 1, 2, 2}, true, true, false},  {1, 32, 16, 16, 3, 2, {0, 0, 1, 1}, true, true, false, false},
  };
  constexpr int64_t kPoisoned = 5;  // the input channel given a NaN and an Inf
  for (const Case& k : cases) {
    Tensor x = Random({k.N, k.C, k.H, k.W}, 91);
    const Tensor w = Random({k.C, 1, k.K, k.K}, 92), b = Random({k.C}, 93);
    const int64_t OH = (k.H + k.pads[0] + k.pads[2] - k.K) / k.stride + 1, OW = (k.W + k.pads[1] + k.pads[3] - k.K) / k.stride + 1;
    const Tensor r = Random({k.N, k.C, OH, OW}, 94, -4, 4);
    const std::string what = "C " + std::to_string(k.C) + " " + std::to_string(k.H) + "x" + std::to_string(k.W) + " k" + std::to_string(k.K) + " s" +
                             std::to_string(k.stride);
#if defined(__AVX512F__)  // the kernel is built where this file is (an AVX2 build on an AVX-512 CPU has none)
    const Conv2DShape geometry{k.N, k.C, k.H, k.W, k.C, k.C, k.K, k.K, k.stride, k.stride, 1, 1, k.pads[0], k.pads[1], OH, OW};
    ASSERT_EQ(Avx512DepthwiseConv::Build(geometry) != nullptr, k.ours) << what << ": the kernel that takes it";
#endif
    AttrMap attrs = {{"group", k.C}, {"pads", k.pads}, {"strides", std::vector<int64_t>{k.stride, k.stride}}};
    if (k.relu) attrs.emplace(kEpilogueOp, std::string("Relu"));
    if (k.residual) attrs.emplace(kEpilogueResidualInput, int64_t{3});
    const Node conv = MakeNode("Conv", k.residual ? 4 : k.bias ? 3 : 2, attrs);
    for (bool non_finite : {false, true}) {
      if (non_finite) {
        x.mutable_data<float>()[(kPoisoned * k.H + 2) * k.W + 3] = NAN;
        x.mutable_data<float>()[(kPoisoned * k.H + k.H - 2) * k.W + k.W / 2] = INFINITY;
      }
      const ExactConv want = ExactConvSum(x, w, k.bias ? &b : nullptr, k.pads, {.group = k.C, .stride = k.stride});
      std::vector<Tensor> ins = {x, w};
      if (k.bias) ins.push_back(b);
      if (k.residual) ins.push_back(r);
      std::vector<std::vector<Tensor>> outs(2);
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        ASSERT_TRUE(RunKernel(conv, ins, outs[threads - 1], pool).ok()) << what;
      }
      const Tensor& y = outs[0][0];
      ASSERT_EQ(y.shape(), (Shape{k.N, k.C, OH, OW})) << what;
      EXPECT_EQ(std::memcmp(y.raw(), outs[1][0].raw(), y.nbytes()), 0) << what << ": 1 and 2 threads";
      const float* got = y.data<float>();
      double worst = 0;
      for (size_t i = 0; i < want.y.size(); ++i) {
        const int64_t channel = static_cast<int64_t>(i) / (OH * OW) % k.C;
        const double rv = k.residual ? r.data<float>()[i] : 0.0, sum = want.y[i] + rv;
        if (!std::isfinite(sum)) {
          EXPECT_EQ(channel, kPoisoned) << what << " output " << i;
          if (k.relu) EXPECT_EQ(got[i], sum > 0 ? INFINITY : 0.0f) << what << " output " << i;  // NaN gives +0
          else if (std::isnan(sum)) EXPECT_TRUE(std::isnan(got[i])) << what << " output " << i;
          else EXPECT_EQ(static_cast<double>(got[i]), sum) << what << " output " << i;
          continue;
        }
        ASSERT_TRUE(std::isfinite(got[i])) << what << " output " << i;
        const double expected = k.relu ? std::max(0.0, sum) : sum;
        worst = std::max(worst, std::abs(got[i] - expected) / (want.scale[i] + std::abs(rv)));
      }
      EXPECT_LT(worst, 5e-6) << what;
    }
  }
}

// Int8 convs (int8 x and weights, an int32 bias) give the exact integer sums with the bias added in int32's two's
// complement wrap, on every path: fp32 convs of the weights as they are (small sums), of the weights split into
// 16 * hi + lo (sums past 2^24: 4608 products of up to 128 * 128), grouped, strided, and past 8738 products per
// output, the integer GEMM.
TEST(Kernels, Int8ConvsGiveTheExactIntegerSums) {
  RegisterBuiltinOps();
  struct Case {
    int64_t C, M, G, H, stride;
    int values;  // inputs and weights in [-values, values - 1]
  };
  std::mt19937 rng(71);
  for (const Case& k : {Case{16, 24, 1, 9, 1, 128}, Case{512, 16, 1, 5, 1, 128}, Case{1024, 8, 2, 5, 2, 128}, Case{64, 32, 4, 8, 1, 8},
                        Case{1024, 4, 1, 4, 1, 128}}) {
    const int64_t in = k.C / k.G, out = k.M / k.G, OH = (k.H + 2 - 3) / k.stride + 1;
    Tensor x = Tensor::Empty(DType::kI8, {1, k.C, k.H, k.H}), w = Tensor::Empty(DType::kI8, {k.M, in, 3, 3});
    Tensor b = Tensor::Empty(DType::kI32, {k.M});
    std::uniform_int_distribution<int> v(-k.values, k.values - 1);
    for (int8_t& e : std::span(x.mutable_data<int8_t>(), static_cast<size_t>(x.numel()))) e = static_cast<int8_t>(v(rng));
    for (int8_t& e : std::span(w.mutable_data<int8_t>(), static_cast<size_t>(w.numel()))) e = static_cast<int8_t>(v(rng));
    for (int64_t m = 0; m < k.M; ++m) b.mutable_data<int32_t>()[m] = m == 0 ? std::numeric_limits<int32_t>::max() : static_cast<int32_t>(m * 1000 - 7000);
    const Tensor y = RunOp("Conv", {x, w, b}, {{"group", k.G}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{k.stride, k.stride}}})[0];
    ASSERT_EQ(y.dtype(), DType::kI32);
    ASSERT_EQ(y.shape(), (Shape{1, k.M, OH, OH}));
    const int8_t *xp = x.data<int8_t>(), *wp = w.data<int8_t>();
    for (int64_t m = 0; m < k.M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OH; ++ow) {
          int64_t sum = 0;
          for (int64_t c = 0; c < in; ++c)
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) {
                const int64_t ih = oh * k.stride + kh - 1, iw = ow * k.stride + kw - 1;
                if (ih < 0 || ih >= k.H || iw < 0 || iw >= k.H) continue;
                sum += int64_t{xp[((m / out * in + c) * k.H + ih) * k.H + iw]} * wp[((m * in + c) * 3 + kh) * 3 + kw];
              }
          const auto want = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(b.data<int32_t>()[m]));
          ASSERT_EQ(y.data<int32_t>()[(m * OH + oh) * OH + ow], want) << "C " << k.C << " G " << k.G << " m " << m << " (" << oh << ", " << ow << ")";
        }
  }
}

// Int8 MatMul and Gemm (int8 operands, an int32 bias for Gemm, transposed weights) give the exact integer sums on
// every path: small sums, sums past 2^24 (4096 products of up to 128 * 128), and past 8738 products.
TEST(Kernels, Int8MatMulsGiveTheExactIntegerSums) {
  RegisterBuiltinOps();
  std::mt19937 rng(73);
  struct Case {
    int64_t M, K, N;
    int values;  // operands in [-values, values - 1]
  };
  for (const Case& k : {Case{5, 64, 40, 8}, Case{7, 4096, 24, 128}, Case{3, 9000, 5, 128}}) {
    Tensor a = Tensor::Empty(DType::kI8, {k.M, k.K}), b = Tensor::Empty(DType::kI8, {k.K, k.N}), bt = Tensor::Empty(DType::kI8, {k.N, k.K});
    Tensor bias = Tensor::Empty(DType::kI32, {k.N});
    std::uniform_int_distribution<int> v(-k.values, k.values - 1);
    for (int8_t& e : std::span(a.mutable_data<int8_t>(), static_cast<size_t>(a.numel()))) e = static_cast<int8_t>(v(rng));
    for (int8_t& e : std::span(b.mutable_data<int8_t>(), static_cast<size_t>(b.numel()))) e = static_cast<int8_t>(v(rng));
    for (int64_t i = 0; i < k.K; ++i)
      for (int64_t j = 0; j < k.N; ++j) bt.mutable_data<int8_t>()[j * k.K + i] = b.data<int8_t>()[i * k.N + j];
    for (int64_t j = 0; j < k.N; ++j) bias.mutable_data<int32_t>()[j] = j == 0 ? std::numeric_limits<int32_t>::min() : static_cast<int32_t>(j * 77);
    const Tensor product = RunOp("MatMul", {a, b})[0];
    const Tensor gemm = RunOp("Gemm", {a, bt, bias}, {{"transB", int64_t{1}}})[0];
    ASSERT_EQ(product.dtype(), DType::kI32);
    ASSERT_EQ(gemm.dtype(), DType::kI32);
    for (int64_t i = 0; i < k.M; ++i)
      for (int64_t j = 0; j < k.N; ++j) {
        int64_t sum = 0;
        for (int64_t t = 0; t < k.K; ++t) sum += int64_t{a.data<int8_t>()[i * k.K + t]} * b.data<int8_t>()[t * k.N + j];
        ASSERT_EQ(product.data<int32_t>()[i * k.N + j], static_cast<int32_t>(sum)) << "K " << k.K << " (" << i << ", " << j << ")";
        const auto with_bias = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(bias.data<int32_t>()[j]));
        ASSERT_EQ(gemm.data<int32_t>()[i * k.N + j], with_bias) << "K " << k.K << " (" << i << ", " << j << ")";
      }
  }
}

// Dilated convs whose outer taps read only padding (deeplabv3's ASPP: dilation 24 and 36 on 14 x 14 maps) run with
// the kernel cropped to the taps that read the map (conv_dnnl.cc CropToLiveTaps): every output within fp32's
// rounding of the exact sum, with strides, rows and columns cropped differently, and kernels with no dead taps.
// A dilated 3x3 conv's geometry, with symmetric padding, as the dilation tests run it.
struct DilatedCase {
  int64_t H, W, dh, dw, ph, pw, stride;
  int64_t OH() const { return (H + 2 * ph - 2 * dh - 1) / stride + 1; }
  int64_t OW() const { return (W + 2 * pw - 2 * dw - 1) / stride + 1; }
  AttrMap Attrs() const {
    return {{"dilations", std::vector<int64_t>{dh, dw}}, {"pads", std::vector<int64_t>{ph, pw, ph, pw}}, {"strides", std::vector<int64_t>{stride, stride}}};
  }
  ExactConv Exact(const Tensor& x, const Tensor& w, const Tensor& b) const {
    return ExactConvSum(x, w, &b, {ph, pw, ph, pw}, {.stride = stride, .dh = dh, .dw = dw});
  }
  std::string Name() const { return std::to_string(H) + "x" + std::to_string(W) + " dilation " + std::to_string(dh) + "," + std::to_string(dw); }
};

TEST(Kernels, DilatedConvsWithTapsOnlyInThePaddingAreTheExactSum) {
  RegisterBuiltinOps();
  for (const DilatedCase& k : {DilatedCase{14, 14, 24, 24, 24, 24, 1}, DilatedCase{14, 14, 36, 12, 36, 12, 1}, DilatedCase{9, 9, 6, 6, 6, 6, 2},
                               DilatedCase{5, 11, 4, 1, 4, 1, 1}, DilatedCase{6, 6, 7, 7, 7, 7, 1}}) {
    const int64_t C = 16, M = 8;
    const Tensor x = Random({1, C, k.H, k.W}, 81), w = Random({M, C, 3, 3}, 82), b = Random({M}, 83);
    const Tensor y = RunOp("Conv", {x, w, b}, k.Attrs())[0];
    ASSERT_EQ(y.shape(), (Shape{1, M, k.OH(), k.OW()}));
    const ExactConv want = k.Exact(x, w, b);
    for (size_t i = 0; i < want.y.size(); ++i)
      EXPECT_LE(std::abs(y.data<float>()[i] - want.y[i]), want.scale[i] * 1e-6 + 1e-30) << k.Name() << " output " << i;
  }
}

// Dilated convs whose outer taps read the map for bands of outputs only (conv_edge_taps.h: the taps live for every
// output as a conv, each other one's products over its band): within the rounding of the exact sum, batch 2, output
// channels that fill no register, strided, one dim dilated, the share of live taps from 18% to 82%; and with a fused
// residual and Relu, which come after every tap's products.
TEST(Kernels, ConvTapsLiveOnBandsAreTheExactSum) {
  RegisterBuiltinOps();
  for (const DilatedCase& k : {DilatedCase{14, 14, 12, 12, 12, 12, 1}, DilatedCase{14, 14, 6, 6, 6, 6, 1}, DilatedCase{14, 14, 12, 1, 12, 1, 1},
                               DilatedCase{13, 13, 6, 6, 6, 6, 2}, DilatedCase{28, 28, 4, 4, 4, 4, 1}}) {
    const int64_t N = 2, C = 24, M = 200;
    const std::string what = k.Name();
    ASSERT_NE(EdgeTaps::Plan({N, C, k.H, k.W, M, 1, 3, 3, k.stride, k.stride, k.dh, k.dw, k.ph, k.pw, k.OH(), k.OW()}), nullptr) << what;
    const Tensor x = Random({N, C, k.H, k.W}, 91), w = Random({M, C, 3, 3}, 92), b = Random({M}, 93), r = Random({N, M, k.OH(), k.OW()}, 94);
    AttrMap attrs = k.Attrs();
    const ExactConv want = k.Exact(x, w, b);
    ExpectTheExactSum(RunOp("Conv", {x, w, b}, attrs)[0], want, 1e-6, false, what);
    attrs[kEpilogueOp] = std::string("Relu");
    attrs[kEpilogueResidualInput] = int64_t{3};
    const Tensor y = RunOp("Conv", {x, w, b, r}, attrs)[0];
    ASSERT_EQ(y.numel(), static_cast<int64_t>(want.y.size())) << what;
    for (size_t i = 0; i < want.y.size(); ++i)
      ASSERT_NEAR(y.data<float>()[i], std::max(0.0, want.y[i] + r.data<float>()[i]), want.scale[i] * 1e-6 + 1e-6) << what << " fused, output " << i;
  }
}

// Grouped convs of 4 channels per group in and out, which npukit's own kernel computes on AVX2 hosts
// (conv_grouped_avx2.h), two groups to a register: every output within fp32's rounding of the exact grouped sum, on
// 1-3 threads, batch 2, strided, dilated, with asymmetric padding, rows of outputs that are not whole tiles of 8
// (13, 7, 8 and 3 wide), 1x1 and 5x3 kernels; and with a fused residual and Relu.
TEST(Kernels, GroupsOfFourChannelsAreTheExactSum) {
  RegisterBuiltinOps();
  struct Case {
    int64_t G, H, W, KH, KW, stride, dilation;
    std::vector<int64_t> pads;
  };
  const bool avx2_only = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && !__builtin_cpu_supports("avx512f");
  for (const Case& k : {Case{32, 13, 13, 3, 3, 1, 1, {1, 1, 1, 1}}, Case{8, 14, 15, 3, 3, 2, 1, {1, 1, 1, 1}}, Case{4, 9, 7, 3, 3, 1, 2, {2, 0, 1, 3}},
                        Case{6, 5, 3, 1, 1, 1, 1, {0, 0, 0, 0}}, Case{2, 11, 10, 5, 3, 1, 1, {2, 1, 2, 1}}}) {
    const int64_t N = 2, C = 4 * k.G;
    const int64_t OH = (k.H + k.pads[0] + k.pads[2] - (k.KH - 1) * k.dilation - 1) / k.stride + 1;
    const int64_t OW = (k.W + k.pads[1] + k.pads[3] - (k.KW - 1) * k.dilation - 1) / k.stride + 1;
    const std::string what = std::to_string(k.G) + " groups, " + std::to_string(k.KH) + "x" + std::to_string(k.KW) + " on " + std::to_string(k.H) + "x" +
                             std::to_string(k.W) + ", stride " + std::to_string(k.stride) + ", dilation " + std::to_string(k.dilation);
    if (avx2_only) {
      const Conv2DShape geometry{N, C, k.H, k.W, C, k.G, k.KH, k.KW, k.stride, k.stride, k.dilation, k.dilation, k.pads[0], k.pads[1], OH, OW};
      ASSERT_NE(Avx2GroupedConv::Build(geometry), nullptr) << what << ": the case must take npukit's kernel";
    }
    const Tensor x = Random({N, C, k.H, k.W}, 101), w = Random({C, 4, k.KH, k.KW}, 102), b = Random({C}, 103), r = Random({N, C, OH, OW}, 104);
    AttrMap attrs = {{"group", k.G},
                     {"pads", k.pads},
                     {"strides", std::vector<int64_t>{k.stride, k.stride}},
                     {"dilations", std::vector<int64_t>{k.dilation, k.dilation}}};
    const ExactConv want = ExactConvSum(x, w, &b, k.pads, {.group = k.G, .stride = k.stride, .dh = k.dilation, .dw = k.dilation});
    AttrMap fused = attrs;
    fused[kEpilogueOp] = std::string("Relu");
    fused[kEpilogueResidualInput] = int64_t{3};
    for (int threads : {1, 2, 3}) {
      ThreadPool pool(threads);
      std::vector<Tensor> out;
      ASSERT_TRUE(RunKernel(MakeNode("Conv", 3, attrs), {x, w, b}, out, pool).ok()) << what;
      ExpectTheExactSum(out[0], want, 1e-6, false, what + ", threads " + std::to_string(threads));
      ASSERT_TRUE(RunKernel(MakeNode("Conv", 4, fused), {x, w, b, r}, out, pool).ok()) << what;
      ASSERT_EQ(out[0].numel(), static_cast<int64_t>(want.y.size())) << what;
      for (size_t i = 0; i < want.y.size(); ++i)
        ASSERT_NEAR(out[0].data<float>()[i], std::max(0.0, want.y[i] + r.data<float>()[i]), want.scale[i] * 1e-6 + 1e-6) << what << " fused, output " << i;
    }
  }
}

TEST(Kernels, DepthwiseConvUsesOneFilterPerChannel) {
  auto y = RunOp("Conv", {F32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), F32({2, 1, 1, 1}, {2, -1}), F32({2}, {0.5f, 0})},
               {{"group", int64_t{2}}})[0];
  std::vector<float> want = {2.5f, 4.5f, 6.5f, 8.5f, -5, -6, -7, -8};
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(y.data<float>()[i], want[i]);
}

TEST(Kernels, SoftmaxRowsSumToOne) {
  auto y = RunOp("Softmax", {F32({2, 3}, {1, 2, 3, 1000, 1000, 1000})})[0];
  for (int r = 0; r < 2; ++r) {
    float s = 0;
    for (int i = 0; i < 3; ++i) s += y.data<float>()[r * 3 + i];
    EXPECT_NEAR(s, 1.f, 1e-6);
  }
  EXPECT_NEAR(y.data<float>()[3], 1.f / 3, 1e-6);
}

// The fp32 row path works in SIMD packets with a padded tail: every width around the packet size, against a
// double softmax (within a few ulp beyond the rounding of exp's argument); a -inf score (a masked position) gives exactly 0, and a row holding a NaN or +inf is all NaN.
TEST(Kernels, SoftmaxRowsAreTheDoubleSoftmaxForEveryWidth) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> score(-30.f, 30.f);
  for (int64_t n : {1, 3, 8, 15, 16, 17, 31, 33, 49, 197}) {
    const int64_t rows = 5;
    std::vector<float> x(static_cast<size_t>(rows * n));
    for (float& v : x) v = score(gen);
    if (n > 2) x[1] = -std::numeric_limits<float>::infinity();                      // row 0: one masked score
    x[static_cast<size_t>(2 * n + n - 1)] = std::numeric_limits<float>::quiet_NaN();  // row 2: NaN in the tail
    x[static_cast<size_t>(3 * n)] = std::numeric_limits<float>::infinity();         // row 3: +inf
    auto y = RunOp("Softmax", {F32({rows, n}, x)})[0];
    for (int64_t r = 0; r < rows; ++r) {
      const float* xr = x.data() + r * n;
      const float* yr = y.data<float>() + r * n;
      if (r == 2 || r == 3) {
        for (int64_t i = 0; i < n; ++i) EXPECT_TRUE(std::isnan(yr[i])) << "n=" << n << " row " << r << " col " << i;
        continue;
      }
      double top = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i) top = std::max<double>(top, xr[i]);
      for (int64_t i = 0; i < n; ++i) sum += std::exp(double{xr[i]} - top);
      for (int64_t i = 0; i < n; ++i) {
        const double want = std::exp(double{xr[i]} - top) / sum;
        if (std::isinf(xr[i])) {
          EXPECT_EQ(yr[i], 0.f);
          continue;
        }
        // exp's argument x - max is rounded to fp32 first: relative error up to |x - max| * 2^-24 from that alone
        const double argument_error = std::abs(double{xr[i]} - top) * 0x1p-24;
        EXPECT_NEAR(yr[i], want, want * (argument_error + 1e-6)) << "n=" << n << " row " << r << " col " << i;
      }
    }
  }
}

// A kernel that writes its result element for element over an input (ResultOver) does so only when it holds the
// input's only reference, as the runtime hands a task the last read of an intermediate: a tensor something else holds
// keeps its values and the result is new. Softmax, an elementwise op, a same-shape Add (over either operand) and
// LayerNorm give the same bits either way.
TEST(Kernels, ResultsOverInputsNothingElseHoldsGiveTheSameBits) {
  const Tensor x = Random({4, 197}, 5, -8, 8), other = Random({4, 197}, 6), before = x.Clone();
  auto same_bits = [](const Tensor& a, const Tensor& b) { return a.nbytes() == b.nbytes() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0; };
  for (const char* op : {"Softmax", "Sigmoid", "Add", "LayerNormalization"}) {
    SCOPED_TRACE(op);
    auto inputs = [&](Tensor a) { return std::string(op) == "Add" ? std::vector<Tensor>{std::move(a), other} : std::vector<Tensor>{std::move(a)}; };
    const Tensor shared = RunOp(op, inputs(x))[0];  // x is held here too
    EXPECT_NE(shared.raw(), x.raw());
    EXPECT_TRUE(same_bits(x, before));
    Tensor sole = x.Clone();
    const std::byte* storage = sole.raw();
    const Tensor over = RunOp(op, inputs(std::move(sole)))[0];
    EXPECT_EQ(over.raw(), storage);
    EXPECT_TRUE(same_bits(over, shared));
  }
  // The second operand, where it has the result's shape and the first (a broadcast row) does not.
  const Tensor row = Random({197}, 7), want = RunOp("Add", {row, other})[0];
  std::vector<Tensor> ins = {row, other.Clone()};  // (an initializer list would hold a copy of its own during the call)
  const std::byte* storage = ins[1].raw();
  const Tensor sum = RunOp("Add", std::move(ins))[0];
  EXPECT_EQ(sum.raw(), storage);
  EXPECT_TRUE(same_bits(sum, want));
}

// A selection that is one aligned run of its input (a Gather of one slab, a Slice or Split along the outermost
// axis) shares the input's storage; one that is not (a strided Slice, a run off the 64-byte boundary) is a copy.
// Either way the values are the selected ones.
TEST(Kernels, ContiguousSelectionsAreViewsOfTheirInput) {
  Tensor x = Random({3, 4, 8}, 80);  // slabs of 32 floats: 128 bytes
  auto shares = [&](const Tensor& y) { return y.raw() >= x.raw() && y.raw() < x.raw() + x.nbytes(); };
  auto expect_elements = [&](const Tensor& y, int64_t from) {
    for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.data<float>()[i], x.data<float>()[from + i]) << i;
  };
  const Tensor slab = RunOp("Gather", {x, I64({2}).Reshaped({})}, {{"axis", int64_t{0}}})[0];
  EXPECT_EQ(slab.shape(), (Shape{4, 8}));
  EXPECT_TRUE(shares(slab));
  expect_elements(slab, 64);
  const Tensor rows = RunOp("Slice", {x, I64({1}), I64({3}), I64({0})})[0];
  EXPECT_TRUE(shares(rows));
  expect_elements(rows, 32);
  const auto parts = RunOp("Split", {x, I64({1, 2})}, {{"axis", int64_t{0}}}, 13, 2);
  EXPECT_TRUE(shares(parts[0]) && shares(parts[1]));
  expect_elements(parts[1], 32);
  const Tensor strided = RunOp("Slice", {x, I64({2}), I64({6}), I64({2})})[0];  // columns 2..5 of every row
  EXPECT_FALSE(shares(strided));
  for (int64_t r = 0; r < 12; ++r)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(strided.data<float>()[r * 4 + j], x.data<float>()[r * 8 + 2 + j]);
  const Tensor off_boundary = RunOp("Gather", {x.Reshaped({12, 8}), I64({1}).Reshaped({})}, {{"axis", int64_t{0}}})[0];  // 32 bytes in
  EXPECT_FALSE(shares(off_boundary));
  expect_elements(off_boundary, 8);
}

// A Transpose that moves only dims of extent 1 (a batch_first swap of a batch of one) is its input's bytes; one
// that moves a longer dim past another is a copy in the new order.
TEST(Kernels, TransposesOfUnitDimsAreViewsOfTheirInput) {
  const Tensor x = Random({1, 5, 3}, 84);
  const Tensor swapped = RunOp("Transpose", {x}, {{"perm", std::vector<int64_t>{1, 0, 2}}})[0];
  EXPECT_EQ(swapped.shape(), (Shape{5, 1, 3}));
  EXPECT_EQ(swapped.raw(), x.raw());
  const Tensor moved = RunOp("Transpose", {x}, {{"perm", std::vector<int64_t>{0, 2, 1}}})[0];
  ASSERT_EQ(moved.shape(), (Shape{1, 3, 5}));
  EXPECT_NE(moved.raw(), x.raw());
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(moved.data<float>()[j * 5 + i], x.data<float>()[i * 3 + j]);
}

// A Transpose whose innermost output dim gathers from the source while the dim before it is contiguous there (a
// batch of matrix transposes) is copied in tiles: matrices whose sides are not multiples of the tile, several of
// them, NCHW -> NHWC, for 2-, 4- and 8-byte elements on 1 to 3 threads, every element where the permutation puts it.
TEST(Kernels, TransposedTilesPutEveryElementWhereThePermutationSays) {
  RegisterBuiltinOps();
  struct Case {
    Shape shape;
    std::vector<int64_t> perm;
  };
  const std::vector<Case> cases = {{{3, 37, 50}, {0, 2, 1}}, {{2, 20, 5, 7}, {0, 2, 3, 1}}, {{40, 33}, {1, 0}}, {{5, 1, 17}, {2, 1, 0}}};
  for (DType dtype : {DType::kF16, DType::kF32, DType::kI64})
    for (const Case& k : cases) {
      Tensor x = Tensor::Empty(dtype, k.shape);
      const size_t es = DTypeSize(dtype);
      for (int64_t i = 0; i < x.numel(); ++i)  // each element's bytes name it
        for (size_t b = 0; b < es; ++b) x.mutable_raw()[static_cast<size_t>(i) * es + b] = static_cast<std::byte>((i >> (8 * (b % 2))) & 0xff);
      const std::vector<int64_t> in_strides = Strides(k.shape);
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        std::vector<Tensor> out;
        ASSERT_TRUE(RunKernel(MakeNode("Transpose", 1, {{"perm", k.perm}}), {x}, out, pool).ok());
        const Shape& ys = out[0].shape();
        const std::vector<int64_t> out_strides = Strides(ys);
        for (int64_t o = 0; o < out[0].numel(); ++o) {
          int64_t from = 0;
          for (size_t d = 0; d < ys.size(); ++d) from += o / out_strides[d] % ys[d] * in_strides[static_cast<size_t>(k.perm[d])];
          ASSERT_EQ(std::memcmp(out[0].raw() + o * static_cast<int64_t>(es), x.raw() + from * static_cast<int64_t>(es), es), 0)
              << DTypeName(dtype) << " " << ShapeToString(k.shape) << " on " << threads << " threads, output " << o;
        }
      }
    }
}

// Broadcasting binary ops cut long rows into pieces across threads: rows of 50,001 elements (three pieces each),
// several rows with a broadcast operand, a same-shape pair and a scalar, on 1 to 3 threads (so that a thread's
// share starts and ends inside rows), against the element-by-element result.
TEST(Kernels, BinaryOpsOverLongRowsGiveEveryElement) {
  RegisterBuiltinOps();
  const Tensor a = Random({3, 3, 50001}, 81), b = Random({3, 1, 50001}, 82), same = Random({3, 3, 50001}, 83);
  const Tensor scalar = F32({}, {0.25f});
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    auto run = [&](const char* op, const Tensor& y) {
      std::vector<Tensor> out;
      EXPECT_TRUE(RunKernel(MakeNode(op, 2), {a, y}, out, pool).ok());
      return out[0];
    };
    const Tensor sum = run("Add", b), product = run("Mul", same), quotient = run("Div", scalar);
    for (int64_t i = 0; i < a.numel(); ++i) {
      const int64_t n = i / (3 * 50001), j = i % 50001;
      ASSERT_EQ(sum.data<float>()[i], a.data<float>()[i] + b.data<float>()[n * 50001 + j]) << threads << " threads, " << i;
      ASSERT_EQ(product.data<float>()[i], a.data<float>()[i] * same.data<float>()[i]) << threads << " threads, " << i;
      ASSERT_EQ(quotient.data<float>()[i], a.data<float>()[i] / 0.25f) << threads << " threads, " << i;
    }
  }
}

TEST(Kernels, MaxPoolAndGemm) {
  auto p = RunOp("MaxPool", {F32({1, 1, 2, 2}, {1, 5, 3, 2})}, {{"kernel_shape", std::vector<int64_t>{2, 2}}})[0];
  EXPECT_FLOAT_EQ(p.data<float>()[0], 5);
  auto g = RunOp("Gemm", {F32({1, 2}, {1, 2}), F32({3, 2}, {1, 0, 0, 1, 1, 1}), F32({3}, {0, 0, 10})},
               {{"transB", int64_t{1}}})[0];
  ASSERT_EQ(g.shape(), (Shape{1, 3}));
  EXPECT_FLOAT_EQ(g.data<float>()[0], 1);
  EXPECT_FLOAT_EQ(g.data<float>()[1], 2);
  EXPECT_FLOAT_EQ(g.data<float>()[2], 13);
}

// y[m][n] = sum_k a[m][k] * b[k][n] (b given as (N, K) when transposed) + bias[n], summed in double.
std::vector<double> DirectProduct(const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias) {
  const int64_t K = a.shape().back(), M = a.numel() / K, N = b_transposed ? b.shape()[0] : b.shape()[1];
  std::vector<double> y(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double sum = bias ? bias->data<float>()[n] : 0;
      for (int64_t k = 0; k < K; ++k)
        sum += double(a.data<float>()[m * K + k]) * b.data<float>()[b_transposed ? n * K + k : k * N + n];
      y[m * N + n] = sum;
    }
  return y;
}

void ExpectNear(const Tensor& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(static_cast<size_t>(got.numel()), want.size());
  for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.data<float>()[i], want[i], tol) << "element " << i;
}

// The fp32 products (oneDNN's matmul where it takes them, our own otherwise) on sizes that fill no vector
// or block evenly, with leading dims folded into M, a bias, and a transposed right operand.
TEST(Kernels, MatrixProductsMatchADirectSum) {
  for (auto [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {3, 37, 19}, {17, 64, 130}, {128, 96, 33}}) {
    Tensor a = Random({2, M, K}, 1), b = Random({K, N}, 2), bt = Random({N, K}, 3), bias = Random({N}, 4);
    const double tol = 1e-5 * K;
    ExpectNear(RunOp("MatMul", {a, b})[0], DirectProduct(a, b, false, nullptr), tol);
    ExpectNear(RunOp("MatMulBias", {a, b, bias})[0], DirectProduct(a, b, false, &bias), tol);
    Tensor a2 = a.Reshaped({2 * M, K});
    ExpectNear(RunOp("Gemm", {a2, bt, bias}, {{"transB", int64_t{1}}})[0], DirectProduct(a2, bt, true, &bias), tol);
    ExpectNear(RunOp("Gemm", {a2, b})[0], DirectProduct(a2, b, false, nullptr), tol);
  }
}

// Fully connected layers at batch 1 whose weights pass kRowProductMinWeightBytes (gemv.h): Gemm with its weights as
// (N, K) and as (K, N), with a bias, MatMul and MatMulBias, against a direct sum; and the product itself on sizes
// that fill no register or group of rows, the same bits on one thread and on two.
TEST(Kernels, FullyConnectedLayersAtBatchOneMatchADirectSum) {
  const int64_t K = 2053, N = 1031;  // 8.5 MB of weights
  ASSERT_GE(K * N * 4, kRowProductMinWeightBytes);
  Tensor a = Random({1, K}, 5), b = Random({K, N}, 6), bt = Random({N, K}, 7), bias = Random({N}, 8);
  const double tol = 1e-5 * K;
  ExpectNear(RunOp("Gemm", {a, bt, bias}, {{"transB", int64_t{1}}})[0], DirectProduct(a, bt, true, &bias), tol);
  ExpectNear(RunOp("Gemm", {a, b, bias})[0], DirectProduct(a, b, false, &bias), tol);
  ExpectNear(RunOp("MatMul", {a.Reshaped({1, 1, K}), b})[0], DirectProduct(a, b, false, nullptr), tol);
  ExpectNear(RunOp("MatMulBias", {a, b, bias})[0], DirectProduct(a, b, false, &bias), tol);
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {3, 15}, {4, 16}, {7, 17}, {1000, 300}}) {
    Tensor x = Random({cols}, 9), w = Random({rows, cols}, 10), c = Random({rows}, 11);
    const std::vector<double> want = DirectProduct(x.Reshaped({1, cols}), w, true, &c);
    std::vector<float> one(static_cast<size_t>(rows)), two(one.size());
    ThreadPool pool1(1), pool2(2);
    RowTimesWeightRows(x.data<float>(), w.data<float>(), c.data<float>(), one.data(), rows, cols, pool1);
    RowTimesWeightRows(x.data<float>(), w.data<float>(), c.data<float>(), two.data(), rows, cols, pool2);
    for (size_t i = 0; i < one.size(); ++i) ASSERT_NEAR(one[i], want[i], 1e-5 * cols) << rows << " x " << cols << ", row " << i;
    EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << rows << " x " << cols;
    // Weights that are fp16 values, read as fp16: the same sums.
    std::vector<uint16_t> halves(static_cast<size_t>(w.numel()));
    FloatToHalf(std::span(w.data<float>(), halves.size()), std::span(halves));
    std::vector<float> widened(halves.size()), from_floats(one.size()), from_halves(one.size());
    HalfToFloat(std::span<const uint16_t>(halves), std::span(widened));
    RowTimesWeightRows(x.data<float>(), widened.data(), c.data<float>(), from_floats.data(), rows, cols, pool2);
    RowTimesWeightRows(x.data<float>(), halves.data(), c.data<float>(), from_halves.data(), rows, cols, pool2);
    EXPECT_EQ(std::memcmp(from_floats.data(), from_halves.data(), one.size() * sizeof(float)), 0) << rows << " x " << cols;
  }
  // A force_fp16 model's weights reach the kernel widened: it keeps them as fp16, with the same results.
  Tensor bh = Tensor::Empty(DType::kF32, {N, K});
  std::vector<uint16_t> h(static_cast<size_t>(N * K));
  FloatToHalf(std::span(bt.data<float>(), h.size()), std::span(h));
  HalfToFloat(std::span<const uint16_t>(h), std::span(bh.mutable_data<float>(), h.size()));
  const Tensor y = RunOp("Gemm", {a, bh, bias}, {{"transB", int64_t{1}}})[0];
  std::vector<float> want(static_cast<size_t>(N));
  ThreadPool& pool = ThreadPool::Global();
  RowTimesWeightRows(a.data<float>(), bh.data<float>(), bias.data<float>(), want.data(), N, K, pool);
  EXPECT_EQ(std::memcmp(y.data<float>(), want.data(), want.size() * sizeof(float)), 0);
  ExpectNear(y, DirectProduct(a, bh, true, &bias), tol);
}

// Stacks of products of two activations (attention's Q x K^T and P x V, on oneDNN's batched matmul where the
// stacks match, our own loop where a batch dim broadcasts): each matrix of the stack against a direct sum.
TEST(Kernels, BatchedMatrixProductsMatchADirectSumPerMatrix) {
  struct Case {
    Shape a, b;
  };
  for (const Case& k : {Case{{12, 5, 64}, {12, 64, 7}}, Case{{2, 3, 17, 33}, {2, 3, 33, 1}}, Case{{3, 1, 9}, {3, 9, 130}},
                        Case{{2, 1, 4, 6}, {3, 6, 5}}}) {
    Tensor a = Random(k.a, 1), b = Random(k.b, 2);
    const Tensor y = RunOp("MatMul", {a, b})[0];
    const int64_t M = k.a[k.a.size() - 2], K = k.a.back(), N = k.b.back(), stack = y.numel() / (M * N);
    ASSERT_EQ(y.shape().back(), N);
    const int64_t a_stack = a.numel() / (M * K), b_stack = b.numel() / (K * N);
    for (int64_t i = 0; i < stack; ++i) {  // the broadcast case: a's batch (2, 1) against b's 3, so a's matrix i / 3
      const int64_t ai = a_stack == stack ? i : i / b_stack, bi = b_stack == stack ? i : i % b_stack;
      Tensor am = Tensor::Empty(DType::kF32, {M, K}), bm = Tensor::Empty(DType::kF32, {K, N}), ym = Tensor::Empty(DType::kF32, {M, N});
      std::copy_n(a.data<float>() + ai * M * K, M * K, am.mutable_data<float>());
      std::copy_n(b.data<float>() + bi * K * N, K * N, bm.mutable_data<float>());
      std::copy_n(y.data<float>() + i * M * N, M * N, ym.mutable_data<float>());
      ExpectNear(ym, DirectProduct(am, bm, false, nullptr), 1e-5 * K);
    }
  }
}

// A right operand given per run (a graph input, or computed as attention's K^T is) may arrive at a freed
// buffer's address: the product must not reuse what it reordered in an earlier run.
TEST(Kernels, MatMulRightOperandsGivenPerRunAreReadEveryRun) {
  Builder bld;
  int x = bld.In("x", {4, 24}), w = bld.In("w", {24, 10});
  Graph g = bld.Done(bld.Op("MatMul", {x, w}));
  auto session = Session::FromGraph(g);
  ASSERT_TRUE(session.ok());
  Tensor in = Random({4, 24}, 5);
  for (unsigned seed : {6u, 7u, 8u}) {
    std::vector<Tensor> outs;
    Tensor weights = Random({24, 10}, seed);
    ASSERT_TRUE(session.value().Run({in, weights}, outs).ok());
    ExpectNear(outs[0], DirectProduct(in, weights, false, nullptr), 1e-4);
  }
}

TEST(Inference, ReshapeWithConstantShapeIsStatic) {
  RegisterBuiltinOps();
  Graph g;
  int x = g.AddValue("x"), s = g.AddValue("s"), y = g.AddValue("y");
  g.values[x].dtype = DType::kF32;
  g.values[x].shape = {2, 3, 4};
  g.values[x].has_shape = true;
  Tensor shape = Tensor::Empty(DType::kI64, {2});
  shape.mutable_data<int64_t>()[0] = -1;
  shape.mutable_data<int64_t>()[1] = 4;
  g.values[s].constant = shape;
  g.inputs = {x};
  Node n;
  n.name = "r";
  n.op_type = "Reshape";
  n.opset = 13;
  n.inputs = {x, s};
  n.outputs = {y};
  g.nodes.push_back(n);
  g.outputs = {y};
  ASSERT_TRUE(InferGraph(g).ok());
  EXPECT_EQ(g.values[y].shape, (Shape{6, 4}));
}

// The logistic function (Sigmoid, Swish and the runtime's SiLU pair, kernels/logistic.h) against double over a
// sweep of fp32 values in [-104, 104]: within 2 ulp wherever the exact sigmoid is an fp32 normal number on hosts
// running npukit's AVX2 form (3 where Eigen's exp is used), the products within 3; NaN stays NaN, +-inf give 1
// and 0, -0 gives 0.5 and a SiLU of -0; each value is the same bits whatever chunk it is computed in, and in the
// form's 8 lanes as in its 16.
int64_t OrderedBits(float f) {
  int32_t i;
  std::memcpy(&i, &f, sizeof i);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : i;
}

TEST(Kernels, LogisticIsWithinTwoUlpAndTheSameInAnyChunk) {
#if defined(__AVX2__) && defined(__FMA__)
  constexpr int64_t kSigmoidUlp = 2;
#else
  constexpr int64_t kSigmoidUlp = 3;
#endif
  constexpr int64_t kProductUlp = 3;
  constexpr float kAlpha = 1.702f;  // QuickGelu's, a Swish whose product rounds x * alpha first
  std::vector<float> x;
  for (uint32_t bits = 0;; bits += 997) {  // every 997th fp32 bit pattern, both signs
    float f;
    std::memcpy(&f, &bits, sizeof f);
    if (f > 104) break;
    x.push_back(f);
    x.push_back(-f);
  }
  std::vector<float> s(x.size()), silu(x.size()), swish(x.size());
  SigmoidValues(x, s);
  SiluValues(x, silu);
  SwishValues(x, swish, kAlpha);
  auto ulps = [](float got, double want) { return std::abs(OrderedBits(got) - OrderedBits(static_cast<float>(want))); };
  int64_t worst_s = 0, worst_silu = 0, worst_swish = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double v = x[i], exact = 1 / (1 + std::exp(-v));
    const double u = static_cast<float>(x[i] * kAlpha), exact_a = 1 / (1 + std::exp(-u));
    if (static_cast<float>(exact) >= std::numeric_limits<float>::min()) {
      worst_s = std::max(worst_s, ulps(s[i], exact));
      worst_silu = std::max(worst_silu, ulps(silu[i], v * exact));
    }
    if (static_cast<float>(exact_a) >= std::numeric_limits<float>::min()) worst_swish = std::max(worst_swish, ulps(swish[i], v * exact_a));
  }
  EXPECT_LE(worst_s, kSigmoidUlp);
  EXPECT_LE(worst_silu, kProductUlp);
  EXPECT_LE(worst_swish, kProductUlp);

  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> special = {NAN, inf, -inf, -0.0f, 0.0f};
  std::vector<float> ss(special.size()), sp(special.size());
  SigmoidValues(special, ss);
  SiluValues(special, sp);
  EXPECT_TRUE(std::isnan(ss[0]));
  EXPECT_EQ(ss[1], 1.0f);
  EXPECT_EQ(ss[2], 0.0f);
  EXPECT_EQ(ss[3], 0.5f);
  EXPECT_TRUE(std::isnan(sp[0]));
  EXPECT_EQ(sp[1], inf);
  EXPECT_TRUE(std::isnan(sp[2]));  // -inf * 0, as the Mul after a Sigmoid gives it
  EXPECT_TRUE(std::signbit(sp[3]) && sp[3] == 0.0f);

  // Chunks of 1-12 values at every offset modulo a register: the same bits as the whole sweep.
  std::vector<float> chunked(x.size()), chunked_silu(x.size());
  for (size_t b = 0, len = 1; b < x.size(); b += len, len = len % 12 + 1) {
    const size_t n = std::min(len, x.size() - b);
    SigmoidValues(std::span(x).subspan(b, n), std::span(chunked).subspan(b, n));
    SiluValues(std::span(x).subspan(b, n), std::span(chunked_silu).subspan(b, n));
  }
  EXPECT_EQ(std::memcmp(chunked.data(), s.data(), s.size() * sizeof(float)), 0);
  EXPECT_EQ(std::memcmp(chunked_silu.data(), silu.data(), silu.size() * sizeof(float)), 0);

  // The AVX2 form gives the same bits (on an AVX-512 host the values above come from the 16-lane form), the
  // specials included, for Swish and for the SiLU (alpha 1 skips a multiply): a model's results do not depend on
  // which of the two a host runs. Hosts without the form have nothing to compare.
  std::vector<float> all = x;
  all.insert(all.end(), special.begin(), special.end());
  for (float alpha : {kAlpha, 1.0f}) {
    std::vector<float> wide_s(all.size()), wide_swish(all.size()), narrow_s(all.size()), narrow_swish(all.size());
    if (!SigmoidAndSwishIn8Lanes(all, narrow_s, narrow_swish, alpha)) break;
    SigmoidValues(all, wide_s);
    SwishValues(all, wide_swish, alpha);
    EXPECT_EQ(std::memcmp(wide_s.data(), narrow_s.data(), all.size() * sizeof(float)), 0);
    EXPECT_EQ(std::memcmp(wide_swish.data(), narrow_swish.data(), all.size() * sizeof(float)), 0) << "alpha " << alpha;
  }
}


// The node's outputs on a pool of 1 thread, after checking that pools of 2 and 3 give output 0 the same bits (empty
// where a run failed, which the test has reported).
std::vector<Tensor> RunOnOneToThreeThreads(const Node& node, const std::vector<Tensor>& ins) {
  std::vector<Tensor> want;
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    std::vector<Tensor> out;
    const Status st = RunKernel(node, ins, out, pool);
    EXPECT_TRUE(st.ok()) << threads << " threads: " << st.message();
    if (!st.ok()) return {};
    if (want.empty()) want = out;
    else ExpectSameBits(out[0], want[0]);
  }
  return want;
}

// A GRU of each reset placement (linear_before_reset 0 and 1): its recurrent products split over the threads and its
// vector gates give the same bits on 1, 2 and 3 threads.
TEST(Kernels, GruGivesTheSameBitsOnAnyThreadCount) {
  RegisterBuiltinOps();
  const int64_t T = 4, B = 2, I = 5, H = 160;  // 3H x H multiply-adds per step and entry: past the parallel threshold
  const std::vector<Tensor> ins = {Random({T, B, I}, 71), Random({1, 3 * H, I}, 72, -0.3f, 0.3f), Random({1, 3 * H, H}, 73, -0.1f, 0.1f),
                                   Random({1, 6 * H}, 74, -0.5f, 0.5f)};
  for (int64_t linear_before_reset : {0, 1}) {
    Node node = MakeNode("GRU", 4, {{"hidden_size", H}, {"linear_before_reset", linear_before_reset}});
    node.opset = 14;
    SCOPED_TRACE("linear_before_reset " + std::to_string(linear_before_reset));
    RunOnOneToThreeThreads(node, ins);
  }
}

// A bidirectional LSTM with peepholes, biases, initial states and shorter sequences among its five: its two directions, one
// after the other on one thread and at once on more, give the same bits on 1, 2 and 3 threads, and the values of the
// ONNX equations computed here one by one, in double. (A one-way op's split of its steps: the GRU test above.)
TEST(Kernels, LstmGivesTheSameBitsOnAnyThreadCountAndTheEquations) {
  RegisterBuiltinOps();
  // 4H x H multiply-adds per step and entry: past the parallel threshold. Five entries: four summed in one pass over
  // R on AVX-512 hosts (rnn.cc kEntriesAtOnce), then one.
  const int64_t T = 5, B = 5, I = 7, H = 128, D = 2;
  const Tensor x = Random({T, B, I}, 61), w = Random({D, 4 * H, I}, 62, -0.3f, 0.3f), r = Random({D, 4 * H, H}, 63, -0.1f, 0.1f);
  const Tensor bias = Random({D, 8 * H}, 64, -0.5f, 0.5f), h0 = Random({D, B, H}, 65), c0 = Random({D, B, H}, 66);
  const Tensor p = Random({D, 3 * H}, 67, -0.5f, 0.5f);
  Tensor lens = Tensor::Empty(DType::kI32, {B});
  for (int64_t b = 0; b < B; ++b) lens.mutable_data<int32_t>()[b] = static_cast<int32_t>(b % 2 ? 3 - b / 2 : T);  // 5, 3, 5, 2, 5
  Node node = MakeNode("LSTM", 8, {{"hidden_size", H}, {"direction", std::string("bidirectional")}});
  node.opset = 14;
  const std::vector<Tensor> want = RunOnOneToThreeThreads(node, {x, w, r, bias, lens, h0, c0, p});
  ASSERT_FALSE(want.empty());
  // The equations (gates i, o, f, c in ONNX's order), each direction over its entries' own lengths.
  auto sigmoid = [](double v) { return 1 / (1 + std::exp(-v)); };
  const float* y = want[0].data<float>();  // (T, D, B, H)
  for (int64_t k = 0; k < D; ++k)
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = lens.data<int32_t>()[b];
      std::vector<double> h(H), c(H), next(H);
      for (int64_t j = 0; j < H; ++j) h[j] = h0.data<float>()[(k * B + b) * H + j], c[j] = c0.data<float>()[(k * B + b) * H + j];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = k == 0 ? s : len - 1 - s;
        auto pre = [&](int64_t g, int64_t j) {
          double v = bias.data<float>()[k * 8 * H + g * H + j] + bias.data<float>()[k * 8 * H + 4 * H + g * H + j];
          for (int64_t q = 0; q < I; ++q) v += double(x.data<float>()[(t * B + b) * I + q]) * w.data<float>()[(k * 4 * H + g * H + j) * I + q];
          for (int64_t q = 0; q < H; ++q) v += h[q] * r.data<float>()[(k * 4 * H + g * H + j) * H + q];
          return v;
        };
        const float* pk = p.data<float>() + k * 3 * H;
        for (int64_t j = 0; j < H; ++j) {
          const double i = sigmoid(pre(0, j) + pk[j] * c[j]), f = sigmoid(pre(2, j) + pk[2 * H + j] * c[j]), g = std::tanh(pre(3, j));
          c[j] = f * c[j] + i * g;
          next[j] = sigmoid(pre(1, j) + pk[H + j] * c[j]) * std::tanh(c[j]);
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) EXPECT_NEAR(y[((t * D + k) * B + b) * H + j], h[j], 2e-5) << "t " << t << " dir " << k << " b " << b << " j " << j;
      }
    }
}
// A pointwise Conv1d is one product per image in fixed tiles of 256 x 256 results (kernels/gemm_tiles.cc): over
// several tiles each way and ragged edges, the sums with the bias, the same bits on 1, 2 and 3 threads.
TEST(Kernels, PointwiseConv1dTilesGiveTheSumOnAnyThreadCount) {
  RegisterBuiltinOps();
  const int64_t N = 2, C = 70, M = 300, L = 600;
  const Tensor x = Random({N, C, L}, 81), w = Random({M, C, 1}, 82, -0.2f, 0.2f), bias = Random({M}, 83);
  const std::vector<Tensor> got = RunOnOneToThreeThreads(MakeNode("Conv", 3), {x, w, bias});
  ASSERT_FALSE(got.empty());
  ASSERT_EQ(got[0].shape(), (Shape{N, M, L}));
  const float* y = got[0].data<float>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < M; m += 7)  // every seventh row and column: across every tile edge
      for (int64_t l = 0; l < L; l += 7) {
        double want = bias.data<float>()[m];
        for (int64_t c = 0; c < C; ++c) want += double(w.data<float>()[m * C + c]) * x.data<float>()[(n * C + c) * L + l];
        ASSERT_NEAR(y[(n * M + m) * L + l], want, 1e-5) << n << " " << m << " " << l;
      }
}

// ReduceMax and ReduceMin over rows shorter and longer than their 16 lanes: the extreme wherever it lies, and a row
// with NaNs gives its first NaN, payload and all, as the one-value loop did.
TEST(Kernels, ReduceMaxAndMinFindTheExtremeAndTheFirstNaNAnywhere) {
  const float first_nan = std::bit_cast<float>(0x7fc00001u), later_nan = std::bit_cast<float>(0x7fc00002u);
  for (int64_t n : {1, 15, 16, 17, 40, 100})
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> row(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) row[i] = static_cast<float>((i * 37) % 11) - 5;  // within [-5, 5]
      row[at] = 9;
      EXPECT_EQ(RunOp("ReduceMax", {F32({1, n}, row)}, {{"axes", std::vector<int64_t>{1}}})[0].data<float>()[0], 9) << n << " " << at;
      row[at] = -9;
      EXPECT_EQ(RunOp("ReduceMin", {F32({1, n}, row)}, {{"axes", std::vector<int64_t>{1}}})[0].data<float>()[0], -9) << n << " " << at;
      row[at] = first_nan;
      if (at + 1 < n) row[n - 1] = later_nan;
      for (const char* op : {"ReduceMax", "ReduceMin"}) {
        const float got = RunOp(op, {F32({1, n}, row)}, {{"axes", std::vector<int64_t>{1}}})[0].data<float>()[0];
        EXPECT_EQ(std::bit_cast<uint32_t>(got), 0x7fc00001u) << op << " " << n << " " << at;
      }
    }
}
// A 1-D conv of no input channels is its bias: an empty sum, which oneDNN's sgemm would refuse (gemm_tiles.cc).
TEST(Kernels, ConvOfNoInputChannelsIsItsBias) {
  const Tensor y = RunOp("Conv", {Tensor::Zeros(DType::kF32, {1, 0, 10}), Tensor::Zeros(DType::kF32, {4, 0, 1}), F32({4}, {0, 1, 2, 3})})[0];
  ASSERT_EQ(y.shape(), (Shape{1, 4, 10}));
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t l = 0; l < 10; ++l) EXPECT_EQ(y.data<float>()[m * 10 + l], static_cast<float>(m)) << m << " " << l;
}
}  // namespace
}  // namespace npu
