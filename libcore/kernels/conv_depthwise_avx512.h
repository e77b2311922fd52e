// Depthwise fp32 convolutions (one input and one output channel per group; 3x3 at stride 1, 5x5 and 7x7 at stride 1
// or 2, no dilation) by npukit's own direct kernel on AVX-512 hosts. Included by conv_dnnl.cc (and its tests).
//
// Why: with force_fp16 every result oneDNN writes is rounded to fp16 values in a pass of its own afterwards, whose
// floor is the store throughput (docs/performance.md); this kernel applies a fused Relu and the rounding in its
// registers before its one store. Alone it takes 0.66-1.01 of oneDNN 2.6's brdgmm_dw time on MnasNet's and
// EfficientNet's depthwise shapes (2 threads, AVX-512), with the same sums in the same order: in six nets its
// results had oneDNN's bits.
// How: a tile is 16 channels of 8 neighbouring outputs of a row (7 on rows of 7s); per kernel row it
// loads the row's 16-lane weights once and each input pixel the tile reads once, and multiplies that pixel into
// every output whose window holds it (3 for a 3-wide kernel at stride 1: a third of the loads of one per tap).
// Tiles walk a row's outputs with the channel blocks innermost, so the input is read in memory order. Each output
// is one sum in one order (bias, then the taps row by row), on any thread count; a NaN or an Inf stays in its own
// channel.
#pragma once
#include <memory>

#include "kernels/conv_dnnl.h"
#include "kernels/registry.h"

namespace npu {

class ChunkRounding;
struct DepthwisePlan;  // the geometry and packed weights (conv_depthwise_avx512.cc)

// What runs on the kernel's results before they are stored, and after.
struct DepthwiseFinish {
  bool relu = false;              // our Relu (x > 0 ? x : +0; NaN gives +0), in registers
  ChunkRounding* half = nullptr;  // the fp16 rounding, in registers; an output it cannot round there (at or past
                                  // fp16's range, or NaN) is stored as it is and its row's outputs go to `half`
  ChunkFinish rest;               // the rest, run on each task's outputs after they are stored
};

class Avx512DepthwiseConv {
 public:
  // Null where the kernel is not built for this CPU (AVX-512) or the conv is not one it takes.
  static std::unique_ptr<Avx512DepthwiseConv> Build(const Conv2DShape& s);
  // y = finish(conv(x, w) + bias + residual) (bias and residual may be null), x, y and the residual channels-last
  // (N, H, W, C), w the op's (C, 1, KH, KW).
  void Run(const float* x, const Tensor& w, const float* bias, const float* residual, float* y, const DepthwiseFinish& finish, ThreadPool& pool);
  Avx512DepthwiseConv();
  ~Avx512DepthwiseConv();

 private:
  std::unique_ptr<DepthwisePlan> plan_;
};

}  // namespace npu
