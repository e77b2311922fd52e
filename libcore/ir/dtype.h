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
  kU16 = 6,  // uint16/32: types files may hold (dumps, npy); npukit does not compute in them (uint64: quant scales)
  kI32 = 7,
  kI64 = 8,
  kU32 = 9,
  kU64 = 10,
  kBool = 11,
  kF64 = 12,
  kBF16 = 27,
};

// Every GE data type a file may hold (DType is the subset npukit computes in): its GE code, numpy-style
// name, .npy descr (bfloat16 has none) and size. The one table the .om, dump, npy and h5 codecs read.
struct GeType {
  int32_t code;
  const char* name;   // "float16", "bfloat16", "uint32", ...
  const char* descr;  // "<f2", ...; nullptr where numpy has no such type
  size_t size;
  bool is_float;
  std::string_view ge_name;  // "DT_FLOAT16": how CANN's JSON (atc --mode=1, AMCT records) spells it
};
const GeType* FindGeType(int32_t code);                 // nullptr: a code this build cannot decode
const GeType* FindGeTypeByDescr(std::string_view descr);  // "<f4" -> float32

size_t DTypeSize(DType t);
std::string_view DTypeName(DType t);  // "float32", "float16", ... (numpy-style names)
std::optional<DType> DTypeFromName(std::string_view name);  // "float16" or "DT_FLOAT16"
std::optional<DType> DTypeFromGe(int32_t v);
bool IsFloat(DType t);

enum class Format : int32_t {
  kNCHW = 0,
  kNHWC = 1,
  kND = 2,
  kNC1HWC0 = 3,
  kFractalZ = 4,
  kNC1HWC0_C04 = 12,
  kFractalZ_C04 = 13,
  kHWCN = 16,
  kNDHWC = 27,
  kFractalNZ = 29,
  kNCDHW = 30,
  kNDC1HWC0 = 32,
};

std::string_view FormatName(Format f);  // "NCHW", "FRACTAL_Z", ...; "FORMAT_UNKNOWN" for others
std::string_view FormatName(int32_t ge_code);  // the same for a code read from a file
std::optional<Format> FormatFromName(std::string_view name);

}  // namespace npu
