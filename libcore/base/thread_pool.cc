#include "base/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

namespace npu {

namespace {
thread_local bool t_in_worker = false;

int DefaultThreads() {
  for (const char* var : {"NPUKIT_NUM_THREADS", "OMP_NUM_THREADS"})
    if (const char* v = std::getenv(var))
      if (int n = std::atoi(v); n > 0) return n;
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

// One job at a time: workers grab chunk indices from an atomic counter until none are left.
struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable cv_start, cv_done;
  const std::function<void(size_t, size_t)>* fn = nullptr;
  size_t n = 0, chunk = 0, chunks = 0;
  std::atomic<size_t> next{0};
  size_t pending = 0;  // workers still inside the current job
  uint64_t generation = 0;
  bool stop = false;
  std::mutex job_mu;  // serialises concurrent ParallelFor callers

  void RunChunks() {
    for (size_t c; (c = next.fetch_add(1)) < chunks;) {
      size_t b = c * chunk, e = std::min(n, b + chunk);
      (*fn)(b, e);
    }
  }

  void WorkerLoop() {
    t_in_worker = true;
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu);
        cv_start.wait(lock, [&] { return stop || generation != seen; });
        if (stop) return;
        seen = generation;
      }
      RunChunks();
      std::lock_guard lock(mu);
      if (--pending == 0) cv_done.notify_one();
    }
  }
};

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)), impl_(std::make_unique<Impl>()) {
  for (int i = 1; i < threads_; ++i) impl_->workers.emplace_back([this] { impl_->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv_start.notify_all();
  for (auto& t : impl_->workers) t.join();
}

void ThreadPool::ParallelFor(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  grain = std::max<size_t>(grain, 1);
  size_t chunks = std::min<size_t>((n + grain - 1) / grain, static_cast<size_t>(threads_) * 4);
  if (chunks <= 1 || threads_ == 1 || t_in_worker) {
    fn(0, n);
    return;
  }
  std::lock_guard job(impl_->job_mu);
  Impl& s = *impl_;
  {
    std::lock_guard lock(s.mu);
    s.fn = &fn;
    s.n = n;
    s.chunk = (n + chunks - 1) / chunks;
    s.chunks = (n + s.chunk - 1) / s.chunk;
    s.next = 0;
    s.pending = s.workers.size();
    ++s.generation;
  }
  s.cv_start.notify_all();
  bool was_worker = t_in_worker;
  t_in_worker = true;  // nested ParallelFor inside fn runs inline
  s.RunChunks();
  t_in_worker = was_worker;
  std::unique_lock lock(s.mu);
  s.cv_done.wait(lock, [&] { return s.pending == 0; });
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool(DefaultThreads());
  return pool;
}

}  // namespace npu
