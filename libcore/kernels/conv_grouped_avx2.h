// Grouped fp32 convolutions of 4 channels per group in and out (ResNeXt's 32x4d first stage), by npukit's own
// direct kernel on hosts with AVX2 and FMA and without AVX-512. Included by conv_dnnl.cc (and its tests).
//
// Why: oneDNN 2.6's AVX2 direct kernels need 8 channels per group; with 4 it has only its im2col path (one small
// product per group), or, as conv_dnnl.cc's MergedGroups gives it, groups merged in pairs with zeros between them,
// twice the multiply-adds. Four of resnext50_32x4d's 4-channel 3x3 convs on 56x56 (docs/performance.md): this
// kernel 0.61-0.69 of the merged conv's time.
// How: one register holds the 4 output channels of two neighbouring groups, one group per 128-bit half; each input
// pixel's 8 channels (the same two groups') are loaded once per tap, and _mm256_permute_ps gives input channel j of
// each half's group across that half, multiplied by the tap's weights for j. Tiles of 8 output pixels of a row;
// a task takes rows of outputs and copies, pair by pair, the input rows they read into a zero-padded buffer. Each
// output is one sum in one order, on any thread count; the direct sum keeps a NaN or an Inf in its own group.
#pragma once
#include <memory>

#include "kernels/conv_dnnl.h"

namespace npu {

struct GroupedPlan;  // the geometry and packed weights (conv_grouped_avx2.cc)

class Avx2GroupedConv {
 public:
  // Null where the kernel is not built for this CPU (AVX2 and FMA without AVX-512) or the conv is not one it takes:
  // 4 channels per group in and out, an even number of groups.
  static std::unique_ptr<Avx2GroupedConv> Build(const Conv2DShape& s);
  // y = conv(x, w) + bias + residual (bias and residual may be null), x, y and the residual channels-last
  // (N, H, W, C), w the op's (M, 4, KH, KW); then `finish` runs on y in chunks (flat indices in y's memory order).
  void Run(const float* x, const Tensor& w, const float* bias, const float* residual, float* y, const ChunkFinish& finish, ThreadPool& pool);
  Avx2GroupedConv();
  ~Avx2GroupedConv();

 private:
  std::unique_ptr<GroupedPlan> plan_;
};

}  // namespace npu
