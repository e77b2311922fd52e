// What the kernel benchmarks (conv3x3, depthwise, gemv) share: their rounds argument, random inputs, and a kernel
// timed as the runtime runs it in a net (the task's state kept, a channels-last result), the median of its runs.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/registry.h"

namespace npu::bench {

// The benchmarks' one argument: interleaved rounds to run, 5 when not given.
inline int RoundsArg(int argc, char** argv) { return argc > 1 ? std::max(1, std::atoi(argv[1])) : 5; }

inline Tensor RandomTensor(Shape s, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Tensor t = Tensor::Empty(DType::kF32, std::move(s));
  for (float& v : std::span(t.mutable_data<float>(), static_cast<size_t>(t.numel()))) v = d(rng);
  return t;
}

inline double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Milliseconds per run of `node`, the median of `runs` after one more to build the task's state; `options` as the
// runtime offers them (its state and channels_last_out are set here), and `after` timed with each run (the
// runtime's work after the kernel).
inline double MedianKernelMs(const Node& node, const std::vector<Tensor>& ins, KernelRunOptions options, int runs, ThreadPool& pool,
                             const std::function<void(std::vector<Tensor>&)>& after = {}) {
  std::unique_ptr<KernelState> state;
  options.state = &state;
  options.channels_last_out = true;
  const ExecContext exec;
  std::vector<double> ms;
  for (int i = 0; i <= runs; ++i) {
    std::vector<Tensor> out;
    const auto t0 = std::chrono::steady_clock::now();
    if (!RunKernel(node, ins, out, pool, exec, nullptr, options).ok()) std::exit(1);
    if (after) after(out);
    if (i > 0) ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return Median(std::move(ms));
}

}  // namespace npu::bench
