// 2-D fp32 convolution on oneDNN's direct kernels, on channels-last feature maps (see channels_last.h).
// Why oneDNN: its brgemm convolutions read whole channel vectors per output pixel and keep the weights in a
// blocked layout made once per session, so there is no im2col and no weight packing per call. Measured
// single-threaded on resnet50's 53 convolutions: 46.5 ms channels-last, 72.6 ms on (N, C, H, W) through its
// im2col path, against 85 GFLOP/s for Eigen's GEMM under our im2col (docs/performance.md).
#pragma once
#include "kernels/registry.h"
#include "ops/conv.h"

namespace npu {

struct Conv2DShape {
  int64_t N, C, H, W, M, G, KH, KW, SH, SW, DH, DW, PT, PL, OH, OW;  // PT/PL: padding at the top and left
};

// A dim's padding at the end (bottom, right) as oneDNN counts it: the least that yields the output size (its output
// size rounds down, so windows never reach input rows past the last one), never negative.
int64_t PadAfter(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad);

// Computes the conv of c.in(0..2) into c.outputs[0], adding c.residual and applying c.epilogue when given.
// False, with nothing written, when oneDNN has no direct kernel for it (the caller takes its own path).
// `geometry` (from the node's attributes) is asked for only when the task's primitive is (re)built.
Result<bool> RunDnnlConv(KernelContext& c, const std::function<Result<Conv2DShape>()>& geometry);

// An int8 conv (int8 x and weights, int32 bias) that RunDnnlConv declines (oneDNN's int8 products are not exact on
// CPUs without VNNI, and it fuses no residual into them), as one fp32 conv, exactly: each weight split into 16 * hi + lo (hi in [-8, 7], lo in
// [0, 15]), the two halves as twice the output channels, every partial sum an integer under 2^24. Writes the int32
// sums plus bias into c.outputs[0], channels-last as RunDnnlConv's int8 result. False, with nothing written, where
// the sums could pass 2^24 (more than 8738 products per output) or oneDNN has no direct kernel.
Result<bool> RunSplitInt8Conv(KernelContext& c, const std::function<Result<Conv2DShape>()>& geometry);

// An fp32 3-D Conv (c.in(0) of rank 5), or with `transposed` a 2-D or 3-D ConvTranspose (rank 4 or 5), on
// oneDNN's kernels into c.outputs[0], in (N, C, ...) order; the residual, the activation and the rounding are left
// to the runtime. False, with nothing written, when oneDNN offers only its reference kernel or none (the caller's
// im2col path then).
Result<bool> RunDnnlConvNd(KernelContext& c, const ConvGeom& p, bool transposed = false);

// Whether RunDnnlConv computes an fp32 conv of this geometry by Winograd's transform (conv_winograd.h) rather than
// the direct kernel on `threads` threads: 3x3, stride 1, one group, 8M+ multiply-adds, and bands large enough to pay
// or 256+ channels in and out. A fused residual and an int8 conv stay with the direct kernel, as does a geometry
// oneDNN has no Winograd kernel for.
bool WinogradPays(const Conv2DShape& s, int threads);
// The tilings of npukit's own Winograd kernel (conv_winograd_avx2.h): F(4x4, 3x3), F(2x2, 3x3) for small maps,
// F(4, 7) along the rows of 1x7 kernels or the columns of 7x1 ones, and F(4, 3) so for 1x3 and 3x1 kernels.
enum class WinogradTiling { kNone, kF4x4, kF2x2, kRow7, kColumn7, kRow3, kColumn3 };
// The tiling RunDnnlConv computes an fp32 conv with by npukit's own Winograd kernel, where oneDNN's does not pay or
// does not build, or kNone. On hosts with AVX2 and FMA and without AVX-512, for stride-1 convs of channels in
// multiples of 8, with tiles enough and little of them past the map; not int8 ones. It adds a fused residual, where
// oneDNN's Winograd kernel takes none.
WinogradTiling Avx2WinogradTiling(const Conv2DShape& s);
// NPUKIT_WINOGRAD (read at each primitive's build): unset, each conv takes Winograd's transform where it pays; "0",
// every conv is the direct sum; "4x4" or "2x2", npukit's AVX2 kernel takes that tiling for every conv it can (to
// measure one against the other: bench/conv3x3).
enum class WinogradChoice { kWherePays, kNever, kF4x4, kF2x2 };
WinogradChoice WinogradSetting();
// Whether oneDNN has a Winograd kernel for the geometry's bands on this CPU (AVX-512 ones only, in 2.6).
bool WinogradBuilds(const Conv2DShape& s, int threads);

}  // namespace npu
