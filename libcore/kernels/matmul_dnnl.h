// fp32 matrix products with a two-dimensional right operand (a transformer's projections, a CNN's
// classifier) on oneDNN's matmul, and int8 ones (int32 results) where its int8 kernels are exact. Why: Eigen packs the weights again on every call (11% of BERT-base's
// time); oneDNN's primitive takes them reordered once per session into its blocked layout, and adds the
// bias as it stores each result.
#pragma once
#include "kernels/registry.h"

namespace npu {

// out = a x b (+ bias over the last dim), a of shape (..., M, K) with its leading dims folded into M, b of
// shape (K, N), or (N, K) when `b_transposed`; fp32, or int8 a and b with an int32 bias and result. False, with
// nothing written, when oneDNN does not take it (other dtypes, inexact int8, b not 2-D, a reference kernel
// only): the caller takes its own path.
Result<bool> RunDnnlMatMul(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out);

}  // namespace npu
