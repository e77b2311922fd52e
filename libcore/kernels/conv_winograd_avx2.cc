#include "kernels/conv_winograd_avx2.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>

#include "base/file_io.h"
#include "kernels/numerics.h"

// Built for AVX2 hosts without AVX-512, where oneDNN 2.6 has no Winograd kernel (with AVX-512 it has one).
#if defined(__AVX2__) && defined(__FMA__) && !defined(__AVX512F__)
#include <immintrin.h>
#define NPUKIT_WINOGRAD_AVX2 1
#endif

namespace npu {

#if NPUKIT_WINOGRAD_AVX2
namespace {

constexpr int kLanes = 8;  // floats per AVX2 register: the channel vector every loop works on

// Winograd's minimal filtering F(m, r): m outputs of an r-tap correlation from n = m + r - 1 inputs with n products
// (Lavin and Gray, "Fast Algorithms for Convolutional Neural Networks", CVPR 2016, section 4), one dimension at a
// time: each 1-D transform gives G (r taps to n transformed ones; in double, the weights are transformed once) and
// Bt's and At's rows on registers (V = Bt d, Y = At M).

// F(4, 3) on the points 0, 1, -1, 2, -2 and infinity.
struct F43 {
  static constexpr int kOut = 4, kIn = 6, kTaps = 3;
  static double G(int i, int a) {
    static constexpr double g[kIn][kTaps] = {{1.0 / 4, 0, 0},           {-1.0 / 6, -1.0 / 6, -1.0 / 6}, {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                             {1.0 / 24, 1.0 / 12, 1.0 / 6}, {1.0 / 24, -1.0 / 12, 1.0 / 6}, {0, 0, 1}};
    return g[i][a];
  }
  // Bt: [4 0 -5 0 1 0], [0 -4 -4 1 1 0], [0 4 -4 -1 1 0], [0 -2 -1 2 1 0], [0 2 -1 -2 1 0], [0 4 0 -5 0 1], by the
  // common subexpressions of its rows.
  static void Input(const __m256 d[kIn], __m256 t[kIn]) {
    const __m256 two = _mm256_set1_ps(2), four = _mm256_set1_ps(4), five = _mm256_set1_ps(5);
    const __m256 a = _mm256_fnmadd_ps(four, d[2], d[4]);  // d4 - 4 d2
    const __m256 b = _mm256_fnmadd_ps(four, d[1], d[3]);  // d3 - 4 d1
    const __m256 c = _mm256_sub_ps(d[4], d[2]);
    const __m256 e = _mm256_mul_ps(two, _mm256_sub_ps(d[3], d[1]));
    t[0] = _mm256_fmadd_ps(four, d[0], _mm256_fnmadd_ps(five, d[2], d[4]));
    t[1] = _mm256_add_ps(a, b);
    t[2] = _mm256_sub_ps(a, b);
    t[3] = _mm256_add_ps(c, e);
    t[4] = _mm256_sub_ps(c, e);
    t[5] = _mm256_fmadd_ps(four, d[1], _mm256_fnmadd_ps(five, d[3], d[5]));
  }
  // At: [1 1 1 1 1 0], [0 1 -1 2 -2 0], [0 1 1 4 4 0], [0 1 -1 8 -8 1].
  static void Output(const __m256 m[kIn], __m256 o[kOut]) {
    const __m256 s12 = _mm256_add_ps(m[1], m[2]), d12 = _mm256_sub_ps(m[1], m[2]);
    const __m256 s34 = _mm256_add_ps(m[3], m[4]), d34 = _mm256_sub_ps(m[3], m[4]);
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], s12), s34);
    o[1] = _mm256_fmadd_ps(_mm256_set1_ps(2), d34, d12);
    o[2] = _mm256_fmadd_ps(_mm256_set1_ps(4), s34, s12);
    o[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8), d34, d12), m[5]);
  }
};

