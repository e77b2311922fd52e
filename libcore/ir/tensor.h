// Tensor: dtype, shape, format and shared storage. Storage may alias a memory-mapped file
// (ONNX initializers, .om weights), so copying a Tensor never copies its bytes.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace npu {

using Shape = std::vector<int64_t>;
int64_t NumElements(const Shape& s);  // 1 for a scalar; -1 if any dim is unknown (< 0) or the count overflows
std::string ShapeToString(const Shape& s);  // "[1,3,224,224]"
// The most elements a tensor may have: 2^40 (4 TiB of fp32) is beyond any host this runs on, and keeps every
// byte count and stride computed from a checked shape far from int64 overflow.
constexpr int64_t kMaxTensorElements = int64_t{1} << 40;
// Why a shape from a flag or a file cannot be a tensor's (empty when it can): a dim above kMaxTensorElements
// or an element count above it, counting unknown (< 0) dims as 1.
std::string ShapeLimitProblem(const Shape& s);
// Bytes of a tensor of this shape, or nullopt when a dim is negative or the size does not fit in size_t
// (shapes read from files may claim anything: check before allocating or mapping).
std::optional<size_t> ByteSize(const Shape& s, size_t elem_size);

class Tensor {
 public:
  Tensor() = default;
  // Fresh zero-initialised storage.
  static Tensor Zeros(DType t, Shape shape);
  // Uninitialised storage (the caller writes every element).
  static Tensor Empty(DType t, Shape shape);
  // Uninitialised storage of `like`'s shape and memory order: for elementwise results.
  static Tensor EmptyLike(DType t, const Tensor& like);
  // Aliases existing bytes; `owner` keeps them alive. `data` must be aligned for the dtype.
  static Tensor View(DType t, Shape shape, std::shared_ptr<const void> owner, const void* data);
  // Aliases bytes at any alignment (an ONNX initializer in place in its mapped file: exporters pack them
  // back to back). Typed access copies them once to aligned storage that every copy of the tensor shares;
  // stored_bytes() reads them where they are, so a tool that only moves bytes (atc) never copies them.
  static Tensor ViewAnyAlignment(DType t, Shape shape, std::shared_ptr<const void> owner, const void* data);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return NumElements(shape_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype_); }
  bool defined() const { return dtype_ != DType::kUndefined; }
  Format format = Format::kND;
  // Host memory order of a 4-D value: false = row-major (N, C, H, W); true = channels last (N, H, W, C), while
  // shape() stays (N, C, H, W). Only kernels registered as taking it ever see such a tensor (see
  // kernels/channels_last.h); the runtime converts for every other reader.
  bool channels_last = false;

  // Typed and byte access: always 64-byte aligned storage.
  const std::byte* raw() const { return static_cast<const std::byte*>(realign_ ? AlignedCopy() : data_); }
  std::byte* mutable_raw() {
    if (realign_) [[unlikely]] Detach();
    return static_cast<std::byte*>(const_cast<void*>(data_));
  }
  template <class T>
  const T* data() const { return reinterpret_cast<const T*>(raw()); }
  template <class T>
  T* mutable_data() { return reinterpret_cast<T*>(mutable_raw()); }
  template <class T>
  std::span<const T> span() const { return {data<T>(), static_cast<size_t>(numel())}; }
  std::span<const std::byte> bytes() const { return {raw(), nbytes()}; }
  // The bytes where they are stored, at any alignment: for code that copies, hashes or writes them.
  std::span<const std::byte> stored_bytes() const { return {static_cast<const std::byte*>(data_), nbytes()}; }

  // Same bytes, new shape (numel must match); row-major (a channels-last tensor is converted before any reshape).
  // The rvalue form hands this tensor's reference on, so a sole owner's view stays the sole one (kernels' ResultOver).
  Tensor Reshaped(Shape shape) const&;
  Tensor Reshaped(Shape shape) &&;
  // The run of this tensor's bytes from `byte_offset` as a tensor of `shape`, sharing its storage (no copy);
  // undefined when the run does not start on the 64-byte boundary every tensor's storage keeps, or does not fit.
  Tensor Part(Shape shape, size_t byte_offset) const;
  // Deep copy into fresh storage.
  Tensor Clone() const;
  // Scalar/1-D integer tensor contents as int64 (any integer dtype).
  std::vector<int64_t> ToInt64Vector() const;
  std::vector<double> ToDoubleVector() const;
  // Keeps raw() and stored_bytes() alive.
  std::shared_ptr<const void> owner() const { return owner_; }
  // No other Tensor (view, copy, model weight) shares these bytes: writing them in place is safe.
  bool sole_owner() const { return owner_ && owner_.use_count() == 1; }

 private:
  struct Realign;  // a ViewAnyAlignment's aligned copy, made on first use (tensor.cc)
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  std::shared_ptr<const void> owner_;
  const void* data_ = nullptr;  // the stored bytes
  Realign* realign_ = nullptr;  // set when data_ is not aligned; owned by owner_

  const void* AlignedCopy() const;
  void Detach();  // points data_ at the aligned copy, for writing
};

}  // namespace npu
