// A fully connected layer at batch 1 (one row times 2-D weights) as npukit's own matrix-vector product. Such a
// layer does two flops per weight it reads, so its time is the time to stream its weights from memory once per
// inference: AlexNet's first classifier layer reads 151 MB. oneDNN's matmul (its brgemm kernel on a blocked
// layout) streamed it at 28-29 GB/s on two Zen 4 cores, a plain walk over rows of weights at 38 (bench/gemv). The
// weights are copied once into rows of K, one per output, in huge-page storage; each thread takes an even part of
// the rows, so each row is summed alike on any number of threads.
#pragma once
#include <cstdint>
#include <memory>

#include "kernels/registry.h"

namespace npu {

// Weights from this size on go to the product here, smaller ones to oneDNN's matmul. In a net, where the layers
// between two inferences push the weights out of cache, ours took 0.68-0.96 of oneDNN's time on the 4-5 MB heads of
// MobileNet v2 and v3 and EfficientNet, and 1.3 on MobileNet v3 small's 2.4 MB layer (per-task timer, four
// interleaved runs of 40 inferences); bench/gemv has the larger layers.
constexpr int64_t kRowProductMinWeightBytes = 3 << 20;

// out = a x b (+ bias), a of shape (..., K) holding one row, b of shape (K, N), or (N, K) when `b_transposed`,
// all fp32, bias (N) fp32. False, with nothing written, for anything else (more rows, other dtypes, weights
// under kRowProductMinWeightBytes): the caller's path.
Result<bool> RunRowProduct(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out);

// The product itself, for tests and bench/gemv: y (N) = w (N rows of K) x (K) (+ bias when not null); w as fp32 or
// as fp16 (where every weight is an fp16 value, RunRowProduct keeps them so: half the bytes to read, the same sums).
void RowTimesWeightRows(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool);
void RowTimesWeightRows(const float* x, const uint16_t* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool);

}  // namespace npu
