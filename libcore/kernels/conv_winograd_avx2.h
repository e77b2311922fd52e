// Stride-1 fp32 convolutions by Winograd's minimal filtering on hosts where oneDNN has no Winograd kernel (oneDNN 2.6
// has one for AVX-512 only; conv_winograd.h): 3x3 kernels by F(4x4, 3x3), or F(2x2, 3x3) on small maps, 1x7 and
// 7x1 kernels by F(4, 7) along their one dimension, 1x3 and 3x1 ones by F(4, 3) so. Included only by conv_dnnl.cc.
//
// Why: on AVX2 the direct kernels already run 3x3 layers near the FMA peak, so the only way to take less time is
// fewer multiplies: per 4x4 outputs of a 3x3 window the transform does 36 where the direct kernel does 144.
// How: tiles of 6x6 inputs (stride 4) are transformed per 8-channel vector (V = Bt d B), multiplied with the
// transformed weights (U = G g Gt, made once per weights tensor) as 36 products of (tiles x C) by (C x M), and
// transformed back (Y = At M A) with the bias and a fused residual added. Each task works on a block of tiles small
// enough for the transformed tiles and products to stay in the core's L2 (conv_winograd_avx2.cc has the
// measurements). F(2x2, 3x3) goes the same way with 4x4 tiles and 16 products, F(4, 7) with 1x10 (10x1) tiles and
// 10 products per 4 outputs where the direct sum does 28.
//
// What it costs: the weights held transformed, 4 (F(2x2): 16/9) times their size; and the transform's rounding, within the
// bound Kernels.WinogradConvIsTheDirectSumWithinItsRounding holds oneDNN's AVX-512 kernel to. An output whose
// value is not finite (an Inf or a NaN input spreads over a whole tile; the transform's intermediate sums can
// overflow where the direct sum does not) is left to the caller's direct kernel: see Run.
#pragma once
#include <memory>
#include <utility>
#include <vector>

#include "kernels/conv_dnnl.h"

namespace npu {

struct Avx2WinogradPlan;  // the geometry, tiling, work split and transformed weights (conv_winograd_avx2.cc)

class Avx2WinogradConv {
 public:
  // Null where the kernel is not built for this CPU (no AVX2 and FMA) or the geometry is not one it takes
  // (3x3, stride 1, no dilation, one group, channels in and out multiples of 8).
  static std::unique_ptr<Avx2WinogradConv> Build(const Conv2DShape& s, int threads);
  // y = conv(x, w) + bias + residual (bias and residual may be null), x, y and the residual channels-last
  // (N, H, W, C); then `finish` runs on y in chunks (flat indices in y's memory order). Returns the element ranges
  // [begin, end) of y that hold a non-finite value: those were not finished, and the caller recomputes and
  // finishes them.
  std::vector<std::pair<size_t, size_t>> Run(const float* x, const Tensor& w, const float* bias, const float* residual, float* y,
                                             const ChunkFinish& finish, ThreadPool& pool);
  Avx2WinogradConv();
  ~Avx2WinogradConv();

 private:
  std::unique_ptr<Avx2WinogradPlan> plan_;
};

}  // namespace npu
