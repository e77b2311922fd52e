// The logistic function's throughput, one thread: npukit's SigmoidValues and SiluValues (kernels/logistic.h, the
// Sigmoid kernel, Swish and the runtime's SiLU pair) against Eigen's vectorised exp in 1 / (1 + e^-x), the form
// they replaced (and still use on hosts without AVX2), in the same run. Nanoseconds per element, best of 7
// rounds, on 16K values (in L1/L2) and 1M (L3), spread over [-8, 8]. Then force_fp16's SiLU pair on an fp32 result
// (rounded, its sigmoid rounded, the product rounded): HalfSiluWhileFinite's walk against the five passes over 4K
// chunks it replaced (ChunkFinish: RoundToHalf, SigmoidValues, RoundToHalf, the multiply, RoundToHalf).
// usage: logistic
// GCC 12 flags the AVX-512 intrinsics' _mm512_undefined operands (Eigen's here) as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "base/half.h"
#include "kernels/logistic.h"
#include "kernels/numerics.h"

namespace {

using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;

void EigenSigmoid(std::span<const float> x, std::span<float> y) {
  const Eigen::Map<const ArrayF> in(x.data(), static_cast<Eigen::Index>(x.size()));
  Eigen::Map<ArrayF>(y.data(), in.size()) = (1 + (-in).exp()).inverse();
}

void EigenSilu(std::span<const float> x, std::span<float> y) {
  const Eigen::Map<const ArrayF> in(x.data(), static_cast<Eigen::Index>(x.size()));
  Eigen::Map<ArrayF>(y.data(), in.size()) = in * (1 + (-in).exp()).inverse();
}

// fp16's overflow threshold: the values here stay far below it.
const float kHalfLimit = npu::RoundsToInfinity(npu::DType::kF16);

void HalfSiluWalk(std::span<const float> x, std::span<float> y) { npu::HalfSiluWhileFinite(x, y, kHalfLimit); }

void HalfSiluPasses(std::span<const float> x, std::span<float> y) {
  constexpr size_t kChunk = 1 << 12;
  static std::vector<float> sig(kChunk);
  for (size_t at = 0; at < x.size(); at += kChunk) {
    const size_t n = std::min(kChunk, x.size() - at);
    const std::span<float> v = y.subspan(at, n), s(sig.data(), n);
    npu::RoundToHalf(x.subspan(at, n), v, kHalfLimit);
    npu::SigmoidValues(v, s);
    npu::RoundToHalf(s, s, kHalfLimit);
    for (size_t i = 0; i < n; ++i) v[i] *= s[i];
    npu::RoundToHalf(v, v, kHalfLimit);
  }
}

template <class F>
double NanosecondsPerElement(F f, std::span<const float> x, std::span<float> y) {
  constexpr size_t kElementsPerRound = size_t{1} << 26;
  const size_t calls = std::max<size_t>(1, kElementsPerRound / x.size());
  double best = 1e300;
  for (int round = 0; round < 7; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < calls; ++i) f(x, y);
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ns / static_cast<double>(calls * x.size()));
  }
  return best;
}

}  // namespace

int main() {
  for (size_t n : {size_t{1} << 14, size_t{1} << 20}) {
    std::vector<float> x(n), y(n);
    for (size_t i = 0; i < n; ++i) x[i] = 8.0f * std::sin(0.37f * static_cast<float>(i));
    const double s = NanosecondsPerElement(npu::SigmoidValues, x, y), es = NanosecondsPerElement(EigenSigmoid, x, y);
    const double silu = NanosecondsPerElement(npu::SiluValues, x, y), esilu = NanosecondsPerElement(EigenSilu, x, y);
    std::printf("logistic, %zu values: sigmoid %.3f ns (Eigen's exp form %.3f, %.2fx its time), SiLU %.3f ns (%.3f, %.2fx)\n", n, s, es,
                s / es, silu, esilu, silu / esilu);
    if (npu::HalfSiluWhileFinite(x, y, kHalfLimit) == n) {  // the walk is built on this host (AVX2, FMA, F16C)
      const double walk = NanosecondsPerElement(HalfSiluWalk, x, y), passes = NanosecondsPerElement(HalfSiluPasses, x, y);
      std::printf("logistic, %zu values: fp16 SiLU pair, one walk %.3f ns (five passes %.3f, %.2fx their time)\n", n, walk, passes, walk / passes);
    }
  }
  return 0;
}
