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

}  // namespace npu
