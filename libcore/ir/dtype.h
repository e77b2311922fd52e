// Element types and tensor layouts. Numeric values of DType and Format follow the Ascend (GE) enums,
// so they can be written to .om and dump files unchanged.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace npu {

enum class DType : int32_t {
  kUndefined = 0,
  kF32 = 1,   // DT_FLOAT
  kF16 = 2,   // DT_FLOAT16
  kI8 = 3,
  kU8 = 4,
  kI16 = 5,
  kI32 = 7,
  kI64 = 8,
  kBool = 11,
  kF64 = 12,
  kBF16 = 27,
};

size_t DTypeSize(DType t);
std::string_view DTypeName(DType t);  // "float32", "float16", ... (numpy-style names)
std::optional<DType> DTypeFromName(std::string_view name);
std::optional<DType> DTypeFromGe(int32_t v);
bool IsFloat(DType t);

enum class Format : int32_t {
  kNCHW = 0,
  kNHWC = 1,
  kND = 2,
  kNC1HWC0 = 3,
  kFractalZ = 4,
  kHWCN = 16,
  kFractalNZ = 29,
};

std::string_view FormatName(Format f);  // "NCHW", "FRACTAL_Z", ...
std::optional<Format> FormatFromName(std::string_view name);

}  // namespace npu
