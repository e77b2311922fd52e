// The shape rules of the data-movement and shape ops (Reshape, Slice, Split, Concat, Pad, ...): one function
// per rule, used by the op schemas' inference (ops/shape.cc) and by the kernels (kernels/shape_ops.cc), so
// the shape a graph promises and the shape a kernel makes cannot disagree.
#pragma once
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct SliceParams {
  Shape out;
  std::vector<int64_t> start, step;  // per input dim
};

struct PadParams {
  std::vector<int64_t> begin, end;
};

Result<Shape> ReshapeShape(const Node& n, const Shape& in, const std::vector<int64_t>& target);
std::vector<int64_t> TransposePerm(const Node& n, size_t rank);
// Slice's parameters from its attributes (opset < 10) or constant inputs (c[1..4]; null when not constant).
Result<SliceParams> SliceFor(const Node& n, const Shape& in, const std::vector<const Tensor*>& c);
Result<std::vector<int64_t>> SplitSizes(const Node& n, const Shape& in, const Tensor* split_input, size_t outputs);
Result<Shape> SqueezeShape(const Node& n, const Shape& in, const Tensor* axes_input);
Result<Shape> UnsqueezeShape(const Node& n, const Shape& in, const Tensor* axes_input);
Result<Shape> ConcatShape(const Node& n, const std::vector<const Shape*>& ins);
Result<Shape> GatherShape(const Node& n, const Shape& data, const Shape& idx);
Result<PadParams> PadFor(const Node& n, const Shape& in, const Tensor* pads_in, const Tensor* axes_in);
Shape FlattenShape(const Node& n, const Shape& in);
// ConfusionTransposeD (passes/fusion.cc): a Reshape to `shape` and a Transpose by `perm` in one op, the
// transpose first when transpose_first is set.
Result<Shape> ConfusionTransposeShape(const Node& n, const Shape& in);
// The values of ops whose result inference already knows (Constant, ConstantOfShape, Shape).
Tensor ConstantValue(const Node& n);
Tensor ConstantOfShapeValue(const Node& n, const std::vector<int64_t>& shape);
Tensor ShapeValue(const Node& n, const Shape& in);

}  // namespace npu