// F(2, 3) on the points 0, 1, -1 and infinity.
struct F23 {
  static constexpr int kOut = 2, kIn = 4, kTaps = 3;
  static double G(int i, int a) {
    static constexpr double g[kIn][kTaps] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    return g[i][a];
  }
  // Bt: [1 0 -1 0], [0 1 1 0], [0 -1 1 0], [0 1 0 -1].
  static void Input(const __m256 d[kIn], __m256 t[kIn]) {
    t[0] = _mm256_sub_ps(d[0], d[2]);
    t[1] = _mm256_add_ps(d[1], d[2]);
    t[2] = _mm256_sub_ps(d[2], d[1]);
    t[3] = _mm256_sub_ps(d[1], d[3]);
  }
  // At: [1 1 1 0], [0 1 -1 -1].
  static void Output(const __m256 m[kIn], __m256 o[kOut]) {
    o[0] = _mm256_add_ps(_mm256_add_ps(m[0], m[1]), m[2]);
    o[1] = _mm256_sub_ps(_mm256_sub_ps(m[1], m[2]), m[3]);
  }
};

// F(4, 7) on the points 0, 1, -1, 2, -2, 1/2, -1/2, 3/2, -3/2 and infinity (within 1.6e-6 of each output's sum of
// |x| |w|, measured; with 3 and -3 instead of the halves, 3.8e-6). Its matrices come from the points (Toom-Cook):
// At's column j holds the powers of point j; G's row j holds them over the product of point j's differences to the
// others; Bt's row j holds the coefficients of the product of (x - p) over the other finite points. Infinity's
// column of At and row of G pick the last output and the last tap, and its row of Bt holds the coefficients of the
// product over all finite points.
struct F47 {
  static constexpr int kOut = 4, kIn = 10, kTaps = 7;
  struct Matrices {
    double g[kIn][kTaps];
    float bt[kIn][kIn], at[kOut][kIn];
  };
  static const Matrices& Of() {
    static const Matrices matrices = [] {
      constexpr double p[kIn - 1] = {0, 1, -1, 2, -2, 0.5, -0.5, 1.5, -1.5};
      Matrices r{};
      // The coefficients of the product of (x - p[l]) over l != skip (skip = -1: over all).
      const auto coefficients = [&](int skip) {
        std::array<double, kIn> c{};
        c[0] = 1;
        for (int l = 0; l < kIn - 1; ++l) {
          if (l == skip) continue;
          for (int k = kIn - 1; k > 0; --k) c[k] = c[k - 1] - p[l] * c[k];
          c[0] *= -p[l];
        }
        return c;
      };
      for (int j = 0; j < kIn; ++j) {
        const bool infinity = j == kIn - 1;
        double differences = 1;
        for (int l = 0; l < kIn - 1; ++l)
          if (!infinity && l != j) differences *= p[j] - p[l];
        for (int a = 0; a < kTaps; ++a) r.g[j][a] = infinity ? (a == kTaps - 1 ? 1 : 0) : std::pow(p[j], a) / differences;
        for (int i = 0; i < kOut; ++i) r.at[i][j] = static_cast<float>(infinity ? (i == kOut - 1 ? 1 : 0) : std::pow(p[j], i));
        const std::array<double, kIn> c = coefficients(infinity ? -1 : j);
        for (int k = 0; k < kIn; ++k) r.bt[j][k] = static_cast<float>(c[k]);
      }
      return r;
    }();
    return matrices;
  }
  static double G(int i, int a) { return Of().g[i][a]; }
  static void Input(const __m256 d[kIn], __m256 t[kIn]) { Apply<kIn>(Of().bt, d, t); }
  static void Output(const __m256 m[kIn], __m256 o[kOut]) { Apply<kOut>(Of().at, m, o); }
  // out = rows x in, a matrix of constants over registers (its zeros skipped).
  template <int kRowsOut>
  static void Apply(const float (&rows)[kRowsOut][kIn], const __m256 in[kIn], __m256 out[kRowsOut]) {
    for (int i = 0; i < kRowsOut; ++i) {
      __m256 acc = _mm256_setzero_ps();
      for (int k = 0; k < kIn; ++k)
        if (rows[i][k] != 0) acc = _mm256_fmadd_ps(_mm256_set1_ps(rows[i][k]), in[k], acc);
      out[i] = acc;
    }
  }
};

