#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
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

// How long an idle OpenMP worker spins before it sleeps, in ms, unless KMP_BLOCKTIME says otherwise: long enough to
// span the gaps between an inference's regions (microseconds), short enough that a worker does not hold a core long
// after a burst of work ends (libomp's own default is 200 ms). A user's KMP_BLOCKTIME or OMP_WAIT_POLICY wins.
// Set at load, before the runtime's first region reads the environment.
constexpr const char* kIdleSpinMs = "1";
[[maybe_unused]] const bool kIdleSpinSet = std::getenv("OMP_WAIT_POLICY") || setenv("KMP_BLOCKTIME", kIdleSpinMs, /*overwrite=*/0) == 0;
}  // namespace

// The loops run on OpenMP's threads, the same ones oneDNN's convolutions run on (kernels/conv_dnnl.cc): two
// pools would each keep spinning threads between their own jobs and fight over the cores. The runtime is LLVM's
// libomp where installed (libcore/CMakeLists.txt says why), else libgomp. Both keep an idle worker spinning
// briefly before it sleeps, which is what hundreds of small loops per inference need. On a machine whose cores
// other jobs hold, that spin makes every barrier wait for a time slice: set OMP_WAIT_POLICY=passive there (the
// tests set KMP_BLOCKTIME=0 and GOMP_SPINCOUNT=1000). A build without OpenMP (clang's fuzz build) runs every loop
// on the calling thread.
ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {}

#ifdef _OPENMP
OneOpenMpThread::OneOpenMpThread() : threads_(omp_get_max_threads()) { omp_set_num_threads(1); }
OneOpenMpThread::~OneOpenMpThread() { omp_set_num_threads(threads_); }
#else
OneOpenMpThread::OneOpenMpThread() = default;
OneOpenMpThread::~OneOpenMpThread() = default;
#endif

void ThreadPool::ReleaseRuntimeInChild() {
#ifdef _OPENMP
  (void)omp_pause_resource_all(omp_pause_hard);  // OpenMP 5.0's full release; libgomp answers "not supported"
#endif
}

void ThreadPool::ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
#ifdef _OPENMP
  grain = std::max<size_t>(grain, 1);
  const size_t chunks = std::min<size_t>((n + grain - 1) / grain, static_cast<size_t>(threads_) * 4);
  if (chunks > 1 && threads_ > 1 && !omp_in_parallel()) {  // a nested call runs inline
    const size_t chunk = (n + chunks - 1) / chunks;
    const auto count = static_cast<int64_t>((n + chunk - 1) / chunk);
    // Chunks dealt out by one shared counter: the region's join is the only synchronisation (a worksharing
    // loop adds its own start and end barriers; bench/fork_join measures the difference).
    std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(threads_)
    for (int64_t c; (c = next.fetch_add(1, std::memory_order_relaxed)) < count;)
      fn(static_cast<size_t>(c) * chunk, std::min(n, static_cast<size_t>(c + 1) * chunk));
    return;
  }
#else
  (void)grain;
#endif
  fn(0, n);
}

void ThreadPool::SplitEvenly(size_t n, size_t min_parallel, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
#ifdef _OPENMP
  if (threads_ > 1 && n >= min_parallel && !omp_in_parallel()) {
#pragma omp parallel num_threads(threads_)
    {
      const auto t = static_cast<size_t>(omp_get_thread_num()), parts = static_cast<size_t>(omp_get_num_threads());
      const size_t begin = n * t / parts, end = n * (t + 1) / parts;
      if (begin < end) fn(begin, end);
    }
    return;
  }
#else
  (void)min_parallel;
#endif
  fn(0, n);
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool(DefaultThreads());
  return pool;
}

}  // namespace npu
