#include "kernels/conv_edge_taps.h"

#include <Eigen/Core>
#include <algorithm>
#include <cstring>

namespace npu {
namespace {

// The share of (tap, output) pairs reading the map up to which the taps go by bands: the bands' products are
// smaller and less regular than one conv's (deeplabv3's dilation-12 conv: 18%, 8.3 ms on oneDNN's im2col path,
// 0.7 ms so). A 3x3 conv with padding 1 on a map of 4x4 or more reads it at 56% or more of its pairs, and stays
// one conv.
constexpr double kMaxLiveShare = 0.75;
// Output channels per task of the products: the tasks split the channels, each adding every tap to them in the
// same order, so no two write the same element and the sums do not depend on the thread count.
constexpr int64_t kChannelsPerTask = 128;
// Gathered input pixels per task.
constexpr size_t kGatherGrain = 256;

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The outputs [first, first + count) that tap t of a dim reads the map for: 0 <= o * stride + t * dilation - pad < in.
TapRange LiveOutputs(int64_t in, int64_t out, int64_t t, int64_t stride, int64_t dilation, int64_t pad) {
  const int64_t offset = t * dilation - pad;
  const int64_t first = std::max<int64_t>(0, FloorDiv(-offset + stride - 1, stride));
  const int64_t last = std::min(out - 1, FloorDiv(in - 1 - offset, stride));
  return last < first ? TapRange{0, 0} : TapRange{first, last - first + 1};
}

// Per tap of a dim, its live outputs; and the taps live for every output (a range: the live outputs shift with t).
struct DimTaps {
  std::vector<TapRange> live;
  TapRange full;
  int64_t live_pairs = 0;  // sum over the taps of their live outputs
};

DimTaps TapsAlong(int64_t in, int64_t out, int64_t k, int64_t stride, int64_t dilation, int64_t pad) {
  DimTaps d;
  for (int64_t t = 0; t < k; ++t) {
    const TapRange r = LiveOutputs(in, out, t, stride, dilation, pad);
    d.live.push_back(r);
    d.live_pairs += r.count;
    if (r.count == out) {
      if (d.full.count == 0) d.full.first = t;
      d.full.count = t - d.full.first + 1;
    }
  }
  return d;
}

bool Inside(int64_t t, TapRange r) { return t >= r.first && t < r.first + r.count; }

}  // namespace

std::unique_ptr<EdgeTaps> EdgeTaps::Plan(const Conv2DShape& s) {
  if (s.G != 1) return nullptr;
  const DimTaps rows = TapsAlong(s.H, s.OH, s.KH, s.SH, s.DH, s.PT), cols = TapsAlong(s.W, s.OW, s.KW, s.SW, s.DW, s.PL);
  if (rows.full.count == 0 || cols.full.count == 0) return nullptr;
  const double live = static_cast<double>(rows.live_pairs) * static_cast<double>(cols.live_pairs);
  if (live > kMaxLiveShare * static_cast<double>(s.KH * s.KW * s.OH * s.OW)) return nullptr;
  auto e = std::make_unique<EdgeTaps>(EdgeTaps(s));  // the constructor is private: only Plan makes one
  e->full_rows_ = rows.full;
  e->full_cols_ = cols.full;
  int64_t gathered = 0;
  for (int64_t ky = 0; ky < s.KH; ++ky)
    for (int64_t kx = 0; kx < s.KW; ++kx) {
      const TapRange r = rows.live[static_cast<size_t>(ky)], c = cols.live[static_cast<size_t>(kx)];
      if ((Inside(ky, rows.full) && Inside(kx, cols.full)) || r.count == 0 || c.count == 0) continue;
      e->taps_.push_back({ky, kx, r.first, r.count, c.first, c.count, gathered});
      gathered += s.N * r.count * c.count;
    }
  if (e->taps_.empty()) return nullptr;  // every live tap is live everywhere: a crop, no bands
  e->gathered_.resize(static_cast<size_t>(gathered * s.C));
  return e;
}

void EdgeTaps::MakeTapWeights(const Tensor& w) {
  const int64_t C = s_.C, M = s_.M;
  tap_weights_ = Tensor::Empty(DType::kF32, {static_cast<int64_t>(taps_.size()), C, M});
  const float* from = w.data<float>();
  float* to = tap_weights_.mutable_data<float>();
  for (size_t t = 0; t < taps_.size(); ++t)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c)
        to[(static_cast<int64_t>(t) * C + c) * M + m] = from[((m * C + c) * s_.KH + taps_[t].ky) * s_.KW + taps_[t].kx];
  weights_from_ = w;
}

// Each tap's input pixels, image by image, row by row of its outputs, into gathered_.
void EdgeTaps::Gather(const float* x, ThreadPool& pool) {
  const auto rows = static_cast<size_t>(gathered_.size() / static_cast<size_t>(s_.C));
  const size_t bytes = static_cast<size_t>(s_.C) * sizeof(float);
  pool.ParallelFor(rows, kGatherGrain, [&](size_t first, size_t last) {
    size_t t = 0;
    for (size_t p = first; p < last; ++p) {
      while (t + 1 < taps_.size() && static_cast<int64_t>(p) >= taps_[t + 1].gathered_at) ++t;
      const Tap& tap = taps_[t];
      const int64_t i = static_cast<int64_t>(p) - tap.gathered_at, per_image = tap.rows * tap.cols;
      const int64_t n = i / per_image, oy = tap.row0 + i % per_image / tap.cols, ox = tap.col0 + i % tap.cols;
      const int64_t iy = oy * s_.SH + tap.ky * s_.DH - s_.PT, ix = ox * s_.SW + tap.kx * s_.DW - s_.PL;
      std::memcpy(&gathered_[p * static_cast<size_t>(s_.C)], x + ((n * s_.H + iy) * s_.W + ix) * s_.C, bytes);
    }
  });
}

void EdgeTaps::Run(const float* x, const Tensor& w, float* y, ThreadPool& pool) {
  using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using Stride = Eigen::OuterStride<>;
  if (!(weights_from_.defined() && weights_from_.raw() == w.raw())) MakeTapWeights(w);
  Gather(x, pool);
  const int64_t C = s_.C, M = s_.M, tasks = (M + kChannelsPerTask - 1) / kChannelsPerTask;
  pool.ParallelFor(static_cast<size_t>(tasks), 1, [&](size_t first, size_t last) {
    RowMat sums;
    for (auto task = static_cast<int64_t>(first); task < static_cast<int64_t>(last); ++task) {
      const int64_t m0 = task * kChannelsPerTask, mb = std::min(kChannelsPerTask, M - m0);
      for (size_t t = 0; t < taps_.size(); ++t) {
        const Tap& tap = taps_[t];
        const int64_t pixels = s_.N * tap.rows * tap.cols;
        Eigen::Map<const RowMat> in(&gathered_[static_cast<size_t>(tap.gathered_at * C)], pixels, C);
        Eigen::Map<const RowMat, 0, Stride> weights(tap_weights_.data<float>() + static_cast<int64_t>(t) * C * M + m0, C, mb, Stride(M));
        sums.noalias() = in * weights;
        for (int64_t i = 0; i < pixels; ++i) {
          const int64_t per_image = tap.rows * tap.cols, n = i / per_image;
          const int64_t oy = tap.row0 + i % per_image / tap.cols, ox = tap.col0 + i % tap.cols;
          float* out = y + ((n * s_.OH + oy) * s_.OW + ox) * M + m0;
          const float* add = sums.data() + i * mb;
          for (int64_t m = 0; m < mb; ++m) out[m] += add[m];
        }
      }
    }
  });
}

}  // namespace npu
