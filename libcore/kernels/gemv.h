// A fully connected layer at batch 1 (one row times 2-D weights) as npukit's own matrix-vector product. Such a
// layer does two flops per weight it reads, so its time is the time to stream its weights from memory once per
// inference: AlexNet's first classifier layer reads 151 MB. oneDNN's matmul (its brgemm kernel on a blocked
// layout) streamed it at 28 GB/s on two Zen 4 cores, a plain walk over rows of weights at 39 (bench/gemv). The
// weights are copied once into rows of K, one per output, in huge-page storage; each thread takes an even part of
// the rows, so each row is summed alike on any number of threads.
#pragma once
#include <cstdint>
#include <memory>

#include "kernels/registry.h"

namespace npu {

// Weights from this size on go to the product here. Smaller ones stay oneDNN's: on layers of 2-5 MB (the heads of
// MobileNet v3, EfficientNet and ViT) ours took 0.85-1.37 of its time, at 8 MB (ResNet's head) 0.77-0.98, from 16 MB
// on 0.67-0.82 (bench/gemv, two Zen 4 cores, three runs).
constexpr int64_t kRowProductMinWeightBytes = 6 << 20;

// out = a x b (+ bias), a of shape (..., K) holding one row, b of shape (K, N), or (N, K) when `b_transposed`,
// all fp32, bias (N) fp32. False, with nothing written, for anything else (more rows, other dtypes, weights
// under kRowProductMinWeightBytes): the caller's path.
Result<bool> RunRowProduct(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out);

// The product itself, for tests and bench/gemv: y (N) = w (N rows of K) x (K) (+ bias when not null); w as fp32 or
// as fp16 (where every weight is an fp16 value, RunRowProduct keeps them so: half the bytes to read, the same sums).
void RowTimesWeightRows(const float* x, const float* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool);
void RowTimesWeightRows(const float* x, const uint16_t* w, const float* bias, float* y, int64_t N, int64_t K, ThreadPool& pool);

}  // namespace npu