// The identity in one dimension: a kernel of one tap there.
struct Unit {
  static constexpr int kOut = 1, kIn = 1, kTaps = 1;
  static double G(int, int) { return 1; }
  static void Input(const __m256 d[1], __m256 t[1]) { t[0] = d[0]; }
  static void Output(const __m256 m[1], __m256 o[1]) { o[0] = m[0]; }
};

// A tiling: H's transform along the rows, W's along the columns.
template <class HTransform, class WTransform>
struct Tiling {
  using H = HTransform;
  using W = WTransform;
  static constexpr int kPoints = H::kIn * W::kIn;
};
using F4x4 = Tiling<F43, F43>;  // 3x3 kernels: 36 products per 16 outputs
using F2x2 = Tiling<F23, F23>;  // 3x3 kernels on small maps: 16 per 4, finer tiles, weights 16/9 of their size
using Row7 = Tiling<Unit, F47>;     // 1x7 kernels: 10 products per 4 outputs where the direct sum does 28
using Column7 = Tiling<F47, Unit>;  // 7x1 kernels
using Row3 = Tiling<Unit, F43>;     // 1x3 kernels: 6 products per 4 outputs where the direct sum does 12
using Column3 = Tiling<F43, Unit>;  // 3x1 kernels

// Calls fn with a value of the tiling's type.
template <class Fn>
void WithTiling(WinogradTiling t, Fn&& fn) {
  switch (t) {
    case WinogradTiling::kF4x4: return fn(F4x4{});
    case WinogradTiling::kF2x2: return fn(F2x2{});
    case WinogradTiling::kRow7: return fn(Row7{});
    case WinogradTiling::kColumn7: return fn(Column7{});
    case WinogradTiling::kRow3: return fn(Row3{});
    case WinogradTiling::kColumn3: return fn(Column3{});
    case WinogradTiling::kNone: return;
  }
}

// The product kernel: out[r][0..8P) = sum over c of v[r][c] u[c][0..8P), for R tiles (rows of v) and P panels of
// 8 output channels (each panel (C, 8), the next `panel` floats on). 6 x 2 keeps 12 sums, 2 weight vectors and
// a broadcast in the 16 registers, and its 12 multiply-adds per 8 loads keep the two FMA units busy.
constexpr int kRows = 6, kPanels = 2;
template <int R, int P>
void Product(const float* v, int64_t ldv, const float* u, int64_t panel, int64_t channels, float* out, int64_t ldo) {
  // The register loops unrolled (GCC at -O2 would keep the sums in memory).
  __m256 acc[R][P];
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) acc[r][p] = _mm256_setzero_ps();
  for (int64_t c = 0; c < channels; ++c) {
    __m256 b[P];
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) b[p] = _mm256_loadu_ps(u + p * panel + c * kLanes);
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
      const __m256 a = _mm256_broadcast_ss(v + r * ldv + c);
#pragma GCC unroll 2
      for (int p = 0; p < P; ++p) acc[r][p] = _mm256_fmadd_ps(a, b[p], acc[r][p]);
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int p = 0; p < P; ++p) _mm256_storeu_ps(out + r * ldo + p * kLanes, acc[r][p]);
}

using ProductFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, int64_t);
template <int P>
constexpr std::array<ProductFn, kRows + 1> kProducts = {nullptr,          Product<1, P>, Product<2, P>, Product<3, P>,
                                                        Product<4, P>, Product<5, P>, Product<6, P>};

