// A fixed pool of worker threads with a blocking parallel-for.
// Size: NPUKIT_NUM_THREADS, else OMP_NUM_THREADS, else the number of online CPUs.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>

namespace npu {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }
  // Calls fn(begin, end) over [0, n) split into chunks of at least `grain` items; returns when all are done.
  // Runs inline when there is only one chunk. Nested calls from a worker run inline too.
  void ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn);

  static ThreadPool& Global();

 private:
  struct Impl;
  int threads_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace npu
