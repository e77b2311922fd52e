// MatMul's and Einsum's shape rules, shared by the schemas' inference (ops/matmul.cc) and the kernels.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

// numpy matmul: batch dims broadcast, 1-D operands promoted and their dim dropped again.
Result<Shape> MatMulShape(const Shape& a0, const Shape& b0);

// An Einsum equation: each operand's labels and the output's (implicit output spelled out).
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};

Result<EinsumSpec> ParseEinsum(std::string eq, const std::vector<const Tensor*>& ins);

}  // namespace npu
