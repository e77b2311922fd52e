// The NPU's numerics in one place: the execution context every kernel sees (SoC, overflow mode), the float
// status word a task raises, and the one helper that narrows fp32 results to fp16/bf16 (with saturation).
#pragma once
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include "ir/tensor.h"
#include "soc/soc_spec.h"

namespace npu {

// Travels through Session::Run into every KernelContext, like ncnn's Option.
struct ExecContext {
  const SocSpec* soc = nullptr;  // nullptr: the fp32 reference path (IEEE results, no status word)
  OverflowMode overflow = OverflowMode::kInfNan;
  bool track_status = false;     // also scan fp32 results for Inf/NaN (overflow detection is on)

  bool saturate() const { return soc && overflow == OverflowMode::kSaturation; }
  static ExecContext ForSoc(const SocSpec* soc, bool track_status);
};

// What one task's float status word records (the AI Core's overflow flag, plus where it first fired).
struct FloatStatus {
  uint64_t out_of_range = 0;  // finite results the output dtype could not hold (saturated or turned to ±inf)
  uint64_t non_finite = 0;    // Inf/NaN results (an overflow only when the task's inputs were finite)
  int first_output = -1;      // the first recorded element: output index, flat index, value before saturation
  int64_t first_index = -1;
  float first_value = 0;

  bool any() const { return out_of_range || non_finite; }
  void Record(int output, int64_t index, float value);
  void Merge(const FloatStatus& other);  // another status of the same task: counts add, the first record stays
};

// Elements per parallel chunk of a 16-bit <-> fp32 conversion (memory-bound: big chunks).
constexpr size_t kConvertGrain = 1 << 16;
// Elements per parallel chunk of RoundToDTypeValues. Smaller: most results it rounds are a few hundred KB,
// and splitting those among the threads beats one thread streaming each (mobilenet_v3 at force_fp16 and
// 2 threads: 4.52 -> 4.35 ms against 1 << 16, interleaved A/B runs).
constexpr size_t kRoundGrain = 1 << 14;

// The overflow predicate: a finite fp32 value the target float dtype cannot represent (rounds past its
// largest finite value). Non-finite values are not range overflows; the runtime judges them by the inputs.
bool ExceedsRange(float v, DType to);
// The smallest magnitude that rounds past the 16-bit float dtype's largest finite value (to ±inf): that value plus
// half its ulp.
float RoundsToInfinity(DType to);
// Narrows an fp32 tensor to fp16/bf16 (round to nearest even). Out-of-range and non-finite elements are
// recorded in `status` as output `output`; under saturation they become ±max finite (NaN -> 0).
Tensor NarrowFloat(const Tensor& f32, DType to, const ExecContext& ctx, FloatStatus* status, int output = 0);
// NarrowFloat's values, kept in fp32 (what ToF32(NarrowFloat(..)) gives, in one pass): the runtime holds a
// 16-bit value this way between compute ops, which read fp32. Rounds in place when `f32` owns its bytes.
// `then`, when given, runs on each chunk of the rounded result right after it is rounded, while the chunk is in
// its thread's cache (the fused residual's add and activation): its arguments are the chunk and its first index.
using RoundedChunkFn = std::function<void(std::span<float>, size_t)>;
Tensor RoundToDTypeValues(Tensor f32, DType to, const ExecContext& ctx, FloatStatus* status, int output = 0,
                          const RoundedChunkFn* then = nullptr);
// RoundToDTypeValues on a span, in place, on the calling thread: a chunk of output `output` that starts at flat
// index `at`, its exceptions recorded in `status` when given (merge chunks with ChunkStatuses). Without a status,
// for a value no task reports (the Sigmoid of the SiLU pair, see kernels/registry.h SigmoidTimesInput).
void RoundValuesInPlace(std::span<float> v, DType to, const ExecContext& ctx, FloatStatus* status = nullptr, int64_t at = 0, int output = 0);
// The exception records of chunks settled on several threads, merged in the order of their first indices, so that
// the record keeps the first element, as one thread walking in order would.
class ChunkStatuses {
 public:
  void Add(size_t at, const FloatStatus& chunk);  // from any thread
  void MergeInto(FloatStatus& status);            // once the chunks are done
 private:
  std::mutex lock_;
  std::vector<std::pair<size_t, FloatStatus>> chunks_;
};
// The runtime's rounding of a task's 16-bit output 0 (RoundToDTypeValues), offered to the kernel that makes it: a
// kernel writing its result chunk by chunk rounds each chunk while it is in cache, instead of the runtime passing
// over the whole tensor again. The same values, and the exceptions merge in index order: the same record.
class ChunkRounding {
 public:
  ChunkRounding(DType to, const ExecContext& exec) : to_(to), exec_(exec) {}
  void Round(std::span<float> chunk, size_t at);  // output 0's elements [at, at + chunk.size()), from any thread
  DType to() const { return to_; }
  void MergeInto(FloatStatus& status) { statuses_.MergeInto(status); }

 private:
  DType to_;
  const ExecContext& exec_;
  ChunkStatuses statuses_;
};
// Whether any of `v` is Inf or NaN.
bool AnyNonFinite(std::span<const float> v);
// Applies the overflow mode to an fp32 result: records Inf/NaN and, under saturation, replaces them
// (±inf -> ±FLT_MAX, NaN -> 0; copies first when it must write). Only scans when the context needs it.
void SettleFloat32(Tensor& t, const ExecContext& ctx, FloatStatus* status, int output = 0);

}  // namespace npu