// The transformed tiles and their products for one block of tiles: half of a Zen 3 core's 512 KiB of L2, and at
// least two groups of 6 tiles. bench/conv3x3 over blocks of 128 KiB (6 tiles at least), 256 KiB (12), 512 KiB (12)
// and 1 MiB (24): 256 KiB had the lowest or near-lowest time on most layers; larger blocks lost up to 1.6x on
// 14x14 to 28x28 maps (fewer blocks to share between the threads, products read from L3).
constexpr int64_t kBlockBytes = 256 << 10;
constexpr int64_t kMinBlockTiles = 12, kMaxBlockTiles = 144;
// Tasks per thread below which the output channels are split as well as the tiles: the pool deals tasks out as
// threads come free, so a few per thread even out their times.
constexpr int64_t kTasksPerThread = 2;
// Elements per task of the pass that checks and finishes the result.
constexpr size_t kFinishGrain = 1 << 14;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Where the kernel pays: bench/conv3x3 (each 3x3 layer of googlenet, densenet121, squeezenet1_1, inception_v3 and
// resnet50, and inception_v3's 1x7, 7x1, 1x3 and 3x1 ones, channels-last with bias, interleaved medians, 2 threads of an AMD EPYC, Zen 3, AVX2) against oneDNN's
// jit:avx2 direct kernel. F(4x4) takes 0.3-0.5 of the direct kernel's time on maps of 25x25 and larger with 64+
// channels each way, 0.5-0.75 with fewer (densenet's 128 -> 32, squeezenet's 16 -> 64), 0.5-0.56 on 14x14 with
// 96-256 channels (densenet's 128 -> 32: 0.97; F(2x2): 0.83). Below 16 tiles the transformed weights (4x the plain
// ones) are read for too few outputs: on 5x5 maps (4 tiles) 1.8; and tiles that overhang the map compute outputs
// that are thrown away (13x13: 16 tiles, 66% of their outputs kept). There F(2x2) takes over: 13x13 maps (49 tiles,
// 86% kept) 0.71-0.72 where F(4x4) ran 0.71-1.06 in different runs, 7x7 (16 tiles, 77%) 0.72-0.77 where F(4x4) ran
// 0.74-1.06; on 5x5 (9 tiles) 0.91, left to the direct kernel. On maps of 25x25 and larger F(2x2) is 1.3-1.7x
// F(4x4)'s time: four times the tiles' transforms per output. In one dimension, by the same rule: F(4, 7) on
// inception_v3's 1x7 and 7x1 layers 0.55-0.72 on 12x12 maps, 0.57-0.81 on 17x17 (85% kept); F(4, 3) on its 1x3
// and 3x1 layers on 8x8 maps 0.50-0.54. Convs under 4M multiply-adds stay direct: their times (0.02-0.1 ms) are
// mostly the two parallel loops'.
constexpr int64_t kMinTiles = 16;
constexpr double kMinFilled = 0.75;
constexpr double kMinMacs = 4e6;

// The calling thread's scratch: a block's transformed tiles and products.
float* ThreadScratch(size_t floats) {
  thread_local std::vector<float> buf;
  if (buf.size() < floats) buf.resize(floats);
  return buf.data();
}

const float kZeros[kLanes] = {};

// The tiles of oh x ow outputs over the conv's output maps, and how much of them is inside the maps.
struct Tiles {
  int64_t h, w, count;
  double filled;
};
Tiles TilesOf(const Conv2DShape& s, int oh, int ow) {
  const int64_t h = CeilDiv(s.OH, oh), w = CeilDiv(s.OW, ow), count = s.N * h * w;
  return {h, w, count, static_cast<double>(s.N * s.OH * s.OW) / static_cast<double>(count * oh * ow)};
}
template <class F>
Tiles TilesOf(const Conv2DShape& s) {
  return TilesOf(s, F::H::kOut, F::W::kOut);
}

template <class F>
bool Takes(const Conv2DShape& s) {
  return s.KH == F::H::kTaps && s.KW == F::W::kTaps;
}

template <class F>
bool Pays(const Conv2DShape& s) {
  const Tiles t = TilesOf<F>(s);
  return Takes<F>(s) && t.count >= kMinTiles && t.filled >= kMinFilled &&
         static_cast<double>(s.N * s.OH * s.OW) * s.M * s.C * s.KH * s.KW >= kMinMacs;
}

// The tiling the conv runs with, or none where none pays (NPUKIT_WINOGRAD may name one for 3x3 kernels).
WinogradTiling ChosenTiling(const Conv2DShape& s) {
  if (s.SH != 1 || s.SW != 1 || s.DH != 1 || s.DW != 1 || s.G != 1) return WinogradTiling::kNone;
  if (s.C % kLanes != 0 || s.M % kLanes != 0) return WinogradTiling::kNone;
  switch (WinogradSetting()) {
    case WinogradChoice::kNever: return WinogradTiling::kNone;
    case WinogradChoice::kF4x4: return Takes<F4x4>(s) ? WinogradTiling::kF4x4 : WinogradTiling::kNone;
    case WinogradChoice::kF2x2: return Takes<F2x2>(s) ? WinogradTiling::kF2x2 : WinogradTiling::kNone;
    case WinogradChoice::kWherePays: break;
  }
  // The first that pays: F(4x4) before F(2x2) (fewer products per output); each kernel shape takes one tiling.
  for (WinogradTiling t : {WinogradTiling::kF4x4, WinogradTiling::kF2x2, WinogradTiling::kRow7, WinogradTiling::kColumn7,
                           WinogradTiling::kRow3, WinogradTiling::kColumn3}) {
    bool pays = false;
    WithTiling(t, [&](auto f) { pays = Pays<decltype(f)>(s); });
    if (pays) return t;
  }
  return WinogradTiling::kNone;
}

// The points of a tiling's transformed tile, and its tiles over the conv's maps.
int PointsOf(WinogradTiling t) {
  int points = 0;
  WithTiling(t, [&](auto f) { points = decltype(f)::kPoints; });
  return points;
}
Tiles TilesFor(const Conv2DShape& s, WinogradTiling t) {
  Tiles tiles{};
  WithTiling(t, [&](auto f) { tiles = TilesOf<decltype(f)>(s); });
  return tiles;
}

}  // namespace

