// fp32 matrix products with a two-dimensional right operand (a transformer's projections, a CNN's
// classifier) on oneDNN's matmul, and int8 ones (int32 results), exact on every CPU: on its int8 kernels where they
// are exact (VNNI), elsewhere as fp32 products whose partial sums are integers below 2^24 (dnnl_engine.h). Why: Eigen packs the weights again on every call (11% of BERT-base's
// time); oneDNN's primitive takes them reordered once per session into its blocked layout, and adds the
// bias as it stores each result. Stacks of products of two activations (attention) go to its batched
// kernels too: Eigen's per-matrix GEMM took 1.9x their time on vit_b_16's 12 x 197 x 64 x 197 products.
#pragma once
#include "kernels/registry.h"

namespace npu {

// out = a x b (+ bias over the last dim), a of shape (..., M, K) with its leading dims folded into M, b of
// shape (K, N), or (N, K) when `b_transposed`; fp32, or int8 a and b with an int32 bias and result. False, with
// nothing written, when oneDNN does not take it (other dtypes, int8 past 8738 products per output, b not 2-D, a
// reference kernel only): the caller takes its own path.
Result<bool> RunDnnlMatMul(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out);

// out = a x b for stacks of fp32 matrices, a of shape (..., M, K) and b of shape (..., K, N) with the same
// leading dims (attention's products of two activations). False, with nothing written, where oneDNN does not
// take it (other dtypes, broadcast batches).
Result<bool> RunDnnlBatchedMatMul(KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out);

}  // namespace npu
