// fp32 GEMM for layers whose left operand is a weight: C[M x N] = A[M x K] * B[K x N] + bias[m], all row-major.
// A is packed once into panels of kRows rows (PackedWeights, cached per weight tensor for the session), so a
// call packs only blocks of B (the activations, or their im2col) while it runs. On AVX-512 this beats Eigen's
// general GEMM, which packs both operands on every call (measured in bench/, README "Measured").
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "base/thread_pool.h"
#include "ir/tensor.h"

namespace npu {

class PackedWeights {
 public:
  static constexpr int64_t kRows = 12;  // rows of A per panel: the micro-kernel's 12 x 32 accumulator tile
  PackedWeights(const float* a, int64_t m, int64_t k);
  int64_t rows() const { return m_; }
  int64_t depth() const { return k_; }
  // Panel p holds rows [p*kRows, p*kRows+kRows) as depth() runs of kRows values (zeros past the last row).
  const float* panel(int64_t p) const { return data_.data() + p * k_ * kRows; }

 private:
  int64_t m_, k_;
  std::vector<float> data_;
};

// The packed form of rows [row0, row0+m) of the weight tensor `w` (viewed as [m, k] per row block), made on
// first use and kept while `w`'s storage lives. Thread-safe.
std::shared_ptr<const PackedWeights> PackedFor(const Tensor& w, int64_t row0, int64_t m, int64_t k);

// True where the packed kernel runs (built for AVX-512); elsewhere callers keep Eigen.
bool HavePackedGemm();

// C = A * B + bias (bias may be null); B and C have row stride n. Splits N across the pool.
void GemmPacked(ThreadPool& pool, const PackedWeights& a, const float* b, float* c, int64_t n, const float* bias);

}  // namespace npu
