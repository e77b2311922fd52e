// A blocking parallel-for over a fixed number of threads (OpenMP's; see thread_pool.cc).
// Size: NPUKIT_NUM_THREADS, else OMP_NUM_THREADS, else the number of online CPUs.
#pragma once
#include <cstddef>
#include <functional>

namespace npu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);

  int size() const { return threads_; }
  // Calls fn(begin, end) over [0, n) split into chunks of at least `grain` items; returns when all are done.
  // Runs inline when there is only one chunk. Nested calls from a worker run inline too.
  void ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn);
  // Calls fn(begin, end) once on each thread t with the t-th of size() even parts of [0, n), as OpenMP's static
  // schedule deals a oneDNN primitive's work: a pass over its result then reads what the same core wrote. Runs
  // inline when n < min_parallel or when nested.
  void SplitEvenly(size_t n, size_t min_parallel, const std::function<void(size_t, size_t)>& fn);

  static ThreadPool& Global();

  // For a forked child about to _exit: hands back what the OpenMP runtime holds outside the process. libomp
  // registers each process it runs in, a forked child too, by a file in /dev/shm that only its shutdown removes,
  // and _exit skips that shutdown, so every child would leave one file behind.
  static void ReleaseRuntimeInChild();

 private:
  int threads_;
};

// While alive, the OpenMP regions the calling thread opens run on that thread alone; the count before comes back
// at its end. For oneDNN, whose primitives plan their split for the threads they see and whose sgemm would take
// every thread outside a parallel region (kernels/conv_winograd.cc, kernels/gemm_tiles.cc).
class OneOpenMpThread {
 public:
  OneOpenMpThread();
  ~OneOpenMpThread();
  OneOpenMpThread(const OneOpenMpThread&) = delete;
  OneOpenMpThread& operator=(const OneOpenMpThread&) = delete;

 private:
  int threads_ = 1;
};

}  // namespace npu
