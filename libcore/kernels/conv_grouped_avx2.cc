#include "kernels/conv_grouped_avx2.h"

#include <algorithm>
#include <vector>

// Built for AVX2 hosts without AVX-512, where it was measured; with AVX-512, oneDNN's direct kernels take groups
// of 4 channels merged in fours (16 lanes, conv_dnnl.cc MergedGroups).
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>
#define NPUKIT_GROUPED_AVX2 1
#endif

namespace npu {

#if NPUKIT_GROUPED_AVX2
namespace {

constexpr int kLanes = 8;  // floats per AVX2 register: two groups' 4 channels, one group per 128-bit half
constexpr int64_t kChannels = 4;  // per group, in and out
// Output pixels per register tile: 8 accumulators cover the FMA's latency (4 cycles at 2 per cycle on Zen 3 and
// Skylake), and with the tap's 4 weight registers, the input and its permutation they fill 14 of the 16.
constexpr int kPixels = 8;
// Multiply-adds per task at least: below it the fork costs more than the split saves (a task of ~5 us at the
// kernel's rate).
constexpr int64_t kTaskMultiplyAdds = 1 << 18;

// The loops over a tile's pixels unrolled, so that its accumulators live in registers (GCC at -O2 leaves them on
// the stack).
#define NPUKIT_UNROLL _Pragma("GCC unroll 16")

}  // namespace

struct GroupedPlan {
  Conv2DShape s{};
  int64_t pairs = 0;  // pairs of groups: G / 2, each one register of output channels
  int64_t WP = 0;     // pixels per row of a task's copy of the input: the map's padded width, and past it as far as
                      // the last tile of a row reads
  std::vector<float> packed;  // the weights as [pair][kh][kw][input channel j][lane]
  Tensor packed_from;         // the weights tensor `packed` was made from (held: its storage cannot be reused meanwhile)
};

namespace {

// Lane l of pair b's register is output channel 8 b + l; its weight for input channel j of its own group is
// w[8 b + l][j].
void PackWeights(GroupedPlan& p, const Tensor& w) {
  const Conv2DShape& s = p.s;
  const int64_t taps = s.KH * s.KW;
  p.packed.resize(static_cast<size_t>(s.M * kChannels * taps));
  const float* from = w.data<float>();
  for (int64_t m = 0; m < s.M; ++m)
    for (int64_t j = 0; j < kChannels; ++j)
      for (int64_t t = 0; t < taps; ++t)
        p.packed[static_cast<size_t>(((m / kLanes * taps + t) * kChannels + j) * kLanes + m % kLanes)] = from[(m * kChannels + j) * taps + t];
  p.packed_from = w;
}

// Input rows [first, first + rows) of one image's channels-last x (rows outside the map are zeros), the 8 channels
// of pair `pair`, into `to` as zero-padded rows of WP pixels. Why a copy: straight from x a tile reads 32 bytes of
// every pixel's C channels, whose cache lines fall in a few of L1's sets when C is a power of two; per task and
// pair, the copy is still in L1 when the tiles read it.
void CopyPairRows(const GroupedPlan& p, const float* image, int64_t pair, int64_t first, int64_t rows, float* to) {
  const Conv2DShape& s = p.s;
  const int64_t cols = std::min(s.W, p.WP - s.PL), row_floats = p.WP * kLanes;
  for (int64_t r = 0; r < rows; ++r, to += row_floats) {
    const int64_t h = first + r;
    if (h < 0 || h >= s.H) {
      std::fill_n(to, row_floats, 0.0f);
      continue;
    }
    std::fill_n(to, s.PL * kLanes, 0.0f);
    std::fill_n(to + (s.PL + cols) * kLanes, (p.WP - s.PL - cols) * kLanes, 0.0f);
    const float* from = image + h * s.W * s.C + pair * kLanes;
    for (int64_t w = 0; w < cols; ++w) _mm256_storeu_ps(to + (s.PL + w) * kLanes, _mm256_loadu_ps(from + w * s.C));
  }
}

// One tile: outputs (ow0 .. ow0 + count) of one row for pair `pair`, reading the pair's copied rows from `rows` (its
// first the padded input's row that the output row's first tap reads), into `out` (the tile's first pixel and
// channel in y), plus bias and residual (at the same place as `out`) where given. Pixels past `count` read the
// copy's right border and are not written.
void ConvTile(const GroupedPlan& p, const float* rows, int64_t ow0, int64_t pair, const float* bias, const float* residual, float* out, int count) {
  const Conv2DShape& s = p.s;
  const __m256 b = bias ? _mm256_loadu_ps(bias + pair * kLanes) : _mm256_setzero_ps();
  __m256 acc[kPixels];
  NPUKIT_UNROLL
  for (int x = 0; x < kPixels; ++x) acc[x] = b;
  const float* weights = p.packed.data() + pair * s.KH * s.KW * kChannels * kLanes;
  const int64_t step = s.SW * kLanes;  // from one output pixel's input to the next's
  for (int64_t kh = 0; kh < s.KH; ++kh) {
    const float* row = rows + (kh * s.DH * p.WP + ow0 * s.SW) * kLanes;
    for (int64_t kw = 0; kw < s.KW; ++kw) {
      const float* at = row + kw * s.DW * kLanes;
      const float* wt = weights + (kh * s.KW + kw) * kChannels * kLanes;
      const __m256 w0 = _mm256_loadu_ps(wt), w1 = _mm256_loadu_ps(wt + kLanes), w2 = _mm256_loadu_ps(wt + 2 * kLanes),
                   w3 = _mm256_loadu_ps(wt + 3 * kLanes);
      NPUKIT_UNROLL
      for (int x = 0; x < kPixels; ++x) {
        // Input channel j of each half's group, in every lane of that half.
        const __m256 v = _mm256_loadu_ps(at + x * step);
        acc[x] = _mm256_fmadd_ps(_mm256_permute_ps(v, 0x00), w0, acc[x]);
        acc[x] = _mm256_fmadd_ps(_mm256_permute_ps(v, 0x55), w1, acc[x]);
        acc[x] = _mm256_fmadd_ps(_mm256_permute_ps(v, 0xAA), w2, acc[x]);
        acc[x] = _mm256_fmadd_ps(_mm256_permute_ps(v, 0xFF), w3, acc[x]);
      }
    }
  }
  NPUKIT_UNROLL
  for (int x = 0; x < kPixels; ++x) {
    if (x >= count) break;
    const int64_t at = x * s.M;
    _mm256_storeu_ps(out + at, residual ? _mm256_add_ps(acc[x], _mm256_loadu_ps(residual + at)) : acc[x]);
  }
}

}  // namespace

Avx2GroupedConv::Avx2GroupedConv() = default;
Avx2GroupedConv::~Avx2GroupedConv() = default;

std::unique_ptr<Avx2GroupedConv> Avx2GroupedConv::Build(const Conv2DShape& s) {
  if (s.G < 2 || s.G % 2 != 0 || s.C != kChannels * s.G || s.M != kChannels * s.G) return nullptr;
  auto plan = std::make_unique<GroupedPlan>();
  plan->s = s;
  plan->pairs = s.G / 2;
  const int64_t row_tiles = (s.OW + kPixels - 1) / kPixels;
  plan->WP = std::max(s.PL + s.W, (row_tiles * kPixels - 1) * s.SW + (s.KW - 1) * s.DW + 1);
  auto conv = std::make_unique<Avx2GroupedConv>();
  conv->plan_ = std::move(plan);
  return conv;
}

void Avx2GroupedConv::Run(const float* x, const Tensor& w, const float* bias, const float* residual, float* y, const ChunkFinish& finish,
                          ThreadPool& pool) {
  GroupedPlan& p = *plan_;
  const Conv2DShape& s = p.s;
  if (!(p.packed_from.defined() && p.packed_from.raw() == w.raw())) PackWeights(p, w);
  // Tasks take rows of outputs (of one image or more), so that a task's outputs are a range of y.
  const int64_t row_macs = s.OW * s.M * kChannels * s.KH * s.KW;
  pool.ParallelFor(static_cast<size_t>(s.N * s.OH), static_cast<size_t>(kTaskMultiplyAdds / row_macs + 1), [&](size_t r0, size_t r1) {
    thread_local std::vector<float> rows;
    for (auto r = static_cast<int64_t>(r0); r < static_cast<int64_t>(r1);) {
      const int64_t n = r / s.OH, oh0 = r % s.OH, oh1 = std::min(s.OH, oh0 + static_cast<int64_t>(r1) - r);
      const int64_t first = oh0 * s.SH - s.PT, count = (oh1 - 1 - oh0) * s.SH + (s.KH - 1) * s.DH + 1;
      rows.resize(static_cast<size_t>(count * p.WP * kLanes));
      for (int64_t pair = 0; pair < p.pairs; ++pair) {
        CopyPairRows(p, x + n * s.H * s.W * s.C, pair, first, count, rows.data());
        for (int64_t oh = oh0; oh < oh1; ++oh)
          for (int64_t ow0 = 0; ow0 < s.OW; ow0 += kPixels) {
            const int64_t at = ((n * s.OH + oh) * s.OW + ow0) * s.M + pair * kLanes;
            ConvTile(p, rows.data() + (oh - oh0) * s.SH * p.WP * kLanes, ow0, pair, bias, residual ? residual + at : nullptr, y + at,
                     static_cast<int>(std::min<int64_t>(kPixels, s.OW - ow0)));
          }
      }
      r += oh1 - oh0;
    }
    const size_t row_elements = static_cast<size_t>(s.OW * s.M);
    if (finish) finish({y + r0 * row_elements, (r1 - r0) * row_elements}, r0 * row_elements);
  });
}

#else  // no AVX2 and FMA, or AVX-512: oneDNN's kernels serve

struct GroupedPlan {};
Avx2GroupedConv::Avx2GroupedConv() = default;
Avx2GroupedConv::~Avx2GroupedConv() = default;
std::unique_ptr<Avx2GroupedConv> Avx2GroupedConv::Build(const Conv2DShape&) { return nullptr; }
void Avx2GroupedConv::Run(const float*, const Tensor&, const float*, const float*, float*, const ChunkFinish&, ThreadPool&) {}

#endif

}  // namespace npu
