// GCC 12 flags the AVX-512 intrinsics' _mm512_undefined operands as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "base/half.h"

#include <cmath>
#include <cstring>
#if defined(__F16C__) || defined(__AVX2__)
#include <immintrin.h>
#endif

namespace npu {

float HalfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t u;
  if (exp == 0) {
    if (mant == 0) {
      u = sign;
    } else {  // subnormal: renormalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      u = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ff) << 13;
    }
  } else if (exp == 31) {
    u = sign | 0x7f800000 | mant << 13;
  } else {
    u = sign | (exp + 112) << 23 | mant << 13;
  }
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  uint32_t abs = u & 0x7fffffff;
  if (abs > 0x7f800000) return sign | 0x7e00 | static_cast<uint16_t>((abs >> 13) & 0x1ff);  // NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds to >= 65520 -> inf
  if (abs < 0x38800000) {                        // result is subnormal or zero
    if (abs < 0x33000000) return sign;           // < 2^-25 rounds to 0
    uint32_t exp = abs >> 23;
    uint32_t mant = (abs & 0x7fffff) | 0x800000;
    uint32_t shift = 126 - exp;  // 14 + (113 - exp) ... shift so that result is in units of 2^-24
    uint32_t q = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) ++q;
    return sign | static_cast<uint16_t>(q);
  }
  uint32_t r = abs + 0xfff + ((abs >> 13) & 1);  // round to nearest even
  return sign | static_cast<uint16_t>((r - 0x38000000) >> 13);
}

uint16_t FloatToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

void HalfToFloat(std::span<const uint16_t> in, std::span<float> out) {
  size_t i = 0, n = in.size();
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out.data() + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in.data() + i))));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in.data() + i));
    _mm256_storeu_ps(out.data() + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

void FloatToHalf(std::span<const float> in, std::span<uint16_t> out) {
  size_t i = 0, n = in.size();
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.data() + i), _mm512_cvtps_ph(_mm512_loadu_ps(in.data() + i), _MM_FROUND_TO_NEAREST_INT));
#endif
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in.data() + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out.data() + i), h);
  }
#endif
  for (; i < n; ++i) out[i] = FloatToHalf(in[i]);
}

#if defined(__AVX2__)
namespace {
// Lanes whose value a rounding keeps: not below the limit in magnitude, NaN included (an unordered compare is true).
__m256 KeptLanes(__m256 x, float limit) {
  const __m256 magnitude = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_cmp_ps(magnitude, _mm256_set1_ps(limit), _CMP_NLT_UQ);
}

void NoteFirstKept(__m256 kept, size_t at, size_t none, size_t& first) {
  const int lanes = _mm256_movemask_ps(kept);
  if (lanes && first == none) first = at + static_cast<unsigned>(__builtin_ctz(lanes));
}
}  // namespace
#endif

size_t RoundToHalf(std::span<const float> in, std::span<float> out, float limit) {
  size_t i = 0, n = in.size(), first = n;
#if defined(__AVX512F__)
  const __m512 lim = _mm512_set1_ps(limit);
  for (; i + 16 <= n; i += 16) {
    __m512 x = _mm512_loadu_ps(in.data() + i);
    __m512 r = _mm512_cvtph_ps(_mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    // Lanes not below the limit, NaN included (an unordered compare is true), keep their value.
    __mmask16 kept = _mm512_cmp_ps_mask(_mm512_abs_ps(x), lim, _CMP_NLT_UQ);
    _mm512_storeu_ps(out.data() + i, _mm512_mask_blend_ps(kept, r, x));
    if (kept && first == n) first = i + static_cast<unsigned>(__builtin_ctz(kept));
  }
#endif
#if defined(__F16C__) && defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(in.data() + i);
    const __m256 r = _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT));
    const __m256 kept = KeptLanes(x, limit);
    _mm256_storeu_ps(out.data() + i, _mm256_blendv_ps(r, x, kept));
    NoteFirstKept(kept, i, n, first);
  }
#endif
  for (; i < n; ++i) {
    const float x = in[i];
    const bool keep = !(std::fabs(x) < limit);
    out[i] = keep ? x : HalfToFloat(FloatToHalf(x));
    if (keep && first == n) first = i;
  }
  return first;
}

size_t RoundToBF16(std::span<const float> in, std::span<float> out, float limit) {
  size_t i = 0, n = in.size(), first = n;
#if defined(__AVX2__)
  // The rounded lanes are finite (the others keep their value), so FloatToBF16's NaN case cannot arise: round
  // to nearest even on the bits, then clear the low half.
  const __m256i one = _mm256_set1_epi32(1), half_ulp = _mm256_set1_epi32(0x7fff), high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  for (; i + 8 <= n; i += 8) {
    const __m256 x = _mm256_loadu_ps(in.data() + i);
    const __m256i u = _mm256_castps_si256(x);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), one);
    const __m256 r = _mm256_castsi256_ps(_mm256_and_si256(_mm256_add_epi32(_mm256_add_epi32(u, half_ulp), odd), high));
    const __m256 kept = KeptLanes(x, limit);
    _mm256_storeu_ps(out.data() + i, _mm256_blendv_ps(r, x, kept));
    NoteFirstKept(kept, i, n, first);
  }
#endif
  for (; i < n; ++i) {
    const float x = in[i];
    const bool keep = !(std::fabs(x) < limit);
    out[i] = keep ? x : BF16ToFloat(FloatToBF16(x));
    if (keep && first == in.size()) first = i;
  }
  return first;
}

void BF16ToFloat(std::span<const uint16_t> in, std::span<float> out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = BF16ToFloat(in[i]);  // a shift: the compiler vectorises it
}

void FloatToBF16(std::span<const float> in, std::span<uint16_t> out) {
  for (size_t i = 0; i < in.size(); ++i) out[i] = FloatToBF16(in[i]);
}

}  // namespace npu
