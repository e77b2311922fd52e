// The convolution GEMM (C = W * B + bias, W a layer's weights) on resnet50's shapes, one thread: Eigen's general
// product (both operands packed per call, what conv.cc used before) against GemmPacked (W packed once, B packed
// per call). Prints GFLOP/s and the ratio; the best of several timed windows each.
#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/gemm.h"

namespace {

using Clock = std::chrono::steady_clock;
using MapRM = Eigen::Map<Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>;

template <class F>
double BestSeconds(F&& f) {
  double best = 1e9;
  for (int window = 0; window < 5; ++window) {
    int runs = 0;
    auto t0 = Clock::now();
    do {
      f();
      ++runs;
    } while (Clock::now() - t0 < std::chrono::milliseconds(60));
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / runs);
  }
  return best;
}

}  // namespace

int main() {
  if (!npu::HavePackedGemm()) {
    std::printf("gemm_bench: this build has no AVX-512 packed GEMM\n");
    return 0;
  }
  struct Shape {
    const char* layer;
    int64_t m, k, n;
  };
  // resnet50 at batch 1: {output channels, input channels x kernel taps, output pixels}
  const Shape shapes[] = {{"conv2 3x3", 64, 576, 3136},   {"conv2 1x1 up", 256, 64, 3136}, {"conv2 1x1 down", 64, 256, 3136},
                          {"conv3 3x3", 128, 1152, 784},  {"conv4 1x1", 256, 1024, 196},   {"conv4 3x3", 256, 2304, 196},
                          {"conv5 1x1 up", 2048, 512, 49}, {"conv5 3x3", 512, 4608, 49}};
  npu::ThreadPool pool(1);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::printf("%-16s %5s %5s %5s  %12s %12s %6s\n", "layer", "M", "K", "N", "Eigen GF/s", "packed GF/s", "ratio");
  for (const Shape& s : shapes) {
    std::vector<float> w(s.m * s.k), b(s.k * s.n), c(s.m * s.n), bias(s.m);
    for (auto* v : {&w, &b, &bias})
      for (float& x : *v) x = u(rng);
    npu::PackedWeights packed(w.data(), s.m, s.k);
    MapRM cm(c.data(), s.m, s.n), wm(w.data(), s.m, s.k), bm(b.data(), s.k, s.n);
    double eigen = BestSeconds([&] {
      for (int64_t r = 0; r < s.m; ++r) std::fill(c.begin() + r * s.n, c.begin() + (r + 1) * s.n, bias[r]);
      cm.noalias() += wm * bm;
    });
    double mine = BestSeconds([&] { npu::GemmPacked(pool, packed, b.data(), c.data(), s.n, bias.data()); });
    double gf = 2.0 * s.m * s.k * s.n / 1e9;
    std::printf("%-16s %5ld %5ld %5ld  %12.1f %12.1f %5.2fx\n", s.layer, s.m, s.k, s.n, gf / eigen, gf / mine, eigen / mine);
  }
}
