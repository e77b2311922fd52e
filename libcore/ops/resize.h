// Resize's and Upsample's output shape and scales, shared by the schema's inference (ops/resize.cc) and the kernel.
#pragma once
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct ResizeParams {
  Shape out;
  std::vector<double> scales;
  std::vector<double> roi;  // [starts..., ends...] for tf_crop_and_resize
};

// Scales or sizes from the inputs (Resize >= 11: X, roi, scales, sizes; Resize-10 and Upsample-9: X, scales;
// Upsample-7: attribute `scales`).
Result<ResizeParams> ResizeParamsFor(const Node& n, const Shape& in, const std::vector<const Tensor*>& ins);

}  // namespace npu
