#include "ir/buffer_pool.h"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace npu {

namespace {
thread_local BufferPool* current_pool = nullptr;

struct Block {
  void* data;
  size_t bytes;
  size_t alignment;
};

void FreeBlock(const Block& b) { ::operator delete(b.data, std::align_val_t(b.alignment)); }
}  // namespace

// Locked: a block's last owner may let go on any thread (a caller's copy of an output, a kernel's worker).
struct BufferPool::Shelf {
  mutable std::mutex mu;
  std::vector<Block> idle;  // oldest first
  size_t idle_bytes = 0;
  size_t in_use_bytes = 0;
  size_t peak_in_use_bytes = 0;

  ~Shelf() {
    for (const Block& b : idle) FreeBlock(b);
  }

  void Return(const Block& b) {
    std::lock_guard lock(mu);
    in_use_bytes -= b.bytes;
    idle.push_back(b);
    idle_bytes += b.bytes;
    size_t oldest = 0;
    for (; idle_bytes > kMaxIdleFactor * peak_in_use_bytes; ++oldest) {
      idle_bytes -= idle[oldest].bytes;
      FreeBlock(idle[oldest]);
    }
    idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(oldest));
  }

  // The most recently returned block of `alignment` that holds `bytes` without wasting more than it, taken off the
  // shelf; or a block with null data.
  Block TakeIdle(size_t bytes, size_t alignment) {
    std::lock_guard lock(mu);
    auto fits = [&](const Block& b) {
      return b.alignment == alignment && b.bytes >= bytes && b.bytes <= kMaxWasteFactor * bytes;
    };
    auto it = std::find_if(idle.rbegin(), idle.rend(), fits);
    if (it == idle.rend()) return {};
    Block b = *it;
    idle.erase(std::next(it).base());
    idle_bytes -= b.bytes;
    Count(b.bytes);
    return b;
  }

  void Count(size_t bytes) {
    in_use_bytes += bytes;
    peak_in_use_bytes = std::max(peak_in_use_bytes, in_use_bytes);
  }
};

BufferPool::BufferPool() : shelf_(std::make_shared<Shelf>()) {}

std::shared_ptr<void> BufferPool::Take(size_t bytes, size_t alignment) {
  Block b = shelf_->TakeIdle(bytes, alignment);
  if (!b.data) {
    b = {::operator new(bytes, std::align_val_t(alignment)), bytes, alignment};
    std::lock_guard lock(shelf_->mu);
    shelf_->Count(bytes);
  }
  return std::shared_ptr<void>(b.data, [b, shelf = std::weak_ptr<Shelf>(shelf_)](void*) {
    if (auto s = shelf.lock())
      s->Return(b);
    else
      FreeBlock(b);
  });
}

size_t BufferPool::idle_bytes() const {
  std::lock_guard lock(shelf_->mu);
  return shelf_->idle_bytes;
}

size_t BufferPool::in_use_bytes() const {
  std::lock_guard lock(shelf_->mu);
  return shelf_->in_use_bytes;
}

BufferPool::Use::Use(BufferPool& pool) : outer_(current_pool) { current_pool = &pool; }
BufferPool::Use::~Use() { current_pool = outer_; }
BufferPool* BufferPool::current() { return current_pool; }

}  // namespace npu
