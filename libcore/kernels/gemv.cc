#include "kernels/gemv.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "base/file_io.h"

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
// From this many multiply-adds on, both threads take part (a 256 x 256 layer on one thread took as long as the
// fork and join of two).
constexpr int64_t kParallelMultiplyAdds = 1 << 16;
// Rows and columns of the blocks a (K, N) weight matrix is transposed in, so that reads and writes both stay in cache.
constexpr int64_t kTransposeBlock = 64;

Lanes Load(const float* p) {
  Lanes v;
  std::memcpy(&v, p, sizeof v);
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

// y[r] = row r of w (rows of K) times x, for R rows; a tail of K below kLanes goes through zero-padded registers.
template <int64_t R>
void SumRows(const float* x, const float* w, int64_t K, float* y) {
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
      float wt[kLanes] = {};
      std::memcpy(wt, w + r * K + k, tail);
      acc[r] += Load(wt) * xv;
    }
  }
  for (int64_t r = 0; r < R; ++r) y[r] = Sum(acc[r]);
}

// The weights as N rows of K, copied once per weights tensor, in storage advised huge.
struct RowProductState final : KernelState {
  int64_t N = 0, K = 0;
  bool b_transposed = false;
  std::shared_ptr<void> rows;
  // The weights copied last, held so that their storage cannot be freed and reused for other bytes at the same
  // address (as ReorderedWeights holds its source).
  Tensor from;
};

void CopyRows(RowProductState& s, const Tensor& b, ThreadPool& pool) {
  auto* rows = static_cast<float*>(s.rows.get());
  const float* w = b.data<float>();
  const int64_t N = s.N, K = s.K;
  if (s.b_transposed) {
    std::memcpy(rows, w, static_cast<size_t>(N * K) * sizeof(float));
  } else {  // (K, N) -> (N, K), block by block
    const int64_t blocks = (N + kTransposeBlock - 1) / kTransposeBlock;
    pool.SplitEvenly(static_cast<size_t>(blocks), 2, [&](size_t b0, size_t b1) {
      for (int64_t n0 = static_cast<int64_t>(b0) * kTransposeBlock; n0 < std::min(N, static_cast<int64_t>(b1) * kTransposeBlock); n0 += kTransposeBlock)
        for (int64_t k0 = 0; k0 < K; k0 += kTransposeBlock)
          for (int64_t n = n0; n < std::min(N, n0 + kTransposeBlock); ++n)
            for (int64_t k = k0; k < std::min(K, k0 + kTransposeBlock); ++k) rows[n * K + k] = w[k * N + n];
    });
  }
  s.from = b;
  MappedFile::DropResidentPages(b.owner(), b.bytes());  // the copy is what is read: not resident twice
}

RowProductState* StateFor(KernelContext& c, std::unique_ptr<KernelState>& local, int64_t N, int64_t K, bool b_transposed) {
  std::unique_ptr<KernelState>& slot = c.options.state ? *c.options.state : local;
  auto* s = dynamic_cast<RowProductState*>(slot.get());
  if (s && s->N == N && s->K == K && s->b_transposed == b_transposed) return s;
  auto fresh = std::make_unique<RowProductState>();
  fresh->N = N;
  fresh->K = K;
  fresh->b_transposed = b_transposed;
  const auto bytes = static_cast<size_t>(N * K) * sizeof(float);
  fresh->rows = HugePageStorage(bytes);
  if (!fresh->rows) fresh->rows = std::shared_ptr<void>(std::malloc(bytes), std::free);
  if (!fresh->rows) return nullptr;
  slot = std::move(fresh);
  return static_cast<RowProductState*>(slot.get());
}

}  // namespace

void RowTimesWeightRows(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool) {
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

Result<bool> RunRowProduct(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out) {
  if (a.dtype() != DType::kF32 || b.dtype() != DType::kF32 || a.rank() < 1 || b.rank() != 2) return false;
  const int64_t K = a.shape().back(), N = b_transposed ? b.shape()[0] : b.shape()[1];
  if (K == 0 || N == 0 || a.numel() != K || (b_transposed ? b.shape()[1] : b.shape()[0]) != K) return false;
  if (N * K * static_cast<int64_t>(sizeof(float)) < kRowProductMinWeightBytes) return false;
  if (bias && (bias->dtype() != DType::kF32 || bias->numel() != N)) return false;
  std::unique_ptr<KernelState> local;
  RowProductState* s = StateFor(c, local, N, K, b_transposed);
  if (!s) return false;
  if (!(s->from.defined() && s->from.raw() == b.raw())) CopyRows(*s, b, c.pool);
  Shape out_shape = a.shape();
  out_shape.back() = N;
  out = Tensor::Empty(DType::kF32, out_shape);
  RowTimesWeightRows(a.data<float>(), static_cast<const float*>(s->rows.get()), bias ? bias->data<float>() : nullptr,
                     out.mutable_data<float>(), N, K, c.pool);
  return true;
}

}  // namespace npu
