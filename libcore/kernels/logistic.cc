// GCC 12 flags the AVX-512 intrinsics' _mm512_undefined operands as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include "kernels/logistic.h"

#include <algorithm>
#include <cstring>
#include <iterator>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define NPUKIT_LOGISTIC_AVX2 1
#else
#include <Eigen/Core>
#endif

namespace npu {
namespace {

#if NPUKIT_LOGISTIC_AVX2
// Why our own: Eigen's exp (range reduction, a degree-6 polynomial, a two-factor ldexp for its whole range) and
// the division took 0.80 ns per sigmoid and 0.84 per SiLU on a Zen 3 core, and efficientnet_b3 spent 19% of its
// time in its SiLU pass. This form takes 0.45-0.48 and 0.55-0.58 (bench/logistic, the same run): its exp needs
// only arguments <= 0 and results that are normal or zero.

// e^a = 2^n * e^r with n = round(a / ln 2) and r = a - n ln 2 in [-ln2/2, ln2/2]. ln 2 in two parts (Cody and
// Waite): the high part has 12 significant bits, so n * kLn2High is exact for |n| < 2^12.
constexpr float kLog2E = 1.44269504088896341f;
constexpr float kLn2High = 0.693145751953125f;          // 2839 / 4096
constexpr float kLn2Low = 1.4286068202862268e-06f;      // ln 2 - kLn2High
// e^r on [-ln2/2, ln2/2], degree 6, coefficients of the least-maximum relative error, fitted by us (Lawson's
// reweighted least squares on 4001 Chebyshev nodes, numpy): 1.9e-9 relative before fp32 rounding.
constexpr float kExpPoly[] = {1.000000001e+00f, 1.000000036e+00f, 4.999999208e-01f, 1.666642017e-01f,
                              4.166822558e-02f, 8.374815931e-03f, 1.383684578e-03f};
// Arguments are clamped here: round(-88 / ln 2) = -127 gives the exponent field 0, so a result that would be
// subnormal (a < -87.7) is exactly 0, with no compare; and n * kLn2High stays exact.
constexpr float kExpFloor = -88.0f;
constexpr int kExponentBias = 127, kMantissaBits = 23;
// n = round(a / ln 2) as (a * log2(e) + 1.5 * 2^23) - 1.5 * 2^23: the sum's ulp is 1, so its rounding is to the
// nearest integer (one fused multiply-add, no round instruction), and that integer sits in the sum's low mantissa
// bits, where adding the bias and shifting it into the exponent field makes 2^n (the shift drops the shift's bits).
constexpr float kRoundingShift = 12582912.0f;

// The instructions the form takes, in 8 lanes (AVX2) and in 16 (AVX-512, where Eigen's 16-lane exp form was faster
// than this one in 8: 0.29 against 0.43 ns per SiLU on a Zen 4 core). Each lane gets the same operations in both,
// so the same bits.
struct Avx2 {
  using V = __m256;
  static constexpr size_t kLanes = 8;
  static V Set(float f) { return _mm256_set1_ps(f); }
  static V Max(V a, V b) { return _mm256_max_ps(a, b); }
  static V Add(V a, V b) { return _mm256_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm256_sub_ps(a, b); }
  // 2^n from n + kRoundingShift (see there).
  static V Pow2Shifted(V t) {
    const __m256i biased = _mm256_add_epi32(_mm256_castps_si256(t), _mm256_set1_epi32(kExponentBias));
    return _mm256_castsi256_ps(_mm256_slli_epi32(biased, kMantissaBits));
  }
  static V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm256_div_ps(a, b); }
  static V Or(V a, V b) { return _mm256_or_ps(a, b); }
  static V MulAdd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V NegMulAdd(V a, V b, V c) { return _mm256_fnmadd_ps(a, b, c); }
  static V WhereSignSet(V sign_of, V then, V otherwise) { return _mm256_blendv_ps(otherwise, then, sign_of); }
  static V WhereNaN(V u, V then, V otherwise) { return _mm256_blendv_ps(otherwise, then, _mm256_cmp_ps(u, u, _CMP_UNORD_Q)); }
#if defined(__F16C__)
  static V RoundToHalf(V v) { return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
#endif
  // Whether every lane is below `limit` in magnitude (a NaN is not).
  static bool AllBelow(V v, V limit) {
    const V abs = _mm256_andnot_ps(Set(-0.0f), v);
    return _mm256_movemask_ps(_mm256_cmp_ps(abs, limit, _CMP_LT_OQ)) == 0xff;
  }
  static V Load(const float* p) { return _mm256_loadu_ps(p); }
  static void Store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // The tail through a zero-padded register.
  static V LoadPart(const float* p, size_t n) {
    float lanes[kLanes] = {};
    std::memcpy(lanes, p, n * sizeof(float));
    return Load(lanes);
  }
  static void StorePart(float* p, size_t n, V v) {
    float lanes[kLanes];
    Store(lanes, v);
    std::memcpy(p, lanes, n * sizeof(float));
  }
};

#if defined(__AVX512F__)
struct Avx512 {
  using V = __m512;
  static constexpr size_t kLanes = 16;
  static V Set(float f) { return _mm512_set1_ps(f); }
  static V Max(V a, V b) { return _mm512_max_ps(a, b); }
  static V Add(V a, V b) { return _mm512_add_ps(a, b); }
  static V Sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V Pow2Shifted(V t) {
    const __m512i biased = _mm512_add_epi32(_mm512_castps_si512(t), _mm512_set1_epi32(kExponentBias));
    return _mm512_castsi512_ps(_mm512_slli_epi32(biased, kMantissaBits));
  }
  static V Mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V Div(V a, V b) { return _mm512_div_ps(a, b); }
  static V Or(V a, V b) { return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(a), _mm512_castps_si512(b))); }
  static V MulAdd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V NegMulAdd(V a, V b, V c) { return _mm512_fnmadd_ps(a, b, c); }
  static V WhereSignSet(V sign_of, V then, V otherwise) {
    const __m512i sign = _mm512_castps_si512(Set(-0.0f));
    return _mm512_mask_blend_ps(_mm512_test_epi32_mask(_mm512_castps_si512(sign_of), sign), otherwise, then);
  }
  static V WhereNaN(V u, V then, V otherwise) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(u, u, _CMP_UNORD_Q), otherwise, then); }
  static V RoundToHalf(V v) { return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)); }
  static bool AllBelow(V v, V limit) { return _mm512_cmp_ps_mask(_mm512_abs_ps(v), limit, _CMP_LT_OQ) == 0xffff; }
  static V Load(const float* p) { return _mm512_loadu_ps(p); }
  static void Store(float* p, V v) { _mm512_storeu_ps(p, v); }
  static __mmask16 Lanes(size_t n) { return static_cast<__mmask16>((1u << n) - 1); }
  static V LoadPart(const float* p, size_t n) { return _mm512_maskz_loadu_ps(Lanes(n), p); }  // zeros beyond n
  static void StorePart(float* p, size_t n, V v) { _mm512_mask_storeu_ps(p, Lanes(n), v); }
};
using Widest = Avx512;
#else
using Widest = Avx2;
#endif

