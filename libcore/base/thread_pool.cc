#include "base/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace npu {

namespace {

int DefaultThreads() {
  for (const char* var : {"NPUKIT_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = std::getenv(var))
      if (int n = std::atoi(v); n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

// The loops run on OpenMP's threads, the same ones oneDNN's convolutions run on (kernels/conv_dnnl.cc): two
// pools would each keep spinning threads between their own jobs and fight over the cores. libgomp keeps its
// threads spinning briefly between parallel regions before they sleep (less when the cores are oversubscribed),
// which is what hundreds of small loops per inference need. On a machine whose cores other jobs hold, that spin
// makes every barrier wait for a time slice: set OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT=1000 there
// (the tests do). A build without OpenMP (clang's fuzz build) runs every loop on the calling thread.
ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {}

void ThreadPool::ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
#ifdef _OPENMP
  grain = std::max<size_t>(grain, 1);
  const size_t chunks = std::min<size_t>((n + grain - 1) / grain, static_cast<size_t>(threads_) * 4);
  if (chunks > 1 && threads_ > 1 && !omp_in_parallel()) {  // a nested call runs inline
    const size_t chunk = (n + chunks - 1) / chunks;
    const auto count = static_cast<int64_t>((n + chunk - 1) / chunk);
#pragma omp parallel for num_threads(threads_) schedule(dynamic, 1)
    for (int64_t c = 0; c < count; ++c) fn(static_cast<size_t>(c) * chunk, std::min(n, static_cast<size_t>(c + 1) * chunk));
    return;
  }
#else
  (void)grain;
#endif
  fn(0, n);
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool(DefaultThreads());
  return pool;
}

}  // namespace npu