WinogradTiling Avx2WinogradTiling(const Conv2DShape& s) { return ChosenTiling(s); }

struct Avx2WinogradPlan {
  Conv2DShape s{};
  WinogradTiling tiling = WinogradTiling::kNone;
  Tiles tiles{};
  int64_t block = 0;                 // tiles per block
  int64_t tile_blocks = 0;           // blocks over all images' tiles
  int64_t panels_per_range = 0, panel_ranges = 0;  // the output channels' split, in panels of 8
  std::vector<float> u;              // the transformed weights, (points, M / 8, C, 8)
  Tensor u_from;                     // the weights tensor they were made from (held: its storage cannot be reused)
};

Avx2WinogradConv::Avx2WinogradConv() = default;
Avx2WinogradConv::~Avx2WinogradConv() = default;

std::unique_ptr<Avx2WinogradConv> Avx2WinogradConv::Build(const Conv2DShape& s, int threads) {
  const WinogradTiling tiling = ChosenTiling(s);
  if (tiling == WinogradTiling::kNone) return nullptr;
  auto conv = std::make_unique<Avx2WinogradConv>();
  conv->plan_ = std::make_unique<Avx2WinogradPlan>();
  Avx2WinogradPlan& p = *conv->plan_;
  p.s = s;
  p.tiling = tiling;
  p.tiles = TilesFor(s, tiling);
  const int64_t panels = s.M / kLanes, points = PointsOf(tiling);
  const int64_t per_tile = points * (s.C + s.M) * static_cast<int64_t>(sizeof(float));
  const int64_t most = std::clamp(kBlockBytes / per_tile, kMinBlockTiles, kMaxBlockTiles);
  // Blocks of equal size in whole groups of rows for Product.
  p.tile_blocks = CeilDiv(p.tiles.count, most);
  p.block = CeilDiv(CeilDiv(p.tiles.count, p.tile_blocks), kRows) * kRows;
  p.tile_blocks = CeilDiv(p.tiles.count, p.block);
  // Where the blocks are too few to share between the threads evenly, the output channels are split too.
  p.panel_ranges = std::clamp<int64_t>(CeilDiv(kTasksPerThread * threads, p.tile_blocks), 1, std::max<int64_t>(1, panels / kPanels));
  p.panels_per_range = CeilDiv(CeilDiv(panels, p.panel_ranges), kPanels) * kPanels;
  p.panel_ranges = CeilDiv(panels, p.panels_per_range);
  return conv;
}

