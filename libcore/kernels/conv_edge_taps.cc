#include "kernels/conv_edge_taps.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "kernels/dnnl_engine.h"

namespace npu {

// One tap's product: its gathered inputs (pixels, C) by its weights (C, M), reordered once, into its sums.
struct BandProduct {
  dnnl::matmul prim;
  ReorderedWeights weights;
  dnnl::memory src, dst;
  std::unordered_map<int, dnnl::memory> args;
};

namespace {

// The share of (tap, output) pairs reading the map up to which the taps go by bands, where oneDNN would take its
// im2col path (which multiplies the padding too, at 45-60 GMAC/s on 2 Zen 3 cores). One-conv models, 2 threads,
// im2col -> bands (ONNX Runtime, whose kernels skip the padding): 960 -> 256 dilation 12 on 14x14 (18% live) 8.9 ->
// 1.2 ms (1.7), dilation 6 (51%) 8.3 -> 2.9 (3.9); 512 -> 256 dilation 24 on 65x65 (57%) -> 40-45 (45-50),
// dilation 12 (77%) 100-110 -> 52-67 (56-57); 256 -> 256 dilation 4 on 28x28 (82%) 7.7-10 -> 5.9-6.5 (6.0-6.3).
// Near 100% the bands are the whole map less a row or two: eight gathers and products instead of one.
constexpr double kMaxLiveShare = 0.95;
// Gathered (or added) pixels per task.
constexpr size_t kPixelGrain = 256;

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

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

TapRange LiveOutputs(int64_t in, int64_t out, int64_t t, int64_t stride, int64_t dilation, int64_t pad) {
  const int64_t offset = t * dilation - pad;
  const int64_t first = std::max<int64_t>(0, FloorDiv(-offset + stride - 1, stride));
  const int64_t last = std::min(out - 1, FloorDiv(in - 1 - offset, stride));
  return last < first ? TapRange{0, 0} : TapRange{first, last - first + 1};
}

EdgeTaps::EdgeTaps(const Conv2DShape& s) : s_(s) {}
EdgeTaps::EdgeTaps(EdgeTaps&&) noexcept = default;
EdgeTaps::~EdgeTaps() = default;

std::unique_ptr<EdgeTaps> EdgeTaps::Plan(const Conv2DShape& s) {
  if (s.G != 1) return nullptr;
  const DimTaps rows = TapsAlong(s.H, s.OH, s.KH, s.SH, s.DH, s.PT), cols = TapsAlong(s.W, s.OW, s.KW, s.SW, s.DW, s.PL);
  if (rows.full.count == 0 || cols.full.count == 0) return nullptr;
  const double live = static_cast<double>(rows.live_pairs) * static_cast<double>(cols.live_pairs);
  if (live > kMaxLiveShare * static_cast<double>(s.KH * s.KW * s.OH * s.OW)) return nullptr;
  auto e = std::make_unique<EdgeTaps>(EdgeTaps(s));  // the constructor is private: only Plan makes one
  e->full_rows_ = rows.full;
  e->full_cols_ = cols.full;
  int64_t most = 0;  // pixels of the largest band
  for (int64_t ky = 0; ky < s.KH; ++ky)
    for (int64_t kx = 0; kx < s.KW; ++kx) {
      const TapRange r = rows.live[static_cast<size_t>(ky)], c = cols.live[static_cast<size_t>(kx)];
      if ((Inside(ky, rows.full) && Inside(kx, cols.full)) || r.count == 0 || c.count == 0) continue;
      e->taps_.push_back({ky, kx, r.first, r.count, c.first, c.count});
      most = std::max(most, s.N * r.count * c.count);
    }
  if (e->taps_.empty()) return nullptr;  // every live tap is live everywhere: a crop, no bands
  e->gathered_.resize(static_cast<size_t>(most * s.C));
  e->sums_.resize(static_cast<size_t>(most * s.M));
  return e;
}

bool EdgeTaps::BuildProducts() try {
  using dnnl::memory;
  constexpr auto f32 = memory::data_type::f32;
  for (const Tap& tap : taps_) {
    const int64_t pixels = s_.N * tap.rows * tap.cols;
    const memory::desc src({pixels, s_.C}, f32, memory::format_tag::ab), dst({pixels, s_.M}, f32, memory::format_tag::ab);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, memory::desc({s_.C, s_.M}, f32, memory::format_tag::any), dst), DnnlEngine());
    if (IsReferenceImpl(pd)) return false;
    BandProduct& p = products_.emplace_back();
    p.prim = dnnl::matmul(pd);
    p.weights = ReorderedWeights(pd.weights_desc(), memory::desc({s_.C, s_.M}, f32, memory::format_tag::ab));
    p.src = Unbound(src);
    p.dst = Unbound(dst);
    p.args = {{DNNL_ARG_SRC, p.src}, {DNNL_ARG_WEIGHTS, p.weights.memory()}, {DNNL_ARG_DST, p.dst}};
  }
  return true;
} catch (const dnnl::error&) {
  return false;  // a geometry oneDNN does not take
}

