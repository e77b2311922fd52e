#include "ops/window.h"

#include <algorithm>

namespace npu {

Result<WindowGeometry> ComputeWindow(const Node& n, const Shape& in_spatial, const std::vector<int64_t>& kernel,
                                     bool ceil_mode) {
  size_t r = in_spatial.size();
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = kernel;
  g.stride = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  g.dilation = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (kernel.size() != r || g.stride.size() != r || g.dilation.size() != r || pads.size() != 2 * r)
    return Status::Error("E10001", n.op_type + " node", n.name,
                         "kernel_shape/strides/dilations/pads do not match the " + std::to_string(r) + " spatial dims of the input");
  g.pad_begin.assign(pads.begin(), pads.begin() + static_cast<long>(r));
  g.pad_end.assign(pads.begin() + static_cast<long>(r), pads.end());
  g.out.resize(r);
  for (size_t i = 0; i < r; ++i) {
    if (g.stride[i] <= 0 || g.dilation[i] <= 0 || kernel[i] <= 0)
      return Status::Error("E10001", n.op_type + " node", n.name, "strides, dilations and kernel sizes must be positive");
    int64_t eff = (kernel[i] - 1) * g.dilation[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      g.out[i] = (g.in[i] + g.stride[i] - 1) / g.stride[i];
      int64_t total = std::max<int64_t>(0, (g.out[i] - 1) * g.stride[i] + eff - g.in[i]);
      int64_t small = total / 2;
      g.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (auto_pad == "VALID") g.pad_begin[i] = g.pad_end[i] = 0;
    int64_t span = g.in[i] + g.pad_begin[i] + g.pad_end[i] - eff;
    if (span < 0)
      return Status::Error("E10001", n.op_type + " node", n.name, "the window is larger than the padded input");
    g.out[i] = (ceil_mode ? (span + g.stride[i] - 1) / g.stride[i] : span / g.stride[i]) + 1;
    // With ceil_mode the last window must start inside the input or left padding.
    if (ceil_mode && (g.out[i] - 1) * g.stride[i] >= g.in[i] + g.pad_begin[i]) --g.out[i];
  }
  return g;
}

}  // namespace npu
