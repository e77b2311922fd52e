// Without AVX-512 GCC notes that a 64-byte vector passed by value has another ABI there: these functions are internal
// to this file, so no caller of another ABI exists.
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12 flags the AVX-512 intrinsics' _mm512_undefined operands as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "kernels/gemv.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>

#if defined(__AVX512F__) || defined(__F16C__)
#include <immintrin.h>
#endif

#include "base/file_io.h"
#include "base/half.h"
#include "kernels/numerics.h"

namespace npu {
namespace {

// One register of fp32 lanes with AVX-512, two with AVX2 (GCC's vector types lower to what the target has); each
// lane sums every kLanes-th product of a row, in order.
constexpr int64_t kLanes = 16;
typedef float Lanes __attribute__((vector_size(kLanes * sizeof(float))));
// Rows summed together: each load of x serves that many streams of weights, whose accumulators stay in registers
// (AVX-512 has 32, AVX2 16 of half the width). Eight streams per core read AlexNet's 151 MB layer in 0.90 of the
// time four took (bench/gemv).
#if defined(__AVX512F__)
constexpr int64_t kRowsAtOnce = 8;
#else
constexpr int64_t kRowsAtOnce = 4;
#endif
// Rows and columns of the blocks a (K, N) weight matrix is transposed in, so that reads and writes both stay in cache.
constexpr int64_t kTransposeBlock = 64;

Lanes Load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// kLanes weights stored as fp16, widened (exactly) in registers.
Lanes Load(const uint16_t* p) {
  Lanes v;
#if defined(__AVX512F__)
  const __m512 w = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  std::memcpy(&v, &w, sizeof v);
#elif defined(__F16C__)
  const __m256 lo = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m256 hi = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + kLanes / 2)));
  std::memcpy(&v, &lo, sizeof lo);
  std::memcpy(reinterpret_cast<char*>(&v) + sizeof lo, &hi, sizeof hi);
#else
  float w[kLanes];
  HalfToFloat(std::span(p, kLanes), std::span(w, kLanes));
  std::memcpy(&v, w, sizeof v);
#endif
  return v;
}

// The lanes' sum in a fixed order: halves added pairwise.
float Sum(Lanes v) {
  float s[kLanes];
  std::memcpy(s, &v, sizeof v);
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t j = 0; j < width; ++j) s[j] += s[j + width];
  return s[0];
}

// y[r] = row r of w (rows of K, fp32 or fp16) times x, for R rows; a tail of K below kLanes goes through zero-padded
// registers. The weights' values are the same either way, and so is each sum.
template <int64_t R, class W>
void SumRows(const float* x, const W* w, int64_t K, float* y) {
  Lanes acc[R] = {};
  int64_t k = 0;
  for (; k + kLanes <= K; k += kLanes) {
    const Lanes xv = Load(x + k);
    for (int64_t r = 0; r < R; ++r) acc[r] += Load(w + r * K + k) * xv;
  }
  if (k < K) {
    const auto tail = static_cast<size_t>(K - k) * sizeof(float);
    float xt[kLanes] = {};
    std::memcpy(xt, x + k, tail);
    const Lanes xv = Load(xt);
    for (int64_t r = 0; r < R; ++r) {
      W wt[kLanes] = {};
      std::memcpy(wt, w + r * K + k, static_cast<size_t>(K - k) * sizeof(W));
      acc[r] += Load(wt) * xv;
    }
  }
  for (int64_t r = 0; r < R; ++r) y[r] = Sum(acc[r]);
}

// The weights as N rows of K, copied once per weights tensor, in storage advised huge: as fp16 when every weight is an
// fp16 value (a force_fp16 model's, which the runtime hands over widened), which halves what each inference reads.
struct RowProductState final : KernelState {
  int64_t N = 0, K = 0;
  bool b_transposed = false;
  std::shared_ptr<void> rows;
  bool rows_are_halves = false;
  // The weights copied last, held so that their storage cannot be freed and reused for other bytes at the same
  // address (as ReorderedWeights holds its source).
  Tensor from;
};

// Whether every value is an fp16 value: rounded to one, it keeps its bits, and none is at or past fp16's range (an
// fp32 model's weights fail at once).
bool AllHalves(std::span<const float> w) {
  constexpr size_t kChunk = 4096;
  float rounded[kChunk];
  for (size_t i = 0; i < w.size(); i += kChunk) {
    const size_t n = std::min(kChunk, w.size() - i);
    if (RoundToHalf(w.subspan(i, n), std::span(rounded, n), RoundsToInfinity(DType::kF16)) != n) return false;
    if (std::memcmp(rounded, w.data() + i, n * sizeof(float)) != 0) return false;
  }
  return true;
}

