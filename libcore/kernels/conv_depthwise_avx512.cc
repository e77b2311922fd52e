// GCC 12 flags the AVX-512 intrinsics' _mm512_undefined operands as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "kernels/conv_depthwise_avx512.h"

#include <algorithm>
#include <vector>

#include "kernels/numerics.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#define NPUKIT_DEPTHWISE_AVX512 1
#endif

namespace npu {

#if NPUKIT_DEPTHWISE_AVX512
namespace {

constexpr int64_t kLanes = 16;  // channels per tile: fp32 lanes of a register
// Outputs per tile: 8 accumulators, the kernel row's weights (up to 7) and the input pixel fit in 32 registers.
constexpr int kPixels = 8;
// A map whose width is a multiple of 7 and not of 8 (7, 14, 28: MobileNet's last stages) takes tiles of 7, so that no
// tile computes outputs past the row's end.
constexpr int kPixelsOfSevens = 7;
// Parts of rows per thread at least: on a map of few rows each row's channels are split into parts, so that the
// threads' even shares differ by a small part (7 rows: 3 and 4 without).
constexpr int64_t kPartsPerThread = 4;

#define NPUKIT_UNROLL _Pragma("GCC unroll 32")

// One run's maps and what runs on the results in registers.
struct RowArgs {
  const float* x;
  const float* bias;      // may be null
  const float* residual;  // may be null; laid out as y
  float* y;
  bool relu;
  bool half;
  float limit;  // fp16's: the smallest magnitude that rounds to infinity
};

}  // namespace

// Computes channels [c0, c1) of output row `oh` of image `n`; true when some output could not be rounded in
// registers (it was stored unrounded: the caller rounds the row's outputs).
using RowFn = bool (*)(const DepthwisePlan&, const RowArgs&, int64_t n, int64_t oh, int64_t c0, int64_t c1);

struct DepthwisePlan {
  Conv2DShape s{};
  RowFn row = nullptr;
  std::vector<float> packed;  // the weights as [kh][kw][channel]: a tap's 16 channels in one load
  Tensor packed_from;         // the weights tensor `packed` was made from (held: its storage cannot be reused meanwhile)
};

namespace {

void PackWeights(DepthwisePlan& p, const Tensor& w) {
  const Conv2DShape& s = p.s;
  const int64_t taps = s.KH * s.KW;
  p.packed.resize(static_cast<size_t>(s.C * taps));
  const float* from = w.data<float>();
  for (int64_t c = 0; c < s.C; ++c)
    for (int64_t t = 0; t < taps; ++t) p.packed[static_cast<size_t>(t * s.C + c)] = from[c * taps + t];
  p.packed_from = w;
}

// The bias, residual, Relu and rounding on one output in registers, then its store; `kept` collects the lanes left
// unrounded.
inline void Store(__m512 v, const RowArgs& a, int64_t at, __mmask16 lanes, __mmask16& kept) {
  if (a.residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, a.residual + at));
  // maxps returns its second operand for a NaN and for two zeros: our Relu's +0.
  if (a.relu) v = _mm512_max_ps(v, _mm512_setzero_ps());
  if (a.half) {
    const __m512 r = _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    // Lanes not below the limit, NaN included (an unordered compare is true), keep their value, as RoundToHalf does.
    const __mmask16 past = _mm512_mask_cmp_ps_mask(lanes, _mm512_abs_ps(v), _mm512_set1_ps(a.limit), _CMP_NLT_UQ);
    v = _mm512_mask_blend_ps(past, r, v);
    kept |= past;
  }
  _mm512_mask_storeu_ps(a.y + at, lanes, v);
}

// One tile: channels [c, c + 16) (those in `lanes`) of outputs ow0 .. ow0 + count of row `oh`. kEdge: some input
// pixel the tile reads lies outside the map (it is skipped: the padding's zeros add nothing).
template <int K, int S, int T, bool kEdge>
void Tile(const DepthwisePlan& p, const RowArgs& a, const float* image, int64_t oh, int64_t ow0, int count, int64_t c, __mmask16 lanes,
          int64_t out_at, __mmask16& kept) {
  constexpr int J = (T - 1) * S + K;  // the input pixels of a tile's row
  const Conv2DShape& s = p.s;
  // The geometry in locals, and a pointer stepped from pixel to pixel: GCC otherwise reloads the plan's fields and
  // multiplies every pixel's index by C (an imul per load).
  const int64_t C = s.C, H = s.H, W = s.W, iw0 = ow0 * S - s.PL;
  const float* weights = p.packed.data() + c;
  const __m512 b = a.bias ? _mm512_maskz_loadu_ps(lanes, a.bias + c) : _mm512_setzero_ps();
  __m512 acc[T];
  NPUKIT_UNROLL
  for (int t = 0; t < T; ++t) acc[t] = b;
  NPUKIT_UNROLL
  for (int kh = 0; kh < K; ++kh) {
    const int64_t ih = oh * S - s.PT + kh;
    if (ih < 0 || ih >= H) continue;
    __m512 w[K];
    NPUKIT_UNROLL
    for (int kw = 0; kw < K; ++kw) w[kw] = _mm512_maskz_loadu_ps(lanes, weights + (kh * K + kw) * C);
    const float* pixel = image + (ih * W + iw0) * C + c;
    NPUKIT_UNROLL
    for (int j = 0; j < J; ++j, pixel += C) {
      if (kEdge && (iw0 + j < 0 || iw0 + j >= W)) continue;
      const __m512 v = _mm512_maskz_loadu_ps(lanes, pixel);
      // Pixel j of the tile's row is tap kw of output (j - kw) / S, where that is a whole output of the tile.
      NPUKIT_UNROLL
      for (int kw = 0; kw < K; ++kw) {
        const int d = j - kw;
        if (d < 0 || d % S != 0 || d / S >= T) continue;
        acc[d / S] = _mm512_fmadd_ps(v, w[kw], acc[d / S]);
      }
    }
  }
  NPUKIT_UNROLL
  for (int t = 0; t < T; ++t) {
    if (t >= count) break;
    Store(acc[t], a, out_at + t * C, lanes, kept);
  }
}

template <int K, int S, int T>
bool ConvRow(const DepthwisePlan& p, const RowArgs& a, int64_t n, int64_t oh, int64_t c0, int64_t c1) {
  constexpr int J = (T - 1) * S + K;
  const Conv2DShape& s = p.s;
  const float* image = a.x + n * s.H * s.W * s.C;
  __mmask16 kept = 0;
  for (int64_t ow0 = 0; ow0 < s.OW; ow0 += T) {
    const int count = static_cast<int>(std::min<int64_t>(T, s.OW - ow0));
    const int64_t iw0 = ow0 * S - s.PL;
    const bool edge = iw0 < 0 || iw0 + J > s.W;
    for (int64_t c = c0; c < c1; c += kLanes) {
      const auto lanes = static_cast<__mmask16>(c + kLanes <= c1 ? 0xffffu : (1u << (c1 - c)) - 1);
      const int64_t out_at = ((n * s.OH + oh) * s.OW + ow0) * s.C + c;
      if (edge) Tile<K, S, T, true>(p, a, image, oh, ow0, count, c, lanes, out_at, kept);
      else Tile<K, S, T, false>(p, a, image, oh, ow0, count, c, lanes, out_at, kept);
    }
  }
  return kept != 0;
}

// The runtime's rounding of a part's outputs where some could not be rounded in registers, and the finish's rest,
// in pieces of kFinishChunk: a part is channels [c0, c1) of output row r, one run of y when it holds the whole row.
void FinishPart(const Conv2DShape& s, const DepthwiseFinish& finish, bool unrounded, int64_t r, int64_t c0, int64_t c1, bool whole_row, float* y) {
  const int64_t run = whole_row ? s.OW * s.C : c1 - c0, runs = whole_row ? 1 : s.OW;
  for (int64_t i = 0; i < runs; ++i) {
    const auto first = static_cast<size_t>(r * s.OW * s.C + i * s.C + c0), end = first + static_cast<size_t>(run);
    for (size_t at = first; at < end; at += kFinishChunk) {
      const std::span<float> out(y + at, std::min(end, at + kFinishChunk) - at);
      if (unrounded) finish.half->Round(out, at);
      if (finish.rest) finish.rest(out, at);
    }
  }
}

template <int K, int S>
RowFn PickTile(int64_t OW) {
  return OW % kPixels != 0 && OW % kPixelsOfSevens == 0 ? ConvRow<K, S, kPixelsOfSevens> : ConvRow<K, S, kPixels>;
}

template <int K>
RowFn PickStride(int64_t stride, int64_t OW) {
  return stride == 1 ? PickTile<K, 1>(OW) : PickTile<K, 2>(OW);
}

// The row function for the conv, null for one the kernel does not take.
RowFn PickRow(const Conv2DShape& s) {
  if (s.KH != s.KW || s.SH != s.SW || (s.SH != 1 && s.SH != 2)) return nullptr;
  // 3x3 windows at stride 2 stay on oneDNN's kernel: ours took 0.92-1.32 of its time (bench/depthwise; mobilenet_v2's
  // 112 x 112 x 96 1.05-1.14), and mobilenet_v2 with force_fp16 1.01-1.06 of its time with them, 0.98 without.
  if (s.KH == 3 && s.SH == 2) return nullptr;
  switch (s.KH) {
    case 3: return PickStride<3>(s.SH, s.OW);
    case 5: return PickStride<5>(s.SH, s.OW);
    case 7: return PickStride<7>(s.SH, s.OW);
    default: return nullptr;
  }
}

}  // namespace

