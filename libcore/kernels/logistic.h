// The logistic function's fp32 values, as the Sigmoid kernel, its in-place form, Swish and the runtime's SiLU pair
// (Sigmoid -> Mul, kernels/registry.h SigmoidTimesInput) all compute them: one function, so the same bits.
//
// On hosts with AVX2 and FMA, npukit's own vector form (logistic.cc; in 16 lanes with AVX-512, the same bits):
// sigmoid(x) = 1 / (1 + e^-|x|) for x >= 0 and e^-|x| / (1 + e^-|x|) below, so e^ never overflows; within 2 ulp of
// the exact value wherever that is an fp32 normal number, and each value is the same whatever chunk of a tensor it
// is computed in. Values below fp32's normal range (x < -87.7) are 0. Elsewhere Eigen's vectorised exp in
// 1 / (1 + e^-x).
#pragma once
#include <cstddef>
#include <span>

namespace npu {

// y = sigmoid(x); y may be x.
void SigmoidValues(std::span<const float> x, std::span<float> y);
// y = x * sigmoid(alpha * x) (Swish; torch's SiLU at alpha 1, where x * 1 is exact); y may be x.
void SwishValues(std::span<const float> x, std::span<float> y, float alpha = 1.0f);
// y = x * sigmoid(x): the Sigmoid's value, then the Mul's product.
inline void SiluValues(std::span<const float> x, std::span<float> y) { SwishValues(x, y, 1.0f); }

// torch's SiLU pair as force_fp16 runs it, on an fp16 result: x rounded to fp16 (its task's rounding), its sigmoid
// rounded to fp16 (the Sigmoid task's), their product rounded to fp16 (the Mul task's), in one walk over the values
// (blocks in L1) and with the bits of those passes. From the start of x, while every value is below `limit` in
// magnitude (RoundsToInfinity: then no rounding meets an Inf or a NaN, whose record the passes keep); returns how
// many values it wrote to y (y may be x), and the caller runs the passes on the rest. 0 where the form is not built
// (hosts without AVX2, FMA and F16C). `x_is_half`: x holds fp16 values already (the kernel that wrote them rounded
// them), so its rounding is skipped.
size_t HalfSiluWhileFinite(std::span<const float> x, std::span<float> y, float limit, bool x_is_half = false);

// True where each logistic value is the same whatever chunk of a tensor it is computed in (npukit's own form is
// built): then a pass may compute them on chunks of its own.
bool LogisticSameInAnyChunk();

// The AVX2 form's values, for tests: on an AVX-512 host the functions above run the same form in 16 lanes and must
// give these bits. False where the form is not built (hosts without AVX2 and FMA).
bool SigmoidAndSwishIn8Lanes(std::span<const float> x, std::span<float> sigmoid, std::span<float> swish, float alpha);

}  // namespace npu
