// The spatial geometry of a sliding-window op (Conv, pooling) from its ONNX attributes: shared by the
// schemas' inference and the kernels.
#pragma once
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct WindowGeometry {
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
};
// kernel: window sizes; reads strides/dilations/pads/auto_pad from the node. ceil_mode for pooling.
Result<WindowGeometry> ComputeWindow(const Node& n, const Shape& in_spatial, const std::vector<int64_t>& kernel,
                                     bool ceil_mode = false);

}  // namespace npu
