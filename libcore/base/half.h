// IEEE fp16 and bfloat16 storage types and bulk conversion (F16C fast path when compiled for it).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

namespace npu {

struct Half {
  uint16_t bits = 0;
};
struct BFloat16 {
  uint16_t bits = 0;
};

// binary16 bit patterns: the exponent field (all ones: inf/NaN), the largest finite magnitude (65504), the sign.
constexpr uint16_t kHalfExpMask = 0x7C00, kHalfMaxFinite = 0x7BFF, kHalfSignBit = 0x8000;
// What an fp16 overflow leaves in a tensor, in either SoC overflow mode: ±65504 (saturation) or ±inf.
// The one predicate behind msaccucmp's OverFlow column.
constexpr bool HalfOverflowed(uint16_t h) {
  uint16_t magnitude = h & ~kHalfSignBit;
  return magnitude == kHalfMaxFinite || magnitude == kHalfExpMask;
}

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);  // round to nearest even; overflow gives ±inf, NaN stays NaN
inline float BF16ToFloat(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  __builtin_memcpy(&f, &u, 4);
  return f;
}
uint16_t FloatToBF16(float f);  // round to nearest even, NaN preserved

void HalfToFloat(std::span<const uint16_t> in, std::span<float> out);
void FloatToHalf(std::span<const float> in, std::span<uint16_t> out);
void BF16ToFloat(std::span<const uint16_t> in, std::span<float> out);
void FloatToBF16(std::span<const float> in, std::span<uint16_t> out);
// The fp16 / bf16 value nearest each element (round to nearest even), kept in fp32: FloatToHalf then
// HalfToFloat in one pass, with no 16-bit copy. `out` may be `in`. An element whose magnitude is not below
// `limit` (NaN included) is copied as it is; the index of the first such element is returned, in.size() when
// there is none. With the limit past which values round to infinity, this is the rounding and the overflow
// check in one pass, and the elements left to settle are those at or past the limit from the returned index on.
size_t RoundToHalf(std::span<const float> in, std::span<float> out, float limit);
size_t RoundToBF16(std::span<const float> in, std::span<float> out, float limit);

}  // namespace npu