// False when memory for the rows is not to be had.
bool CopyRows(RowProductState& s, const Tensor& b, ThreadPool& pool) {
  const int64_t N = s.N, K = s.K;
  const auto count = static_cast<size_t>(N * K);
  std::shared_ptr<void> storage = HugePageOrHeapStorage(count * sizeof(float));
  if (!storage) return false;
  auto* rows = static_cast<float*>(storage.get());
  const float* w = b.data<float>();
  if (s.b_transposed) {
    std::memcpy(rows, w, count * sizeof(float));
  } else {  // (K, N) -> (N, K), block by block
    const int64_t blocks = (N + kTransposeBlock - 1) / kTransposeBlock;
    pool.SplitEvenly(static_cast<size_t>(blocks), 2, [&](size_t b0, size_t b1) {
      for (int64_t n0 = static_cast<int64_t>(b0) * kTransposeBlock; n0 < std::min(N, static_cast<int64_t>(b1) * kTransposeBlock); n0 += kTransposeBlock)
        for (int64_t k0 = 0; k0 < K; k0 += kTransposeBlock)
          for (int64_t n = n0; n < std::min(N, n0 + kTransposeBlock); ++n)
            for (int64_t k = k0; k < std::min(K, k0 + kTransposeBlock); ++k) rows[n * K + k] = w[k * N + n];
    });
  }
  s.rows_are_halves = false;
  if (AllHalves(std::span<const float>(rows, count)))
    if (std::shared_ptr<void> halves = HugePageOrHeapStorage(count * sizeof(uint16_t))) {
      FloatToHalf(std::span<const float>(rows, count), std::span(static_cast<uint16_t*>(halves.get()), count));
      storage = std::move(halves);
      s.rows_are_halves = true;
    }
  s.rows = std::move(storage);
  s.from = b;
  MappedFile::DropResidentPages(b.owner(), b.bytes());  // the copy is what is read: not resident twice
  return true;
}

RowProductState* StateFor(KernelContext& c, std::unique_ptr<KernelState>& local, int64_t N, int64_t K, bool b_transposed) {
  bool fresh = false;
  auto* s = TaskState<RowProductState>(
      c.options.state, local, [&](const RowProductState& kept) { return kept.N == N && kept.K == K && kept.b_transposed == b_transposed; }, fresh);
  if (fresh) {
    s->N = N;
    s->K = K;
    s->b_transposed = b_transposed;
  }
  return s;
}

template <class W>
void RowsTimes(const float* x, const W* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool) {
  const auto min_parallel = static_cast<size_t>(std::max<int64_t>(1, kParallelMultiplyAdds / std::max<int64_t>(1, K)));
  pool.SplitEvenly(static_cast<size_t>(N), min_parallel, [&](size_t b, size_t e) {
    auto n = static_cast<int64_t>(b);
    const auto end = static_cast<int64_t>(e);
    for (; n + kRowsAtOnce <= end; n += kRowsAtOnce) SumRows<kRowsAtOnce>(x, w + n * K, K, y + n);
    for (; n < end; ++n) SumRows<1>(x, w + n * K, K, y + n);
    if (bias)
      for (n = static_cast<int64_t>(b); n < end; ++n) y[n] += bias[n];
  });
}

}  // namespace

void RowTimesWeightRows(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool) {
  RowsTimes(x, w, bias, y, N, K, pool);
}

void RowTimesWeightRows(const float* x, const uint16_t* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool) {
  RowsTimes(x, w, bias, y, N, K, pool);
}

Result<bool> RunRowProduct(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out) {
  if (a.dtype() != DType::kF32 || b.dtype() != DType::kF32 || a.rank() < 1 || b.rank() != 2) return false;
  const int64_t K = a.shape().back(), N = b_transposed ? b.shape()[0] : b.shape()[1];
  if (K == 0 || N == 0 || a.numel() != K || (b_transposed ? b.shape()[1] : b.shape()[0]) != K) return false;
  if (N * K * static_cast<int64_t>(sizeof(float)) < kRowProductMinWeightBytes) return false;
  if (bias && (bias->dtype() != DType::kF32 || bias->numel() != N)) return false;
  std::unique_ptr<KernelState> local;
  RowProductState* s = StateFor(c, local, N, K, b_transposed);
  if (!(s->from.defined() && s->from.raw() == b.raw()) && !CopyRows(*s, b, c.pool)) return false;
  Shape out_shape = a.shape();
  out_shape.back() = N;
  out = Tensor::Empty(DType::kF32, out_shape);
  const float* x = a.data<float>();
  const float* bias_values = bias ? bias->data<float>() : nullptr;
  float* y = out.mutable_data<float>();
  if (s->rows_are_halves) RowTimesWeightRows(x, static_cast<const uint16_t*>(s->rows.get()), bias_values, y, N, K, c.pool);
  else RowTimesWeightRows(x, static_cast<const float*>(s->rows.get()), bias_values, y, N, K, c.pool);
  return true;
}

}  // namespace npu
