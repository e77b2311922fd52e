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

// One job at a time: workers grab chunk indices from an atomic counter until none are left. A model runs
// hundreds of small parallel loops per inference, so waking sleeping workers through the kernel for each (tens
// of µs) would cost more than the loops: workers and the caller spin on atomics for a while first (kSpinRounds
// pause instructions, ~50-100 µs) and only then block on the condition variables.
constexpr int kSpinRounds = 20000;

inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

struct ThreadPool::Impl {
  std::vector<std::thread> workers;
  std::mutex mu;
  std::condition_variable cv_start, cv_done;
  const std::function<void(size_t, size_t)>* fn = nullptr;
  size_t n = 0, chunk = 0, chunks = 0;
  std::atomic<size_t> next{0};
  std::atomic<size_t> pending{0};      // workers still inside the current job
  std::atomic<uint64_t> generation{0};  // bumped (release) once a job's fields are set
  std::atomic<int> sleepers{0};        // workers blocked on cv_start
  std::atomic<bool> caller_sleeping{false};
  std::atomic<bool> stop{false};
  std::mutex job_mu;  // serialises concurrent ParallelFor callers

  void RunChunks() {
    for (size_t c; (c = next.fetch_add(1)) < chunks;) {
      size_t b = c * chunk, e = std::min(n, b + chunk);
      (*fn)(b, e);
    }
  }

  // Waits for a generation other than `seen`; false when the pool stops.
  bool AwaitJob(uint64_t seen) {
    for (int i = 0; i < kSpinRounds; ++i) {
      if (generation.load(std::memory_order_acquire) != seen) return !stop;
      Pause();
    }
    std::unique_lock lock(mu);
    sleepers.fetch_add(1);
    cv_start.wait(lock, [&] { return stop || generation.load(std::memory_order_acquire) != seen; });
    sleepers.fetch_sub(1);
    return !stop;
  }

  void WorkerLoop() {
    t_in_worker = true;
    uint64_t seen = 0;
    while (AwaitJob(seen)) {
      seen = generation.load(std::memory_order_acquire);
      RunChunks();
      // seq_cst on both sides (here and in AwaitWorkers): either this sees the caller asleep or the caller sees 0.
      if (pending.fetch_sub(1) == 1 && caller_sleeping.load()) {
        std::lock_guard lock(mu);
        cv_done.notify_one();
      }
    }
  }

  void AwaitWorkers() {
    for (int i = 0; i < kSpinRounds; ++i) {
      if (pending.load(std::memory_order_acquire) == 0) return;
      Pause();
    }
    std::unique_lock lock(mu);
    caller_sleeping.store(true);
    cv_done.wait(lock, [&] { return pending.load() == 0; });
    caller_sleeping.store(false);
  }
};

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)), impl_(std::make_unique<Impl>()) {
  for (int i = 1; i < threads_; ++i) impl_->workers.emplace_back([this] { impl_->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
    impl_->generation.fetch_add(1, std::memory_order_release);
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
  s.fn = &fn;
  s.n = n;
  s.chunk = (n + chunks - 1) / chunks;
  s.chunks = (n + s.chunk - 1) / s.chunk;
  s.next.store(0, std::memory_order_relaxed);
  s.pending.store(s.workers.size(), std::memory_order_relaxed);
  {
    std::lock_guard lock(s.mu);  // a worker between its last spin and its wait sees the bump under the lock
    s.generation.fetch_add(1, std::memory_order_release);
  }
  if (s.sleepers.load() > 0) s.cv_start.notify_all();
  bool was_worker = t_in_worker;
  t_in_worker = true;  // nested ParallelFor inside fn runs inline
  s.RunChunks();
  t_in_worker = was_worker;
  s.AwaitWorkers();
}

ThreadPool& ThreadPool::Global() {
  static ThreadPool pool(DefaultThreads());
  return pool;
}

}  // namespace npu
