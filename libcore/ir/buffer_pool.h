// BufferPool: storage for a session's activations, handed out most recently freed first.
//
// Why: a kernel writing a map of megabytes into memory no cache holds takes up to twice as long as writing memory
// written a moment ago (efficientnet_b2's 16 -> 96 channel 1x1 conv at 112x112: 0.42 ms into a cold buffer, 0.20 ms
// into a warm one, AVX-512 host). malloc serves a large request by best fit, which often finds an older, colder
// chunk; this pool gives a task's result the block the last freed map occupied. ONNX Runtime gets the same effect
// from planning its activations into one arena. Interleaved against malloc alone (AVX-512 host, 6-8 rounds of 20
// inferences a side, lower quartile): mnasnet1_0 0.92-0.96 of its time while the machine ran loaded and no
// difference while it ran quiet, efficientnet_b0 0.99, resnet50 and shufflenet_v2 unchanged; peak RSS unchanged.
#pragma once
#include <cstddef>
#include <memory>

namespace npu {

class BufferPool {
 public:
  // Smaller requests stay with malloc: its small bins already reuse recently freed chunks, and cheaply.
  static constexpr size_t kMinPooledBytes = 64 << 10;
  // A block is reused for a request of at least half its size: the pool never wastes more than the request.
  static constexpr size_t kMaxWasteFactor = 2;
  // The pool keeps up to this many times the bytes ever in use at once idle, and gives the oldest blocks back to
  // the heap beyond it. Repeated runs of one model settle at 1.1-2.3 times (mnasnet1_0, efficientnet_b0, fp32 and
  // fp16) and then take no fresh storage; at 1 times efficientnet_b0 kept taking a fifth of its blocks fresh from
  // malloc, which is what the pool is there to avoid. The bound stops a stream of changing shapes growing it.
  static constexpr size_t kMaxIdleFactor = 4;

  BufferPool();

  // Storage of at least `bytes` at `alignment`: the most recently returned block that fits (at most
  // kMaxWasteFactor times `bytes`), else fresh storage. It returns to this pool when its last owner lets go while the
  // pool lives, and to the heap after.
  std::shared_ptr<void> Take(size_t bytes, size_t alignment);

  size_t idle_bytes() const;    // held for reuse
  size_t in_use_bytes() const;  // handed out and not yet returned

  // While a Use lives, Tensor::Empty on this thread takes storage of kMinPooledBytes or more from the pool. Uses
  // nest; the innermost wins.
  class Use {
   public:
    explicit Use(BufferPool& pool);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

   private:
    BufferPool* outer_;
  };
  static BufferPool* current();  // this thread's pool, or null

 private:
  struct Shelf;  // the idle blocks and counts, shared with the deleters of the blocks handed out
  std::shared_ptr<Shelf> shelf_;
};

}  // namespace npu
