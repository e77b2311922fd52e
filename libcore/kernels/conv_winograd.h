// 3x3 stride-1 fp32 convolutions by Winograd's minimal filtering (oneDNN 2.6's F(4x4, 3x3) kernel, or F(2x2, 3x3)
// where it picks that). Included only by conv_dnnl.cc.
//
// Why: per 4x4 outputs of a 3x3 window the transform does 36 multiplies where the direct kernel does 144. With the
// transforms and the copies to and from oneDNN's 16-channel blocks it takes 0.31-0.68 of the direct (brgemm)
// kernel's time on 52x52 and larger maps and 0.57-0.90 on 28x28 (conv_winograd.cc has the measurements and the
// thresholds). Two forms:
// - Bands: each thread computes its own band of output rows with a one-thread primitive. oneDNN's own threading of
//   the kernel lost to the direct kernel on two threads (1.07-3.7x its time on every 7x7 and 14x14 shape with under
//   256 channels, standalone), and a band must have pixels enough to earn back the transformed weights it reads.
// - The whole map on oneDNN's threads, where bands would be too small but the channels are many (256+): 0.61-0.89
//   of the direct kernel's time on 7x7-14x14 maps.
//
// What it costs: the weights are held transformed, 36/9 = 4 times their size (each band's layout is one copy when
// the bands' layouts agree, as they do for equal heights); and the result carries the transform's rounding: within
// 1e-6 of each output's sum of |x| |w| where the direct kernel is within 2.5e-7
// (Kernels.WinogradConvIsTheDirectSumWithinItsRounding; its bound is 5e-6). Outputs in fp16 (4.9e-4 per ulp) are
// rounded from it as from the direct sum. A band whose result holds an Inf or a NaN is computed again by the direct
// kernel (see DirectBand).
#pragma once
#include <memory>
#include <vector>

#include "kernels/conv_dnnl.h"
#include "kernels/dnnl_engine.h"

namespace npu {

class WinogradConv {
 public:
  // Null when oneDNN has no Winograd kernel for the geometry (channels not a multiple of 16, padding past 1...).
  static std::unique_ptr<WinogradConv> Build(const Conv2DShape& s, int threads, bool has_bias);
  // y = conv(x, w) + bias, x and y channels-last (N, H, W, C); each band runs `finish` on its rows of y (flat
  // indices in y's memory order) as soon as it has written them.
  void Run(const float* x, const Tensor& w, const float* bias, float* y, const ChunkFinish& finish, ThreadPool& pool);
  WinogradConv();
  ~WinogradConv();

 private:
  struct Band;
  struct DirectBand;
  void RunWholeMap(const float* x, const Tensor& w, const float* bias, float* y, const ChunkFinish& finish, ThreadPool& pool);
  // Points the band's blocked maps and scratchpad at the calling thread's scratch, and its bias at `bias`.
  std::byte* BindScratch(Band& b, const float* bias);
  // Recomputes band `b` of one image with the direct kernel (see DirectBand); x and y at the band's first rows.
  void RunDirect(Band& b, const float* x, const Tensor& w, const float* bias, float* y, dnnl::stream& st);
  std::vector<Band> bands_;
  std::vector<ReorderedWeights> weights_;  // the bands' weights, one per distinct transformed layout
  Conv2DShape shape_{};
  // The elements of one image of x and of y (channels-last).
  int64_t XImage() const { return shape_.H * shape_.W * shape_.C; }
  int64_t YImage() const { return shape_.OH * shape_.OW * shape_.M; }
  bool whole_map_ = false;  // one band over the map on oneDNN's threads, not a band per thread
};

}  // namespace npu