namespace {

// U = GH g GWt for every (output, input) channel pair, in double, laid out for Product: (points, M / 8, C, 8). Each
// loop runs over the input channels with constant coefficients, so that it vectorises: googlenet's 3x3 weights
// took 90 ms as scalar loops, once per session.
template <class F>
void TransformWeights(const Conv2DShape& s, const float* g, std::vector<float>& u, ThreadPool& pool) {
  using H = typename F::H;
  using W = typename F::W;
  constexpr int kh = H::kTaps, kw = W::kTaps, taps = kh * kw;
  const int64_t C = s.C, M = s.M;
  u.resize(static_cast<size_t>(F::kPoints * C * M));
  // By panels of 8 outputs: each panel's values share cache lines.
  pool.ParallelFor(static_cast<size_t>(M / kLanes), 1, [&](size_t pn0, size_t pn1) {
    std::vector<double> tap(static_cast<size_t>(taps * C)), gk(static_cast<size_t>(H::kIn * kw * C));  // [a][b][c], [i][b][c]
    for (auto m = static_cast<int64_t>(pn0) * kLanes; m < static_cast<int64_t>(pn1) * kLanes; ++m) {
      for (int64_t c = 0; c < C; ++c)
        for (int k = 0; k < taps; ++k) tap[static_cast<size_t>(k * C + c)] = g[(m * C + c) * taps + k];
      for (int i = 0; i < H::kIn; ++i)
        for (int b = 0; b < kw; ++b) {
          double* row = gk.data() + (i * kw + b) * C;
          std::fill(row, row + C, 0.0);
          for (int a = 0; a < kh; ++a) {
            const double coefficient = H::G(i, a);
            const double* t = tap.data() + (a * kw + b) * C;
            for (int64_t c = 0; c < C; ++c) row[c] += coefficient * t[c];
          }
        }
      std::vector<double> sum(static_cast<size_t>(C));
      for (int i = 0; i < H::kIn; ++i)
        for (int j = 0; j < W::kIn; ++j) {
          std::fill(sum.begin(), sum.end(), 0.0);
          for (int b = 0; b < kw; ++b) {
            const double coefficient = W::G(j, b);
            const double* r = gk.data() + (i * kw + b) * C;
            for (int64_t c = 0; c < C; ++c) sum[static_cast<size_t>(c)] += coefficient * r[c];
          }
          float* to = u.data() + ((i * W::kIn + j) * (M / kLanes) + m / kLanes) * C * kLanes + m % kLanes;
          for (int64_t c = 0; c < C; ++c) to[c * kLanes] = static_cast<float>(sum[static_cast<size_t>(c)]);
        }
    }
  });
}

// Where a block's tiles are: tile t of the block is tile first + t of the task's (image, row, column) order.
struct TileAt {
  int64_t n, ty, tx;
};

// V for one tile: its inputs (zeros past the map) per 8 channels, into v[point][tile][c].
template <class F>
void TransformInputTile(const Conv2DShape& s, const float* x, TileAt at, float* v, int64_t point_stride) {
  using H = typename F::H;
  using W = typename F::W;
  const int64_t y0 = at.ty * H::kOut - s.PT, x0 = at.tx * W::kOut - s.PL;
  const float* rows[H::kIn][W::kIn];
  for (int r = 0; r < H::kIn; ++r)
    for (int q = 0; q < W::kIn; ++q) {
      const int64_t iy = y0 + r, ix = x0 + q;
      rows[r][q] = iy >= 0 && iy < s.H && ix >= 0 && ix < s.W ? x + ((at.n * s.H + iy) * s.W + ix) * s.C : nullptr;
    }
  for (int64_t c = 0; c < s.C; c += kLanes) {
    __m256 t[H::kIn][W::kIn];  // t[i][q]: Bt's row i along H over column q
    for (int q = 0; q < W::kIn; ++q) {
      __m256 d[H::kIn], col[H::kIn];
      for (int r = 0; r < H::kIn; ++r) d[r] = _mm256_loadu_ps(rows[r][q] ? rows[r][q] + c : kZeros);
      H::Input(d, col);
      for (int i = 0; i < H::kIn; ++i) t[i][q] = col[i];
    }
    for (int i = 0; i < H::kIn; ++i) {
      __m256 out[W::kIn];
      W::Input(t[i], out);
      for (int j = 0; j < W::kIn; ++j) _mm256_storeu_ps(v + (i * W::kIn + j) * point_stride + c, out[j]);
    }
  }
}

// Y for one tile's channels [ch0, ch1): At M A per 8 channels from m[point][tile][ch], plus the bias and the
// residual, its outputs inside the map into y.
template <class F>
void TransformOutputTile(const Conv2DShape& s, const float* m, int64_t point_stride, const float* bias, const float* residual,
                         TileAt at, int64_t ch0, int64_t ch1, float* y) {
  using H = typename F::H;
  using W = typename F::W;
  const int64_t oy0 = at.ty * H::kOut, ox0 = at.tx * W::kOut;
  const int rows = static_cast<int>(std::min<int64_t>(H::kOut, s.OH - oy0)), cols = static_cast<int>(std::min<int64_t>(W::kOut, s.OW - ox0));
  for (int64_t ch = ch0; ch < ch1; ch += kLanes) {
    const __m256 b = bias ? _mm256_loadu_ps(bias + ch) : _mm256_setzero_ps();
    __m256 t[H::kOut][W::kIn];  // t[k][j]: At's row k along H over column j
    for (int j = 0; j < W::kIn; ++j) {
      __m256 col[H::kIn], o[H::kOut];
      for (int i = 0; i < H::kIn; ++i) col[i] = _mm256_loadu_ps(m + (i * W::kIn + j) * point_stride + ch);
      H::Output(col, o);
      for (int k = 0; k < H::kOut; ++k) t[k][j] = o[k];
    }
    for (int k = 0; k < rows; ++k) {
      __m256 o[W::kOut];
      W::Output(t[k], o);
      const int64_t at_row = ((at.n * s.OH + oy0 + k) * s.OW + ox0) * s.M + ch;
      for (int l = 0; l < cols; ++l) {
        __m256 v = _mm256_add_ps(o[l], b);  // in the direct kernel's order: the sum, its bias, then the residual
        if (residual) v = _mm256_add_ps(v, _mm256_loadu_ps(residual + at_row + l * s.M));
        _mm256_storeu_ps(y + at_row + l * s.M, v);
      }
    }
  }
}

// Every task's tiles through the three steps. Task (i, j): the tiles of block i, the output channels of panel range j.
template <class F>
void RunTasks(const Avx2WinogradPlan& p, const float* x, const float* bias, const float* residual, float* y, ThreadPool& pool) {
  constexpr int kPoints = F::kPoints;
  const Conv2DShape& s = p.s;
  const int64_t C = s.C, M = s.M, panels = M / kLanes;
  const auto tile_at = [&](int64_t t) {
    const int64_t row = t / p.tiles.w;
    return TileAt{row / p.tiles.h, row % p.tiles.h, t % p.tiles.w};
  };
  pool.ParallelFor(static_cast<size_t>(p.tile_blocks * p.panel_ranges), 1, [&](size_t task0, size_t task1) {
    float* v = ThreadScratch(static_cast<size_t>(kPoints * p.block * (C + M)));
    float* prod = v + kPoints * p.block * C;
    for (size_t task = task0; task < task1; ++task) {
      const int64_t b0 = static_cast<int64_t>(task) / p.panel_ranges * p.block, count = std::min(p.block, p.tiles.count - b0);
      const int64_t pn0 = static_cast<int64_t>(task) % p.panel_ranges * p.panels_per_range;
      const int64_t pn1 = std::min(panels, pn0 + p.panels_per_range);
      for (int64_t t = 0; t < count; ++t) TransformInputTile<F>(s, x, tile_at(b0 + t), v + t * C, p.block * C);
      for (int point = 0; point < kPoints; ++point) {
        const float* vp = v + point * p.block * C;
        const float* up = p.u.data() + static_cast<size_t>(point * panels * C * kLanes);
        float* mp = prod + point * p.block * M;
        for (int64_t pn = pn0; pn < pn1; pn += kPanels) {
          const auto& product = pn + 1 < pn1 ? kProducts<2> : kProducts<1>;
          for (int64_t t = 0; t < count; t += kRows) {
            const auto rows = static_cast<int>(std::min<int64_t>(kRows, count - t));
            product[rows](vp + t * C, C, up + pn * C * kLanes, C * kLanes, C, mp + t * M + pn * kLanes, M);
          }
        }
      }
      for (int64_t t = 0; t < count; ++t)
        TransformOutputTile<F>(s, prod + t * M, p.block * M, bias, residual, tile_at(b0 + t), pn0 * kLanes, pn1 * kLanes, y);
    }
  });
}

}  // namespace

