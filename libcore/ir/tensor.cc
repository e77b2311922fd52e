#include "ir/tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>

#include "base/half.h"
#include "ir/buffer_pool.h"

namespace npu {

int64_t NumElements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return -1;
  return n;
}

std::string ShapeLimitProblem(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d > kMaxTensorElements) return "dim " + std::to_string(d) + " exceeds the limit of " + std::to_string(kMaxTensorElements) + " elements";
    if (d > 0 && (__builtin_mul_overflow(n, d, &n) || n > kMaxTensorElements))
      return "the element count of " + ShapeToString(s) + " exceeds the limit of " + std::to_string(kMaxTensorElements);
  }
  return {};
}

std::optional<size_t> ByteSize(const Shape& s, size_t elem_size) {
  size_t n = elem_size;
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n)) return std::nullopt;
  return n;
}

std::string ShapeToString(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {
// Aligned so vector kernels and the .om weight layout agree.
constexpr size_t kTensorAlign = 64;
std::shared_ptr<void> AllocAligned(size_t n) {
  size_t bytes = std::max(kTensorAlign, (n + kTensorAlign - 1) / kTensorAlign * kTensorAlign);
  if (BufferPool* pool = BufferPool::current(); pool && bytes >= BufferPool::kMinPooledBytes)
    return pool->Take(bytes, kTensorAlign);
  void* p = ::operator new(bytes, std::align_val_t(kTensorAlign));
  return std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(kTensorAlign)); });
}
}  // namespace

Tensor Tensor::Empty(DType t, Shape shape) {
  Tensor x;
  x.dtype_ = t;
  x.shape_ = std::move(shape);
  auto mem = AllocAligned(x.nbytes());
  x.data_ = mem.get();
  x.owner_ = std::move(mem);
  return x;
}

Tensor Tensor::EmptyLike(DType t, const Tensor& like) {
  Tensor x = Empty(t, like.shape_);
  x.channels_last = like.channels_last;
  return x;
}

Tensor Tensor::Zeros(DType t, Shape shape) {
  Tensor x = Empty(t, std::move(shape));
  std::memset(x.mutable_raw(), 0, x.nbytes());
  return x;
}

Tensor Tensor::Part(Shape shape, size_t byte_offset) const {
  const std::optional<size_t> size = ByteSize(shape, DTypeSize(dtype_));
  if (!size || byte_offset > nbytes() || *size > nbytes() - byte_offset) return Tensor();
  const std::byte* start = raw() + byte_offset;
  if (reinterpret_cast<uintptr_t>(start) % kTensorAlign != 0) return Tensor();
  return View(dtype_, std::move(shape), owner_, start);
}

Tensor Tensor::View(DType t, Shape shape, std::shared_ptr<const void> owner, const void* data) {
  Tensor x;
  x.dtype_ = t;
  x.shape_ = std::move(shape);
  x.owner_ = std::move(owner);
  x.data_ = data;
  return x;
}

struct Tensor::Realign {
  std::shared_ptr<const void> source_owner;
  const void* source;
  size_t size;
  std::once_flag once;
  std::shared_ptr<void> copy;
};

Tensor Tensor::ViewAnyAlignment(DType t, Shape shape, std::shared_ptr<const void> owner, const void* data) {
  Tensor x = View(t, std::move(shape), std::move(owner), data);
  if (reinterpret_cast<uintptr_t>(data) % kTensorAlign == 0) return x;
  auto r = std::make_shared<Realign>();
  r->source_owner = std::move(x.owner_);
  r->source = data;
  r->size = x.nbytes();
  x.realign_ = r.get();
  x.owner_ = std::move(r);
  return x;
}

const void* Tensor::AlignedCopy() const {
  Realign& r = *realign_;
  std::call_once(r.once, [&r] {
    r.copy = AllocAligned(r.size);
    if (r.size) std::memcpy(r.copy.get(), r.source, r.size);
  });
  return r.copy.get();
}

void Tensor::Detach() {
  data_ = AlignedCopy();
  realign_ = nullptr;  // owner_ still holds the copy
}

Tensor Tensor::Reshaped(Shape shape) const& { return Tensor(*this).Reshaped(std::move(shape)); }

Tensor Tensor::Reshaped(Shape shape) && {
  Tensor x = std::move(*this);
  x.shape_ = std::move(shape);
  x.channels_last = false;
  return x;
}

Tensor Tensor::Clone() const {
  Tensor x = EmptyLike(dtype_, *this);
  x.format = format;
  if (nbytes()) std::memcpy(x.mutable_raw(), data_, nbytes());  // the stored bytes: no aligned copy made first
  return x;
}

namespace {
template <class T>
void AppendAs(const Tensor& t, auto& out) {
  using Out = typename std::decay_t<decltype(out)>::value_type;
  const T* p = t.data<T>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    if constexpr (std::is_floating_point_v<T> && std::is_integral_v<Out>) {
      // A float where an integer was due (a damaged model): clamped, NaN as 0, never an out-of-range conversion.
      const double v = static_cast<double>(p[i]);
      constexpr double kLo = static_cast<double>(std::numeric_limits<Out>::min()), kHi = static_cast<double>(std::numeric_limits<Out>::max());
      out.push_back(std::isnan(v) ? Out{0} : v <= kLo ? std::numeric_limits<Out>::min() : v >= kHi ? std::numeric_limits<Out>::max() : static_cast<Out>(v));
    } else {
      out.push_back(static_cast<Out>(p[i]));
    }
  }
}
}  // namespace

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> v;
  v.reserve(static_cast<size_t>(std::max<int64_t>(0, numel())));
  switch (dtype_) {
    case DType::kI64: AppendAs<int64_t>(*this, v); break;
    case DType::kI32: AppendAs<int32_t>(*this, v); break;
    case DType::kI16: AppendAs<int16_t>(*this, v); break;
    case DType::kI8: AppendAs<int8_t>(*this, v); break;
    case DType::kU8: case DType::kBool: AppendAs<uint8_t>(*this, v); break;
    case DType::kF32: AppendAs<float>(*this, v); break;
    case DType::kF64: AppendAs<double>(*this, v); break;
    default: break;
  }
  return v;
}

std::vector<double> Tensor::ToDoubleVector() const {
  std::vector<double> v;
  v.reserve(static_cast<size_t>(std::max<int64_t>(0, numel())));
  switch (dtype_) {
    case DType::kF32: AppendAs<float>(*this, v); break;
    case DType::kF64: AppendAs<double>(*this, v); break;
    case DType::kF16: for (int64_t i = 0; i < numel(); ++i) v.push_back(HalfToFloat(data<uint16_t>()[i])); break;
    case DType::kBF16: for (int64_t i = 0; i < numel(); ++i) v.push_back(BF16ToFloat(data<uint16_t>()[i])); break;
    default:
      for (int64_t x : ToInt64Vector()) v.push_back(static_cast<double>(x));
  }
  return v;
}

}  // namespace npu
