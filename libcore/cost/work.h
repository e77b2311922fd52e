// What one task asks of the hardware, independent of how it is tiled: the GEMM a cube op computes, the
// elements and instructions a vector op streams, the bytes either moves. Read from the graph at lowering.
#pragma once
#include <cstdint>

#include "ir/graph.h"
#include "ir/op_schema.h"

namespace npu {

enum class WorkKind : uint8_t {
  kView,    // Reshape/Flatten/Squeeze/...: a new view of the same bytes, no device task
  kCube,    // AI Core cube: batch x (M x K)·(K x N)
  kVector,  // AI Core vector: stream elements through the UB
  kAiCpu,   // AI CPU kernel
};

struct Work {
  WorkKind kind = WorkKind::kVector;
  DType dtype = DType::kF16;      // operand dtype of the cube / compute dtype of the vector unit
  DType out_dtype = DType::kF16;
  // Cube: batch independent GEMMs of M x K by K x N (conv as implicit GEMM: M = N·Ho·Wo, K = Cin/g·kh·kw,
  // N = Cout/g, batch = groups).
  int64_t batch = 1, m = 0, k = 0, n = 0;
  int64_t steps = 1;    // cube: that GEMM runs this many times one after another (an RNN's time steps)
  int64_t a_bytes = 0;  // cube: bytes of the A operand in GM (a conv reads its feature map once, im2col is in L1)
  int64_t b_bytes = 0;  // cube: bytes of B (the weights)
  bool b_shared = false;  // cube: every batch multiplies the same B (b_bytes is one copy): BatchMatMulV2 by 2-D weights
  // Vector: output elements and the vector instructions each costs (per 16-bit lane group, see cost_model.cc).
  int64_t elements = 0;
  double ops_per_element = 1;
  int64_t whole_items = 0;    // vector: the kernel splits only into whole items (AIPP: images); 0 = any split
  int64_t epilogue_ops = 0;   // cube: vector ops fused after the GEMM (bias, activation, residual)
  int64_t residual_bytes = 0; // cube: a residual tensor the epilogue adds (read through MTE2 into UB)
  int64_t in_bytes = 0, out_bytes = 0;  // all inputs read / outputs written, in GM
  int64_t weight_bytes = 0;             // the part of in_bytes that is constant (stays resident across runs)
  double flops = 0;                     // useful arithmetic (2 per MAC), for roofline and profiles
};

// The work of node `n` with the shapes and dtypes atc assigned (unknown dims count as 1), on `engine`.
Work DescribeWork(const Graph& g, const Node& n, Engine engine);
std::string_view WorkKindName(WorkKind k);

}  // namespace npu