// e^a for a <= 0 (or NaN, which passes the clamp: max returns its second operand when either is NaN). `inline` on
// these templates is for GCC's heuristics: without it the loop called them, 0.34 ns per value instead of 0.28.
template <class Isa>
inline typename Isa::V ExpOfNonPositive(typename Isa::V a) {
  using V = typename Isa::V;
  a = Isa::Max(Isa::Set(kExpFloor), a);
  const V shifted = Isa::MulAdd(a, Isa::Set(kLog2E), Isa::Set(kRoundingShift));
  const V n = Isa::Sub(shifted, Isa::Set(kRoundingShift));
  V r = Isa::NegMulAdd(n, Isa::Set(kLn2High), a);
  r = Isa::NegMulAdd(n, Isa::Set(kLn2Low), r);
  constexpr int kDegree = static_cast<int>(std::size(kExpPoly)) - 1;
  V p = Isa::Set(kExpPoly[kDegree]);
  for (int k = kDegree - 1; k >= 0; --k) p = Isa::MulAdd(p, r, Isa::Set(kExpPoly[k]));
  return Isa::Mul(p, Isa::Pow2Shifted(shifted));
}

// sigmoid(u) of a register: e = e^-|u|, then 1 / (1 + e) where u >= 0 and e / (1 + e) where u's sign bit is set
// (-0 gives 0.5 either way); +-inf give 1 and 0. A NaN gives u itself, sign and payload: then x * sigmoid(x)
// is that NaN whichever operand the multiply takes it from, as the Mul kernel after a Sigmoid gives it.
template <class Isa>
inline typename Isa::V SigmoidOf(typename Isa::V u) {
  using V = typename Isa::V;
  const V one = Isa::Set(1.0f);
  const V e = ExpOfNonPositive<Isa>(Isa::Or(u, Isa::Set(-0.0f)));
  const V s = Isa::Div(Isa::WhereSignSet(u, e, one), Isa::Add(one, e));
  return Isa::WhereNaN(u, u, s);
}

// Applies `f` to x a register at a time; the tail goes through a zero-padded register, so that every value is
// computed by the same instructions wherever a chunk boundary falls.
template <class Isa, class F>
void MapRegisters(std::span<const float> x, std::span<float> y, F f) {
  const size_t n = x.size();
  size_t i = 0;
  for (; i + Isa::kLanes <= n; i += Isa::kLanes) Isa::Store(y.data() + i, f(Isa::Load(x.data() + i)));
  if (i < n) Isa::StorePart(y.data() + i, n - i, f(Isa::LoadPart(x.data() + i, n - i)));
}

template <class Isa>
void SigmoidIn(std::span<const float> x, std::span<float> y) {
  MapRegisters<Isa>(x, y, [](typename Isa::V v) { return SigmoidOf<Isa>(v); });
}

