#include "kernels/numerics.h"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <utility>
#include <vector>

#include "base/half.h"
#include "base/thread_pool.h"

namespace npu {
namespace {

constexpr uint16_t kBF16ExpMask = 0x7F80, kBF16MaxFinite = 0x7F7F;  // bfloat16: exponent field, ~3.39e38
constexpr uint16_t kSignBit16 = 0x8000;

}  // namespace

bool ExceedsRange(float v, DType to) {
  if (!std::isfinite(v)) return false;
  if (to == DType::kF16) return (FloatToHalf(v) & kHalfExpMask) == kHalfExpMask;
  if (to == DType::kBF16) return (FloatToBF16(v) & kBF16ExpMask) == kBF16ExpMask;
  return false;
}

namespace {

// A 16-bit float dtype's value of `bits`, and its largest finite value.
float Widen16(DType to, uint16_t bits) { return to == DType::kF16 ? HalfToFloat(bits) : BF16ToFloat(bits); }
uint16_t MaxFinite16(DType to) { return to == DType::kF16 ? kHalfMaxFinite : kBF16MaxFinite; }
// The `to` value nearest v, in fp32.
float Round16(DType to, float v) { return Widen16(to, to == DType::kF16 ? FloatToHalf(v) : FloatToBF16(v)); }

}  // namespace

float RoundsToInfinity(DType to) {
  float max = Widen16(to, MaxFinite16(to));
  return max + (max - Widen16(to, MaxFinite16(to) - 1)) / 2;
}

namespace {

// Records an element of output `output` whose value `v` has no finite `to` value: out of range, or Inf/NaN.
void RecordException(FloatStatus* st, DType to, int output, int64_t index, float v) {
  if (!st) return;
  if (ExceedsRange(v, to)) ++st->out_of_range;
  else ++st->non_finite;
  st->Record(output, index, v);
}

// The exponent bits of a 16-bit float: all ones in an Inf or a NaN.
uint16_t ExponentMask16(DType to) { return to == DType::kF16 ? kHalfExpMask : kBF16ExpMask; }

// Whether a chunk of 16-bit values holds an exception (an all-ones exponent: Inf or NaN). Branch-free: it vectorises.
bool HasException16(std::span<const uint16_t> v, DType to) {
  const uint16_t exp_mask = ExponentMask16(to);
  uint16_t fewest_clear = exp_mask;  // min over the chunk of the exponent bits that are not set: 0 = a hit
  for (uint16_t x : v) fewest_clear = std::min(fewest_clear, static_cast<uint16_t>(~x & exp_mask));
  return fewest_clear == 0;
}

// Settles the non-finite 16-bit results of a bulk conversion from `start` (the first chunk holding one) on: each is
// recorded, and under saturation given the max finite value (NaN: 0).
void Settle16(std::span<const std::byte> src, std::span<uint16_t> dst, size_t start, DType to, const ExecContext& ctx, FloatStatus* st,
              int output) {
  const uint16_t exp_mask = ExponentMask16(to), max_finite = MaxFinite16(to);
  for (size_t i = start; i < dst.size(); ++i) {
    if ((dst[i] & exp_mask) != exp_mask) continue;
    float v;
    std::memcpy(&v, src.data() + i * sizeof(float), sizeof v);  // src is at any alignment (NarrowFloat)
    RecordException(st, to, output, static_cast<int64_t>(i), v);
    if (ctx.saturate()) dst[i] = std::isnan(v) ? 0 : static_cast<uint16_t>((dst[i] & kSignBit16) | max_finite);
  }
}

}  // namespace

ExecContext ExecContext::ForSoc(const SocSpec* soc, bool track_status) {
  ExecContext c;
  c.soc = soc;
  c.overflow = soc ? EffectiveOverflowMode(*soc) : OverflowMode::kInfNan;
  c.track_status = track_status;
  return c;
}

void FloatStatus::Merge(const FloatStatus& other) {
  out_of_range += other.out_of_range;
  non_finite += other.non_finite;
  if (other.first_output >= 0) Record(other.first_output, other.first_index, other.first_value);
}

void FloatStatus::Record(int output, int64_t index, float value) {
  if (first_output >= 0 && (output > first_output || (output == first_output && index >= first_index))) return;
  first_output = output;
  first_index = index;
  first_value = value;
}


Tensor NarrowFloat(const Tensor& f32, DType to, const ExecContext& ctx, FloatStatus* status, int output) {
  Tensor out = Tensor::EmptyLike(to, f32);
  auto n = static_cast<size_t>(f32.numel());
  // Read where the values are stored: a weight in place in its ONNX file (Tensor::ViewAnyAlignment) goes
  // through a small aligned buffer when it is not float-aligned, instead of being copied whole first.
  const std::span<const std::byte> in = f32.stored_bytes();
  const bool aligned = reinterpret_cast<uintptr_t>(in.data()) % alignof(float) == 0;
  std::span<uint16_t> o(out.mutable_data<uint16_t>(), n);
  auto narrow = [to](std::span<const float> from, std::span<uint16_t> into) {
    to == DType::kF16 ? FloatToHalf(from, into) : FloatToBF16(from, into);
  };
  // Each chunk is looked through for exceptions right after it is written, while in cache (a pass of its own over
  // the result after the conversion was a third of a network input's Cast to fp16: squeezenet1_1's 0.054 ms).
  std::atomic<size_t> first_hit{n};  // the lowest start of a chunk holding an exception, n: none
  ThreadPool::Global().ParallelFor(n, kConvertGrain, [&](size_t b, size_t e) {
    if (aligned) {
      narrow({reinterpret_cast<const float*>(in.data()) + b, e - b}, o.subspan(b, e - b));
    } else {
      constexpr size_t kBounce = 4096;
      alignas(64) float buffer[kBounce];
      for (size_t i = b; i < e; i += kBounce) {
        const size_t m = std::min(kBounce, e - i);
        std::memcpy(buffer, in.data() + i * sizeof(float), m * sizeof(float));
        narrow({buffer, m}, o.subspan(i, m));
      }
    }
    if (!HasException16(o.subspan(b, e - b), to)) return;
    size_t seen = first_hit.load();
    while (b < seen && !first_hit.compare_exchange_weak(seen, b)) {  // a failed exchange reloads `seen`
    }
  });
  if (first_hit.load() < n) Settle16(in, o, first_hit.load(), to, ctx, status, output);
  return out;
}

namespace {

// The elements of one chunk that RoundToHalf/BF16 left as they were (at or past `limit`, NaN included),
// from `from` on: each is counted and given its 16-bit value (±inf, NaN) or, under saturation, ±max finite
// (NaN -> 0); the first, at `from`, is recorded. `base` is the chunk's first flat index.
void SettleRounded(std::span<float> o, size_t from, int64_t base, float limit, DType to, const ExecContext& ctx, FloatStatus* st,
                   int output) {
  if (st) st->Record(output, base + static_cast<int64_t>(from), o[from]);  // nothing later in the chunk precedes it
  // Branch-free, so that the loop vectorises: a net whose activations pass the range has such elements by the
  // thousand. A finite value past the limit is out of range and rounds to ±inf, an infinity stays; under saturation
  // both become ±max finite. NaNs are left to the walk below (their 16-bit payload is Round16's).
  const float big = ctx.saturate() ? Widen16(to, MaxFinite16(to)) : std::numeric_limits<float>::infinity();
  uint64_t out_of_range = 0, non_finite = 0, nans = 0;
  for (size_t i = from; i < o.size(); ++i) {
    const float v = o[i];
    const bool past = !(std::fabs(v) < limit), finite = std::fabs(v) <= FLT_MAX, nan = v != v;
    out_of_range += past && finite;
    non_finite += past && !finite;
    nans += nan;
    o[i] = past && !nan ? std::copysign(big, v) : v;
  }
  if (st) {
    st->out_of_range += out_of_range;
    st->non_finite += non_finite;
  }
  for (size_t i = from; nans > 0 && i < o.size(); ++i)
    if (std::isnan(o[i])) {
      o[i] = ctx.saturate() ? 0.0f : Round16(to, o[i]);
      --nans;
    }
}

}  // namespace

Tensor RoundToDTypeValues(Tensor f32, DType to, const ExecContext& ctx, FloatStatus* status, int output, const RoundedChunkFn* then) {
  Tensor out = f32.sole_owner() ? f32 : Tensor::EmptyLike(DType::kF32, f32);
  auto n = static_cast<size_t>(f32.numel());
  const float* in = f32.data<float>();
  float* o = out.mutable_data<float>();
  auto round = to == DType::kF16 ? RoundToHalf : RoundToBF16;
  const float limit = RoundsToInfinity(to);
  // Results are almost always finite. Where they are not (a net whose activations pass the fp16 range), each
  // chunk settles its own elements past the limit into a status of its own; those are merged below in chunk
  // order, so the record keeps the first element, as one thread walking in order would.
  const size_t chunks = (n + kRoundGrain - 1) / kRoundGrain;
  ChunkStatuses settled;  // the chunks that had any
  ThreadPool::Global().ParallelFor(chunks, 1, [&](size_t cb, size_t ce) {
    for (size_t c = cb; c < ce; ++c) {
      size_t b = c * kRoundGrain, len = std::min(kRoundGrain, n - b);
      size_t first = round(std::span(in + b, len), std::span(o + b, len), limit);
      if (first < len) {
        FloatStatus chunk;
        SettleRounded(std::span(o + b, len), first, static_cast<int64_t>(b), limit, to, ctx, status ? &chunk : nullptr, output);
        if (status) settled.Add(b, chunk);
      }
      if (then) (*then)(std::span(o + b, len), b);
    }
  });
  if (status) settled.MergeInto(*status);
  return out;
}

void RoundValuesInPlace(std::span<float> v, DType to, const ExecContext& ctx, FloatStatus* status, int64_t at, int output) {
  const float limit = RoundsToInfinity(to);
  const size_t first = (to == DType::kF16 ? RoundToHalf : RoundToBF16)(v, v, limit);
  if (first < v.size()) SettleRounded(v, first, at, limit, to, ctx, status, output);
}

void ChunkRounding::Round(std::span<float> chunk, size_t at) {
  FloatStatus st;
  RoundValuesInPlace(chunk, to_, exec_, &st, static_cast<int64_t>(at));
  if (st.any()) statuses_.Add(at, st);
}

void ChunkStatuses::Add(size_t at, const FloatStatus& chunk) {
  std::lock_guard hold(lock_);
  chunks_.emplace_back(at, chunk);
}

void ChunkStatuses::MergeInto(FloatStatus& status) {
  std::sort(chunks_.begin(), chunks_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [at, chunk] : chunks_) status.Merge(chunk);
}

// Branch-free, so that the loop vectorises. An early exit at the first one kept a saturating SoC's fp32 results on
// one scalar pass each (11% of inception_v3 on Ascend310P3).
bool AnyNonFinite(std::span<const float> v) {
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t found = 0;
  for (float x : v) {
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    found |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  return found != 0;
}

void SettleFloat32(Tensor& t, const ExecContext& ctx, FloatStatus* status, int output) {
  if (!ctx.saturate() && !ctx.track_status) return;
  auto n = static_cast<size_t>(t.numel());
  const float* p = t.data<float>();
  // Results are almost always finite: look on every thread whether any element is not, before anything else.
  std::atomic<bool> any{false};
  ThreadPool::Global().ParallelFor(n, kRoundGrain, [&](size_t b, size_t e) {
    if (AnyNonFinite({p + b, e - b})) any.store(true, std::memory_order_relaxed);
  });
  if (!any.load()) return;
  size_t first = 0;
  while (first < n && std::isfinite(p[first])) ++first;
  if (ctx.saturate()) t = t.Clone();  // the result may alias a producer's tensor
  float* w = t.mutable_data<float>();
  for (size_t i = first; i < n; ++i) {
    if (std::isfinite(w[i])) continue;
    if (status) {
      ++status->non_finite;
      status->Record(output, static_cast<int64_t>(i), w[i]);
    }
    if (ctx.saturate()) w[i] = std::isnan(w[i]) ? 0.0f : std::copysign(FLT_MAX, w[i]);
  }
}

}  // namespace npu
