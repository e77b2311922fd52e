// The fp32 product of a conv lowered to GEMM (kernels/conv.cc): out = w x col + bias, then the activation and the
// rounding it took (a ChunkFinish), in fixed tiles of results, each a one-thread oneDNN sgemm whose finish follows
// while it is in cache.
#pragma once
#include <cstdint>

#include "kernels/registry.h"

namespace npu {

// c[M x N] = a[M x K] x b, b being [K x N], or [N x K] when `b_transposed`, all row-major with the leading dims
// given, by oneDNN's sgemm on the calling thread alone: its sums then do not depend on the number of threads.
void SgemmOnThisThread(bool b_transposed, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda, const float* b,
                       int64_t ldb, float* c, int64_t ldc);

// out[M x cols] (rows `ld_out` apart) = w[M x K] (rows K apart) x col[K x cols] (rows `ld_col` apart) + bias[M]
// (may be null), then `finish` on each tile's rows, out[0][0] being element `first` of output 0. The tiles are the
// same on any thread count, and so are the bits.
void GemmBiasTiles(ThreadPool& pool, const float* w, const float* col, int64_t ld_col, const float* bias, float* out,
                   int64_t ld_out, int64_t M, int64_t K, int64_t cols, const ChunkFinish& finish, size_t first);

}  // namespace npu
