#include "ir/dtype.h"

#include <array>
#include <utility>

namespace npu {
namespace {
struct DTypeInfo {
  DType t;
  std::string_view name;
  size_t size;
};
constexpr std::array kDTypes = {
    DTypeInfo{DType::kF32, "float32", 4}, DTypeInfo{DType::kF16, "float16", 2},
    DTypeInfo{DType::kBF16, "bfloat16", 2}, DTypeInfo{DType::kF64, "float64", 8},
    DTypeInfo{DType::kI8, "int8", 1},      DTypeInfo{DType::kI16, "int16", 2},
    DTypeInfo{DType::kI32, "int32", 4},    DTypeInfo{DType::kI64, "int64", 8},
    DTypeInfo{DType::kU8, "uint8", 1},     DTypeInfo{DType::kBool, "bool", 1},
};
constexpr std::array<std::pair<Format, std::string_view>, 7> kFormats = {{
    {Format::kNCHW, "NCHW"},
    {Format::kNHWC, "NHWC"},
    {Format::kND, "ND"},
    {Format::kNC1HWC0, "NC1HWC0"},
    {Format::kFractalZ, "FRACTAL_Z"},
    {Format::kHWCN, "HWCN"},
    {Format::kFractalNZ, "FRACTAL_NZ"},
}};
}  // namespace

size_t DTypeSize(DType t) {
  for (const auto& d : kDTypes)
    if (d.t == t) return d.size;
  return 0;
}
std::string_view DTypeName(DType t) {
  for (const auto& d : kDTypes)
    if (d.t == t) return d.name;
  return "undefined";
}
std::optional<DType> DTypeFromName(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.t;
  return std::nullopt;
}
std::optional<DType> DTypeFromGe(int32_t v) {
  for (const auto& d : kDTypes)
    if (static_cast<int32_t>(d.t) == v) return d.t;
  return std::nullopt;
}
bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64; }

std::string_view FormatName(Format f) {
  for (const auto& [k, n] : kFormats)
    if (k == f) return n;
  return "UNKNOWN";
}
std::optional<Format> FormatFromName(std::string_view name) {
  for (const auto& [k, n] : kFormats)
    if (n == name) return k;
  return std::nullopt;
}

}  // namespace npu
