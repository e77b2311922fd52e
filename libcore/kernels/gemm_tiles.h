// The fp32 product of a conv lowered to GEMM (kernels/conv.cc): out = w x col + bias, then an in-place activation,
// in fixed tiles of results, each a one-thread oneDNN sgemm whose bias and activation follow while it is in cache.
#pragma once
#include <cstdint>

#include "kernels/registry.h"

namespace npu {

// out[M x cols] (rows `ld_out` apart) = w[M x K] (rows K apart) x col[K x cols] (rows `ld_col` apart) + bias[M]
// (may be null), then `act` (may be null) on each tile's rows. The tiles are the same on any thread count, and so
// are the bits.
void GemmBiasTiles(ThreadPool& pool, const float* w, const float* col, int64_t ld_col, const float* bias, float* out,
                   int64_t ld_out, int64_t M, int64_t K, int64_t cols, const InPlaceFn* act);

}  // namespace npu
