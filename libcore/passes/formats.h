// Device format assignment, after precision: cube ops on the AI Core read NC1HWC0 feature maps and FRACTAL_Z
// weights (conv) or FRACTAL_NZ operands (matmul), pooling and BN run in NC1HWC0, and elementwise ops keep
// whatever format their input arrives in when the other operands allow it. Where a value's format must
// change, a TransData node converts it (shared by every reader); constant weights are converted once at
// build time instead. Graph inputs and outputs keep their origin formats. See ir/device_format.h.
#pragma once
#include "base/status.h"
#include "ir/graph.h"
#include "soc/soc_spec.h"

namespace npu {

// `soc` decides which cube ops run on the AI Core (a cube without the dtype means AI CPU, origin formats).
// Net outputs leave in their origin format, except those `nc1hwc0_outputs` marks (by position: atc
// --is_output_adjust_hw_layout), which leave in NC1HWC0. `small_channel` (atc --enable_small_channel=1): a conv of
// at most 4 input channels that only a static AIPP feeds reads NC1HWC0_C04 and FRACTAL_Z_C04 weights, the AIPP
// writing C04; returns through `c04_convs` how many did.
Status AssignDeviceFormats(Graph& g, const SocSpec& soc, const std::vector<bool>& nc1hwc0_outputs = {},
                           bool small_channel = false, int* c04_convs = nullptr);

}  // namespace npu
