// What one parallel loop costs beyond its work: ThreadPool::ParallelFor over as many one-element chunks as the
// pool has threads, each doing nothing, timed over many calls. Every oneDNN primitive and every one of npukit's
// parallel kernels pays this once per call, dozens to hundreds of times per inference.
// Prints the OpenMP runtime the build links (libcore/CMakeLists.txt: LLVM's libomp where installed, else
// libgomp; configure with -DNPUKIT_LIBOMP=OFF for libgomp) and the microseconds per loop, best of 5 rounds.
// usage: fork_join [CALLS]   (NPUKIT_NUM_THREADS: the pool's size, the number of online CPUs by default)
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "base/thread_pool.h"

int main(int argc, char** argv) {
  const long calls = argc > 1 ? std::max(1L, std::atol(argv[1])) : 100000;
  npu::ThreadPool& pool = npu::ThreadPool::Global();
  Dl_info where{};
  dladdr(reinterpret_cast<void*>(&omp_get_max_threads), &where);
  std::atomic<long> chunks{0};
  double best = 1e300;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i)
      pool.ParallelFor(static_cast<size_t>(pool.size()), 1, [&](size_t, size_t) { chunks.fetch_add(1, std::memory_order_relaxed); });
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / static_cast<double>(calls);
    best = std::min(best, us);
  }
  std::printf("fork and join of %d threads (%s): %.2f us per parallel loop, best of 5 rounds of %ld (%ld chunks run)\n",
              pool.size(), where.dli_fname ? where.dli_fname : "?", best, calls, chunks.load());
  return 0;
}
