// The logistic function's throughput, one thread: npukit's SigmoidValues and SiluValues (kernels/logistic.h, the
// Sigmoid kernel, Swish and the runtime's SiLU pair) against Eigen's vectorised exp in 1 / (1 + e^-x), the form
// they replaced (and still use on hosts without AVX2), in the same run. Nanoseconds per element, best of 7
// rounds, on 16K values (in L1/L2) and 1M (L3), spread over [-8, 8].
// usage: logistic
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kernels/logistic.h"

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
  }
  return 0;
}