std::vector<std::pair<size_t, size_t>> Avx2WinogradConv::Run(const float* x, const Tensor& w, const float* bias, const float* residual,
                                                             float* y, const ChunkFinish& finish, ThreadPool& pool) {
  Avx2WinogradPlan& p = *plan_;
  if (!(p.u_from.defined() && p.u_from.raw() == w.raw())) {
    WithTiling(p.tiling, [&](auto f) { TransformWeights<decltype(f)>(p.s, w.data<float>(), p.u, pool); });
    p.u_from = w;
    // The transformed weights are what the products read: the plain ones need not stay resident beside them
    // (pages of a mapped model file come back from it if the direct kernel ever needs them).
    MappedFile::DropResidentPages(w.owner(), w.bytes());
  }
  WithTiling(p.tiling, [&](auto f) { RunTasks<decltype(f)>(p, x, bias, residual, y, pool); });
  // The finish, once every task is done (a task's rows are not a range of y when the channels are split).
  std::mutex unfinished_mu;
  std::vector<std::pair<size_t, size_t>> unfinished;
  const auto elems = static_cast<size_t>(p.s.N * p.s.OH * p.s.OW * p.s.M);
  pool.ParallelFor(elems, kFinishGrain, [&](size_t e0, size_t e1) {
    if (AnyNonFinite({y + e0, e1 - e0})) {
      const std::lock_guard lock(unfinished_mu);
      unfinished.emplace_back(e0, e1);
    } else if (finish) {
      finish({y + e0, e1 - e0}, e0);
    }
  });
  return unfinished;
}

#else  // no AVX2 and FMA: the direct kernel serves

WinogradTiling Avx2WinogradTiling(const Conv2DShape&) { return WinogradTiling::kNone; }  // no kernel for this CPU
struct Avx2WinogradPlan {};
Avx2WinogradConv::Avx2WinogradConv() = default;
Avx2WinogradConv::~Avx2WinogradConv() = default;
std::unique_ptr<Avx2WinogradConv> Avx2WinogradConv::Build(const Conv2DShape&, int) { return nullptr; }
std::vector<std::pair<size_t, size_t>> Avx2WinogradConv::Run(const float*, const Tensor&, const float*, const float*, float*, const ChunkFinish&,
                                                             ThreadPool&) {
  return {};
}

#endif

}  // namespace npu
