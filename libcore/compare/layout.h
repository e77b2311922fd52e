// Device layouts back to framework layouts: NC1HWC0, FRACTAL_Z, NHWC, HWCN -> NCHW and FRACTAL_NZ -> ND,
// with the padding of the blocked formats cropped by the original shape (ir/device_format.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "dump/dump_file.h"

namespace npu {

struct LaidOut {
  std::vector<std::byte> bytes;
  std::vector<int64_t> shape;
};

// True when the tensor's format is one ConvertLayout turns back into NCHW/ND.
bool NeedsLayoutConversion(int format);
// The framework layout a device layout converts back to: ND for FRACTAL_NZ, else NCHW.
std::string_view NaturalLayout(int format);
// `target` is "NCHW" or "ND" (nullopt-like empty = the natural one). `original` is the framework shape;
// it defaults to the tensor's original_shape and is required for FRACTAL_Z and FRACTAL_NZ.
Result<LaidOut> ConvertLayout(const DumpTensor& t, size_t elem_size, std::string_view target,
                              std::span<const int64_t> original);

}  // namespace npu
