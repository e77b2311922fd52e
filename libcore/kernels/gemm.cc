#include "kernels/gemm.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

#include "kernels/kernel_util.h"

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace npu {

PackedWeights::PackedWeights(const float* a, int64_t m, int64_t k) : m_(m), k_(k) {
  const int64_t panels = (m + kRows - 1) / kRows;
  data_.assign(static_cast<size_t>(panels * k * kRows), 0.0f);
  for (int64_t r = 0; r < m; ++r) {
    float* dst = data_.data() + (r / kRows) * k * kRows + r % kRows;
    for (int64_t j = 0; j < k; ++j) dst[j * kRows] = a[r * k + j];
  }
}

std::shared_ptr<const PackedWeights> PackedFor(const Tensor& w, int64_t row0, int64_t m, int64_t k) {
  struct Entry {
    std::weak_ptr<const void> owner;  // the weight's storage: once it is gone the address may be reused
    std::shared_ptr<const PackedWeights> packed;
  };
  static std::mutex mu;
  static std::map<const float*, Entry> cache;
  const float* rows = w.data<float>() + row0 * k;
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(rows);
  if (it != cache.end() && it->second.owner.lock() == w.owner() && it->second.packed->rows() == m && it->second.packed->depth() == k)
    return it->second.packed;
  std::erase_if(cache, [](const auto& e) { return e.second.owner.expired(); });
  auto packed = std::make_shared<const PackedWeights>(rows, m, k);
  cache[rows] = {w.owner(), packed};
  return packed;
}

#if defined(__AVX512F__)

bool HavePackedGemm() { return true; }

namespace {

constexpr int64_t kCols = 32;   // columns of C per tile: two zmm registers of floats
constexpr int64_t kDepth = 256;  // k per block: a packed B block (kDepth x kCols floats, 32 KiB) stays in L1

// One kRows x kCols tile of C over one k block: C (+)= A panel * B block, masked to the tile's live columns.
// `first` starts from the bias instead of C.
void Tile(const float* ap, const float* bp, float* c, int64_t ldc, int64_t kc, bool first, const float* bias, __mmask16 lo, __mmask16 hi) {
  constexpr int R = PackedWeights::kRows;
  __m512 c0[R], c1[R];
#pragma GCC unroll 12
  for (int i = 0; i < R; ++i) {
    if (first) {
      c0[i] = c1[i] = _mm512_set1_ps(bias[i]);
    } else {
      c0[i] = _mm512_maskz_loadu_ps(lo, c + i * ldc);
      c1[i] = _mm512_maskz_loadu_ps(hi, c + i * ldc + 16);
    }
  }
  for (int64_t k = 0; k < kc; ++k) {
    __m512 b0 = _mm512_loadu_ps(bp + k * kCols), b1 = _mm512_loadu_ps(bp + k * kCols + 16);
#pragma GCC unroll 12
    for (int i = 0; i < R; ++i) {
      __m512 a = _mm512_set1_ps(ap[k * R + i]);
      c0[i] = _mm512_fmadd_ps(a, b0, c0[i]);
      c1[i] = _mm512_fmadd_ps(a, b1, c1[i]);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < R; ++i) {
    _mm512_mask_storeu_ps(c + i * ldc, lo, c0[i]);
    _mm512_mask_storeu_ps(c + i * ldc + 16, hi, c1[i]);
  }
}

// Columns [n0, n0 + kCols) of C over the k block [k0, k0 + kc): that block of B packed once (it then stays in
// L1), then every row panel of A over it.
void PanelBlock(const PackedWeights& a, const float* b, float* c, int64_t n, int64_t n0, int64_t k0, const float* bias, float* bp) {
  constexpr int64_t R = PackedWeights::kRows;
  const int64_t live = std::min(kCols, n - n0), m = a.rows(), kc = std::min(kDepth, a.depth() - k0);
  const __mmask16 lo = live >= 16 ? 0xffff : static_cast<__mmask16>((1u << live) - 1);
  const __mmask16 hi = live >= 32 ? 0xffff : live > 16 ? static_cast<__mmask16>((1u << (live - 16)) - 1) : 0;
  for (int64_t j = 0; j < kc; ++j) {
    const float* row = b + (k0 + j) * n + n0;
    _mm512_storeu_ps(bp + j * kCols, _mm512_maskz_loadu_ps(lo, row));
    _mm512_storeu_ps(bp + j * kCols + 16, _mm512_maskz_loadu_ps(hi, row + 16));
  }
  alignas(64) float zero_bias[R] = {};
  for (int64_t r = 0; r < m; r += R) {
    const float* ap = a.panel(r / R) + k0 * R;
    const float* rb = bias ? bias + r : zero_bias;
    if (r + R <= m) {
      Tile(ap, bp, c + r * n + n0, n, kc, k0 == 0, rb, lo, hi);
      continue;
    }
    // The last, partial panel: its packed rows past m are zeros; the tile goes through a local copy.
    alignas(64) float tile[R * kCols], tile_bias[R] = {};
    const int64_t rows = m - r;
    for (int64_t i = 0; i < rows; ++i) {
      tile_bias[i] = rb[i];
      if (k0) std::memcpy(tile + i * kCols, c + (r + i) * n + n0, sizeof(float) * live);
    }
    Tile(ap, bp, tile, kCols, kc, k0 == 0, tile_bias, lo, hi);
    for (int64_t i = 0; i < rows; ++i) std::memcpy(c + (r + i) * n + n0, tile + i * kCols, sizeof(float) * live);
  }
}

}  // namespace

void GemmPacked(ThreadPool& pool, const PackedWeights& a, const float* b, float* c, int64_t n, const float* bias) {
  const size_t panels = static_cast<size_t>((n + kCols - 1) / kCols);
  const size_t grain = std::max<size_t>(1, panels / (4 * static_cast<size_t>(pool.size())));
  pool.ParallelFor(panels, grain, [&](size_t p0, size_t p1) {
    float* bp = ThreadScratch(static_cast<size_t>(kDepth * kCols), 1);  // slot 0 may hold the caller's im2col
    // k blocks outermost: A's block (rows x kDepth) is then read from memory once and stays in L2 while it
    // meets every column panel of this thread.
    for (int64_t k0 = 0; k0 < a.depth(); k0 += kDepth)
      for (size_t p = p0; p < p1; ++p) PanelBlock(a, b, c, n, static_cast<int64_t>(p) * kCols, k0, bias, bp);
  });
}

#else

bool HavePackedGemm() { return false; }
void GemmPacked(ThreadPool&, const PackedWeights&, const float*, float*, int64_t, const float*) {}

#endif

}  // namespace npu
