// Convolutions whose kernel taps reach past the map for some of the outputs, where oneDNN would multiply the padding:
// dilated kernels on maps not much larger than their dilation (deeplabv3's ASPP, 3x3 with dilation 12 on a 14x14
// map). Included by conv_dnnl.cc and the kernel tests.
//
// Why: such a conv's taps are each live (read the map) for a band of outputs only: with dilation 12 on 14x14 the
// centre tap for all 196 outputs, the others for 2 rows or columns of them, 18% of the taps' multiply-adds. oneDNN
// 2.6 runs large dilations on AVX2 on its im2col path, which multiplies the padding too: 8.3 ms of
// deeplabv3_mobilenet_v3_large's 17 ms, where ONNX Runtime, whose kernels skip the padding, took 1.3. A dilation of
// 4 on a 28x28 map (deeplabv3_resnet50's last stage) leaves 82% of the pairs live, and im2col still costs more.
// How: the taps live for every output (a rectangle of the kernel) stay a conv, cropped to them (the caller's
// primitive, bias included); each other tap adds its products over its band of outputs, a (band pixels x C) by
// (C x M) product per tap on oneDNN's matmul, added to the band tap by tap. The sum then runs tap by tap where the
// im2col product ran over all taps at once: the same products, added in another order
// (Kernels.ConvTapsLiveOnBandsAreTheExactSum).
// What it costs: each tap's (C, M) weights reordered once, and a buffer of the largest band's inputs and sums
// (N x band pixels x (C + M) floats), where oneDNN's im2col held all taps' inputs (N x OH x OW x KH KW C).
#pragma once
#include <memory>
#include <vector>

#include "kernels/conv_dnnl.h"

namespace npu {

struct BandProduct;  // one tap's product primitive and its weights (conv_edge_taps.cc)

// A range [first, first + count) of kernel taps, or of outputs, along one dim.
struct TapRange {
  int64_t first = 0, count = 0;
};

// The outputs that tap t of a dim reads the map for: 0 <= o * stride + t * dilation - pad < in.
TapRange LiveOutputs(int64_t in, int64_t out, int64_t t, int64_t stride, int64_t dilation, int64_t pad);

class EdgeTaps {
 public:
  // Null where the conv is not one of these: one group, some taps live for every output, and the live (tap,
  // output) pairs at most kMaxLiveShare of all of them.
  static std::unique_ptr<EdgeTaps> Plan(const Conv2DShape& s);
  // The bands' fp32 product primitives; false where oneDNN offers only its reference kernel for one.
  bool BuildProducts();
  // The kernel's taps live for every output: the caller's conv, cropped to them.
  TapRange full_rows() const { return full_rows_; }
  TapRange full_cols() const { return full_cols_; }
  // Adds to y (channels-last, N OH OW M, holding the full taps' conv) each other tap's products over the outputs
  // it reads the map for; x channels-last (N H W C), w the op's (M, C, KH, KW) weights. Throws oneDNN's errors.
  void Run(const float* x, const Tensor& w, float* y, ThreadPool& pool);
  EdgeTaps(EdgeTaps&&) noexcept;
  ~EdgeTaps();

  // A tap that reads the map for a band of outputs only.
  struct Tap {
    int64_t ky, kx;                  // in the op's kernel
    int64_t row0, rows, col0, cols;  // its outputs: rows [row0, row0 + rows) x columns [col0, col0 + cols)
  };

 private:
  explicit EdgeTaps(const Conv2DShape& s);
  void MakeTapWeights(const Tensor& w);
  void Gather(const Tap& tap, const float* x, ThreadPool& pool);
  void AddBand(const Tap& tap, float* y, ThreadPool& pool) const;

  Conv2DShape s_;
  TapRange full_rows_, full_cols_;
  std::vector<Tap> taps_;
  std::vector<BandProduct> products_;  // one per tap, built on the first run
  std::vector<float> gathered_;        // one tap's input pixels (N x band pixels, C)
  std::vector<float> sums_;            // its products (N x band pixels, M)
  std::vector<Tensor> tap_weights_;    // tap t's weights as a (C, M) matrix
  Tensor weights_from_;                // the tensor tap_weights_ came from (held: its storage cannot be reused meanwhile)
};

}  // namespace npu
