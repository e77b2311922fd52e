#include "ir/dtype.h"

#include <utility>

namespace npu {
namespace {
constexpr GeType kGeTypes[] = {
    {1, "float32", "<f4", 4, true, "DT_FLOAT"},     {2, "float16", "<f2", 2, true, "DT_FLOAT16"},
    {3, "int8", "|i1", 1, false, "DT_INT8"},        {4, "uint8", "|u1", 1, false, "DT_UINT8"},
    {5, "int16", "<i2", 2, false, "DT_INT16"},      {6, "uint16", "<u2", 2, false, "DT_UINT16"},
    {7, "int32", "<i4", 4, false, "DT_INT32"},      {8, "int64", "<i8", 8, false, "DT_INT64"},
    {9, "uint32", "<u4", 4, false, "DT_UINT32"},    {10, "uint64", "<u8", 8, false, "DT_UINT64"},
    {11, "bool", "|b1", 1, false, "DT_BOOL"},       {12, "float64", "<f8", 8, true, "DT_DOUBLE"},
    {27, "bfloat16", nullptr, 2, true, "DT_BF16"},
};
constexpr std::pair<Format, std::string_view> kFormats[] = {
    {Format::kNCHW, "NCHW"},        {Format::kNHWC, "NHWC"},           {Format::kND, "ND"},
    {Format::kNC1HWC0, "NC1HWC0"},  {Format::kFractalZ, "FRACTAL_Z"},  {Format::kHWCN, "HWCN"},
    {Format::kNDHWC, "NDHWC"},      {Format::kFractalNZ, "FRACTAL_NZ"}, {Format::kNCDHW, "NCDHW"},
    {Format::kNDC1HWC0, "NDC1HWC0"}, {Format::kNC1HWC0_C04, "NC1HWC0_C04"}, {Format::kFractalZ_C04, "FRACTAL_Z_C04"},
};
// DType's values are GE codes: the compute types are the table's rows whose code is a DType. uint64 holds the
// packed scales of quantized models (AscendDequant's deq_scale); no kernel computes in it otherwise.
constexpr DType kComputeTypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI8, DType::kI16,
                                   DType::kI32, DType::kI64, DType::kU8, DType::kBool, DType::kU64};
}  // namespace

const GeType* FindGeType(int32_t code) {
  for (const auto& t : kGeTypes)
    if (t.code == code) return &t;
  return nullptr;
}
const GeType* FindGeTypeByDescr(std::string_view descr) {
  for (const auto& t : kGeTypes)
    if (t.descr && descr == t.descr) return &t;
  return nullptr;
}

size_t DTypeSize(DType t) {
  const GeType* g = FindGeType(static_cast<int32_t>(t));
  return g ? g->size : 0;
}
std::string_view DTypeName(DType t) {
  const GeType* g = FindGeType(static_cast<int32_t>(t));
  return g && t != DType::kUndefined ? g->name : "undefined";
}
std::optional<DType> DTypeFromGe(int32_t v) {
  for (DType t : kComputeTypes)
    if (static_cast<int32_t>(t) == v) return t;
  return std::nullopt;
}
std::optional<DType> DTypeFromName(std::string_view name) {
  for (DType t : kComputeTypes)
    if (DTypeName(t) == name || FindGeType(static_cast<int32_t>(t))->ge_name == name) return t;
  return std::nullopt;
}
bool IsFloat(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64; }

std::string_view FormatName(Format f) { return FormatName(static_cast<int32_t>(f)); }
std::string_view FormatName(int32_t ge_code) {
  for (const auto& [k, n] : kFormats)
    if (static_cast<int32_t>(k) == ge_code) return n;
  return "FORMAT_UNKNOWN";
}
std::optional<Format> FormatFromName(std::string_view name) {
  for (const auto& [k, n] : kFormats)
    if (n == name) return k;
  return std::nullopt;
}

}  // namespace npu
