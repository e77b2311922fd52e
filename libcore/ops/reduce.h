// The reductions' shape rules (ReduceSum & co., ArgMax/ArgMin), shared by the schemas' inference
// (ops/reduce.cc) and the kernels.
#pragma once
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

// Axes from the input (ReduceSum since 13, all reductions since 18) or the attribute; empty = all axes
// unless noop_with_empty_axes.
Result<std::vector<bool>> ReducedAxes(const Node& n, int64_t rank, const Tensor* axes_input);
// The shape after reducing the axes marked in `red` (kept as 1 with keepdims).
Shape ReducedShape(const Shape& in, const std::vector<bool>& red, bool keep);
// The axes input moved from attribute to input in opset 13 for ReduceSum and in 18 for the others.
bool AxesIsInput(const Node& n);

}  // namespace npu