Avx512DepthwiseConv::Avx512DepthwiseConv() = default;
Avx512DepthwiseConv::~Avx512DepthwiseConv() = default;

std::unique_ptr<Avx512DepthwiseConv> Avx512DepthwiseConv::Build(const Conv2DShape& s) {
  if (s.G != s.C || s.M != s.C || s.DH != 1 || s.DW != 1 || s.PT < 0 || s.PL < 0) return nullptr;
  const RowFn row = PickRow(s);
  if (!row) return nullptr;
  auto plan = std::make_unique<DepthwisePlan>();
  plan->s = s;
  plan->row = row;
  auto conv = std::make_unique<Avx512DepthwiseConv>();
  conv->plan_ = std::move(plan);
  return conv;
}

void Avx512DepthwiseConv::Run(const float* x, const Tensor& w, const float* bias, const float* residual, float* y, const DepthwiseFinish& finish,
                              ThreadPool& pool) {
  DepthwisePlan& p = *plan_;
  const Conv2DShape& s = p.s;
  if (!(p.packed_from.defined() && p.packed_from.raw() == w.raw())) PackWeights(p, w);
  const RowArgs args{x, bias, residual, y, finish.relu, finish.half != nullptr, RoundsToInfinity(DType::kF16)};
  const int64_t rows = s.N * s.OH, blocks = (s.C + kLanes - 1) / kLanes;
  const int64_t parts = std::clamp<int64_t>((kPartsPerThread * pool.size() + rows - 1) / rows, 1, blocks);
  // Each thread takes an even part of the rows, as oneDNN's static schedule deals a conv's rows: the input is then
  // mostly what the conv before wrote from the same core, and the result what the next one reads there (dealt in
  // tasks to whichever thread came first, mnasnet1_0's depthwise convs took 1.08-1.15 of oneDNN's time).
  const int64_t part_macs = std::max<int64_t>(s.OW * s.C / parts * s.KH * s.KW, 1);
  pool.SplitEvenly(static_cast<size_t>(rows * parts), static_cast<size_t>(kParallelMultiplyAdds / part_macs + 1), [&](size_t u0, size_t u1) {
    for (auto u = static_cast<int64_t>(u0); u < static_cast<int64_t>(u1); ++u) {
      const int64_t r = u / parts, q = u % parts;
      const int64_t c0 = q * blocks / parts * kLanes, c1 = std::min(s.C, (q + 1) * blocks / parts * kLanes);
      const bool unrounded = p.row(p, args, r / s.OH, r % s.OH, c0, c1);
      if (unrounded || finish.rest) FinishPart(s, finish, unrounded, r, c0, c1, parts == 1, y);
    }
  });
}

#else  // no AVX-512: oneDNN's kernels serve

struct DepthwisePlan {};
Avx512DepthwiseConv::Avx512DepthwiseConv() = default;
Avx512DepthwiseConv::~Avx512DepthwiseConv() = default;
std::unique_ptr<Avx512DepthwiseConv> Avx512DepthwiseConv::Build(const Conv2DShape&) { return nullptr; }
void Avx512DepthwiseConv::Run(const float*, const Tensor&, const float*, const float*, float*, const DepthwiseFinish&, ThreadPool&) {}

#endif

}  // namespace npu
