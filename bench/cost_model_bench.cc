// Evaluations of the cost model per second on one core (issue 12 asks >= 100k): every task of a
// resnet50-like mix of convolutions, matmuls and vector ops, each with its default tiling, on every SoC.
#include <chrono>
#include <cstdio>
#include <vector>

#include "cost/cost_model.h"

using namespace npu;

int main() {
  std::vector<Work> works;
  for (int64_t m : {12544, 3136, 784, 196, 49})
    for (int64_t k : {64, 576, 1152, 2304, 4608})
      for (int64_t n : {64, 256, 512, 2048}) {
        Work w;
        w.kind = WorkKind::kCube;
        w.m = m, w.k = k, w.n = n, w.a_bytes = m * k * 2, w.b_bytes = k * n * 2, w.in_bytes = w.a_bytes + w.b_bytes, w.out_bytes = m * n * 2;
        works.push_back(w);
        Work v;
        v.kind = WorkKind::kVector;
        v.elements = m * n, v.in_bytes = 4 * m * n, v.out_bytes = 2 * m * n;
        works.push_back(v);
      }
  std::vector<std::pair<Work, Tiling>> cases;
  for (const SocSpec& s : AllSocs())
    for (const Work& w : works) cases.emplace_back(w, DefaultTiling(w, s));
  double sink = 0;
  size_t evals = 0;
  auto t0 = std::chrono::steady_clock::now();
  double elapsed = 0;
  while (elapsed < 1.0) {
    size_t i = 0;
    for (const SocSpec& s : AllSocs())
      for (size_t k = 0; k < works.size(); ++k, ++i) sink += EstimateTask(cases[i].first, cases[i].second, s).duration_ns;
    evals += cases.size();
    elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  std::printf("cost model: %.0f task evaluations per second on one core (%zu evaluations; checksum %.3g)\n", evals / elapsed, evals, sink);
  return 0;
}
