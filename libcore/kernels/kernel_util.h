// Helpers shared by kernel families: dtype dispatch, fp16/bf16 widening, broadcasting strides.
// Kept small and template-light: only kernel .cc files include it.
#pragma once
#include <cstdint>
#include <type_traits>

#include "base/half.h"
#include "kernels/registry.h"
#include "ops/window.h"  // WindowGeometry: pooling and convolution kernels

namespace npu {

// Elements per parallel chunk of an elementwise loop.
constexpr int64_t kElementwiseGrain = 1 << 14;

// Calls f(T{}) with the C++ type for dtype t; returns false when the dtype is not in the list.
template <class F>
bool DispatchAll(DType t, F&& f) {
  switch (t) {
    case DType::kF32: f(float{}); return true;
    case DType::kF64: f(double{}); return true;
    case DType::kI32: f(int32_t{}); return true;
    case DType::kI64: f(int64_t{}); return true;
    case DType::kI8: f(int8_t{}); return true;
    case DType::kI16: f(int16_t{}); return true;
    case DType::kU8: f(uint8_t{}); return true;
    case DType::kBool: f(bool{}); return true;
    default: return false;
  }
}
template <class F>
bool DispatchFloat(DType t, F&& f) {
  switch (t) {
    case DType::kF32: f(float{}); return true;
    case DType::kF64: f(double{}); return true;
    default: return false;
  }
}

// Runs F32 or F64 by the dtype of input 0, for kernels that compute fp32 and fp64 in their own type (fp16/bf16
// arrive widened to fp32 by WithWidenedHalves); any other dtype is a clear failure.
template <Status (*F32)(KernelContext&), Status (*F64)(KernelContext&)>
Status ByFloatType(KernelContext& c) {
  DType t = c.in(0).dtype();
  if (t == DType::kF32) return F32(c);
  if (t == DType::kF64) return F64(c);
  return c.Fail("dtype " + std::string(DTypeName(t)) + " is not supported");
}

// fp16/bf16 tensors are widened to fp32 for computing and narrowed back afterwards
// (the reference numerics of a vector op computing in fp32).
Tensor ToF32(const Tensor& t);
Tensor FromF32(const Tensor& t, DType target);
bool IsHalfLike(DType t);
// Runs `body` with every fp16/bf16 input widened to fp32, then narrows float outputs back
// to the dtype of input 0 (or `out_type` when given).
Status WithWidenedHalves(KernelContext& c, const std::function<Status(KernelContext&)>& body);

// Row-major strides of a shape, and strides for reading `in` broadcast to `out` (0 where broadcast).
std::vector<int64_t> Strides(const Shape& s);
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out);
// Strides that walk the elements of a strided view of shape `from` (`strides`) in the same order as shape `to`:
// a reshape without a copy, as numpy makes one. Nullopt when it needs a copy (dims it merges are not evenly
// strided one inside the other), the element counts differ, or there are no elements.
std::optional<std::vector<int64_t>> ReshapedStrides(const Shape& from, const std::vector<int64_t>& strides, const Shape& to);

// Calls f(out_offset, in_offsets...) over all elements of `out`: the innermost dimension as a
// contiguous run of length `inner` with per-input inner strides (0 or 1), so callers vectorise it.
struct BroadcastPlan {
  Shape out;
  std::vector<std::vector<int64_t>> in_strides;  // per input, per dim
  int64_t inner = 1;                             // length of the innermost run
  std::vector<int64_t> inner_stride;             // per input: 0 or 1
  int64_t outer = 1;
};
BroadcastPlan MakeBroadcastPlan(const std::vector<const Shape*>& ins, const Shape& out);
// The outer rows of a plan from `row` on, in order: each input's offset at the current row, carried from one
// row to the next (finding them from the row number costs a division per dim per row: 2% of efficientnet_b0's
// time in its per-channel SE scales, whose rows are one pixel's channels).
class BroadcastRowWalk {
 public:
  BroadcastRowWalk(const BroadcastPlan& p, int64_t row);
  int64_t offset(size_t input) const { return offs_[input]; }
  void Next();

 private:
  const BroadcastPlan& p_;
  std::vector<int64_t> idx_;   // per outer dim
  std::vector<int64_t> offs_;  // per input
};

// Storage for a result of x's dtype, shape and memory order that a kernel writes element for element from x (each
// element read before its own is written): x's own bytes when no other tensor holds them, else new memory
// (Tensor::EmptyLike). The runtime hands a task the last reference to an intermediate that nothing after it reads
// (Session::RunTask), so a softmax, an elementwise op or a residual add writes over its input instead of into
// memory no cache holds (ONNX Runtime's MayInplace). The bits are the same either way. x must be the caller's to
// overwrite: a kernel's input (KernelContext holds them; RunKernel takes them by value) or a by-value parameter.
Tensor ResultOver(const Tensor& x);

// Casts between any supported dtypes (fp16/bf16 through fp32); returns x itself when no cast is needed.
Tensor CastTensor(const Tensor& x, DType to);

// Permutes dimensions (any dtype); shared by Transpose, Einsum and layout code.
Tensor TransposeTensor(const Tensor& x, const std::vector<int64_t>& perm, ThreadPool& pool);
// Batched row-major GEMM: c[b] = a[b] (m x k) * b[b] (k x n), a and b given per batch by the index maps.
// Float and double use Eigen; integer types a plain triple loop (rare in models).
Status MatMulTensors(KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out);

// Grows and returns a per-thread scratch buffer of at least n floats (reused across calls).
float* ThreadScratch(size_t n, int slot = 0);

}  // namespace npu
