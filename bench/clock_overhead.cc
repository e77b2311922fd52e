// What the simulated clock costs an inference when profiling is off (issue 14 bounds it at 2%): the schedule
// (cost model over every task) runs once per loaded model, and each inference only advances the clock. Both
// are timed here against one real inference of the same .om.
// usage: clock_overhead MODEL.om [RUNS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "runtime/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
double MedianMs(int runs, F&& f) {
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: clock_overhead MODEL.om [RUNS]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::max(3, std::atoi(argv[2])) : 15;
  auto loaded = npu::Session::FromOm(argv[1]);
  if (!loaded.ok()) {
    std::fprintf(stderr, "%s\n", loaded.status().message().c_str());
    return 1;
  }
  npu::Session s = std::move(loaded).value();
  if (!s.soc()) {
    std::fprintf(stderr, "%s has no SoC: nothing to schedule\n", argv[1]);
    return 1;
  }
  std::vector<npu::Tensor> inputs, outputs;
  for (int i : s.graph().inputs) inputs.push_back(npu::Tensor::Zeros(s.graph().values[i].dtype, s.graph().values[i].shape));
  const auto soc = std::shared_ptr<const npu::SocSpec>(std::shared_ptr<const npu::SocSpec>(), s.soc());  // built-in: not owned
  double schedule = MedianMs(runs, [&] { s.SetSoc(soc); });
  double clock = MedianMs(runs, [&] { (void)s.RunTiming(); });
  (void)s.Run(inputs, outputs);  // warm-up
  double inference = MedianMs(runs, [&] {
    if (!s.Run(inputs, outputs).ok()) std::abort();
  });
  std::printf("clock overhead (%s, %zu tasks): inference %.2f ms; schedule once per load %.3f ms (%.2f%% of one inference); "
              "clock per inference %.4f ms (%.3f%%)\n",
              argv[1], s.model().tasks.size(), inference, schedule, 100 * schedule / inference, clock, 100 * clock / inference);
  return 0;
}