void EdgeTaps::MakeTapWeights(const Tensor& w) {
  const int64_t C = s_.C, M = s_.M;
  const float* from = w.data<float>();
  tap_weights_.clear();
  for (const Tap& tap : taps_) {
    Tensor t = Tensor::Empty(DType::kF32, {C, M});
    float* to = t.mutable_data<float>();
    for (int64_t m = 0; m < M; ++m)
      for (int64_t c = 0; c < C; ++c) to[c * M + m] = from[((m * C + c) * s_.KH + tap.ky) * s_.KW + tap.kx];
    tap_weights_.push_back(std::move(t));
  }
  weights_from_ = w;
}

// Output pixel i of a tap's band (image by image, row by row): its image, row and column.
struct BandPixel {
  int64_t n, oy, ox;
};
BandPixel PixelOf(const EdgeTaps::Tap& tap, int64_t i) {
  const int64_t per_image = tap.rows * tap.cols;
  return {i / per_image, tap.row0 + i % per_image / tap.cols, tap.col0 + i % tap.cols};
}

// The tap's input pixels for its band, in band order, into gathered_.
void EdgeTaps::Gather(const Tap& tap, const float* x, ThreadPool& pool) {
  const size_t bytes = static_cast<size_t>(s_.C) * sizeof(float);
  pool.ParallelFor(static_cast<size_t>(s_.N * tap.rows * tap.cols), kPixelGrain, [&](size_t first, size_t last) {
    for (auto i = static_cast<int64_t>(first); i < static_cast<int64_t>(last); ++i) {
      const BandPixel p = PixelOf(tap, i);
      const int64_t iy = p.oy * s_.SH + tap.ky * s_.DH - s_.PT, ix = p.ox * s_.SW + tap.kx * s_.DW - s_.PL;
      std::memcpy(&gathered_[static_cast<size_t>(i * s_.C)], x + ((p.n * s_.H + iy) * s_.W + ix) * s_.C, bytes);
    }
  });
}

// Adds the tap's sums to its band of y; its pixels are distinct, so the tasks write apart.
void EdgeTaps::AddBand(const Tap& tap, float* y, ThreadPool& pool) const {
  const int64_t M = s_.M;
  pool.ParallelFor(static_cast<size_t>(s_.N * tap.rows * tap.cols), kPixelGrain, [&](size_t first, size_t last) {
    for (auto i = static_cast<int64_t>(first); i < static_cast<int64_t>(last); ++i) {
      const BandPixel p = PixelOf(tap, i);
      float* out = y + ((p.n * s_.OH + p.oy) * s_.OW + p.ox) * M;
      const float* add = &sums_[static_cast<size_t>(i * M)];
      for (int64_t m = 0; m < M; ++m) out[m] += add[m];
    }
  });
}

// Tap by tap, in one order (an output in two bands, a corner, gets their sums in that order on any thread count),
// through one pair of buffers the size of the largest band.
void EdgeTaps::Run(const float* x, const Tensor& w, float* y, ThreadPool& pool) {
  if (!(weights_from_.defined() && weights_from_.raw() == w.raw())) MakeTapWeights(w);
  dnnl::stream& st = DnnlStream();
  for (size_t t = 0; t < taps_.size(); ++t) {
    Gather(taps_[t], x, pool);
    BandProduct& p = products_[t];
    p.weights.Update(tap_weights_[t], st);
    p.src.set_data_handle(gathered_.data());
    p.dst.set_data_handle(sums_.data());
    p.prim.execute(st, p.args);
    st.wait();
    AddBand(taps_[t], y, pool);
  }
}

}  // namespace npu