template <class Isa>
void SwishIn(std::span<const float> x, std::span<float> y, float alpha) {
  using V = typename Isa::V;
  if (alpha == 1.0f) {  // x * 1 is x: the same values without the multiply
    MapRegisters<Isa>(x, y, [](V v) { return Isa::Mul(v, SigmoidOf<Isa>(v)); });
    return;
  }
  const V a = Isa::Set(alpha);
  MapRegisters<Isa>(x, y, [a](V v) { return Isa::Mul(v, SigmoidOf<Isa>(Isa::Mul(v, a))); });
}

#if defined(__F16C__)
#define NPUKIT_HALF_SILU 1
// The SiLU pair on fp16 values in one walk (see HalfSiluWhileFinite): each step is the instruction its own pass
// runs (RoundToHalf's vcvtps2ph / vcvtph2ps, SigmoidOf, the Mul kernel's fp32 multiply), so the same bits. A
// register with a value not below the limit (or a NaN) stops it: the passes then settle what such values record.
template <class Isa, bool kRoundX>
size_t HalfSiluIn(std::span<const float> x, std::span<float> y, float limit) {
  using V = typename Isa::V;
  const V lim = Isa::Set(limit);
  // Two short loops over a block in L1: the rounded input and its sigmoid, then the sigmoid's rounding, the product
  // and its rounding. All of it in one loop made one long chain of dependent instructions per register, and the core
  // waited on it: efficientnet_b1 force_fp16's 33 convs with a SiLU after them took 1.00-1.01 of the time of the five
  // passes (per-task timer), and 0.94-0.95 in blocks.
  constexpr size_t kBlock = 1024;
  alignas(64) float x16[kBlock], s16[kBlock];
  const size_t n = x.size();
  for (size_t b = 0; b < n; b += kBlock) {
    const size_t m = std::min(kBlock, n - b);
    size_t i = 0;
    for (; i < m; i += Isa::kLanes) {
      const size_t lanes = std::min(Isa::kLanes, m - i);
      const V v = lanes == Isa::kLanes ? Isa::Load(x.data() + b + i) : Isa::LoadPart(x.data() + b + i, lanes);  // zeros beyond
      if (!Isa::AllBelow(v, lim)) break;
      const V r = kRoundX ? Isa::RoundToHalf(v) : v;
      Isa::Store(x16 + i, r);
      Isa::Store(s16 + i, SigmoidOf<Isa>(r));
    }
    for (size_t k = 0; k < i; k += Isa::kLanes) {
      const V p = Isa::RoundToHalf(Isa::Mul(Isa::Load(x16 + k), Isa::RoundToHalf(Isa::Load(s16 + k))));
      const size_t lanes = std::min(Isa::kLanes, m - k);
      if (lanes == Isa::kLanes) Isa::Store(y.data() + b + k, p);
      else Isa::StorePart(y.data() + b + k, lanes, p);
    }
    if (i < m) return b + i;
  }
  return n;
}
#endif
#else
using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
Eigen::Map<const ArrayF> In(std::span<const float> x) { return {x.data(), static_cast<Eigen::Index>(x.size())}; }
Eigen::Map<ArrayF> Out(std::span<float> y) { return {y.data(), static_cast<Eigen::Index>(y.size())}; }
#endif

}  // namespace

void SigmoidValues(std::span<const float> x, std::span<float> y) {
#if NPUKIT_LOGISTIC_AVX2
  SigmoidIn<Widest>(x, y);
#else
  Out(y) = (1 + (-In(x)).exp()).inverse();
#endif
}

void SwishValues(std::span<const float> x, std::span<float> y, float alpha) {
#if NPUKIT_LOGISTIC_AVX2
  SwishIn<Widest>(x, y, alpha);
#else
  const auto in = In(x);
  Out(y) = in * (1 + (-(in * alpha)).exp()).inverse();
#endif
}

size_t HalfSiluWhileFinite(std::span<const float> x, std::span<float> y, float limit, bool x_is_half) {
#if NPUKIT_LOGISTIC_AVX2 && NPUKIT_HALF_SILU
  return x_is_half ? HalfSiluIn<Widest, false>(x, y, limit) : HalfSiluIn<Widest, true>(x, y, limit);
#else
  (void)x, (void)y, (void)limit, (void)x_is_half;
  return 0;
#endif
}

bool LogisticSameInAnyChunk() {
#if NPUKIT_LOGISTIC_AVX2
  return true;
#else
  return false;  // Eigen's: a value's bits depend on whether it falls in a chunk's vectorised body or its tail
#endif
}

bool SigmoidAndSwishIn8Lanes(std::span<const float> x, std::span<float> sigmoid, std::span<float> swish, float alpha) {
#if NPUKIT_LOGISTIC_AVX2
  SigmoidIn<Avx2>(x, sigmoid);
  SwishIn<Avx2>(x, swish, alpha);
  return true;
#else
  (void)x, (void)sigmoid, (void)swish, (void)alpha;
  return false;
#endif
}

}  // namespace npu
