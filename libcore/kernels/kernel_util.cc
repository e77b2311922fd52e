#include "kernels/kernel_util.h"

namespace npu {

bool IsHalfLike(DType t) { return t == DType::kF16 || t == DType::kBF16; }

Tensor ToF32(const Tensor& t) {
  if (!IsHalfLike(t.dtype())) return t;
  Tensor out = Tensor::EmptyLike(DType::kF32, t);
  auto n = static_cast<size_t>(t.numel());
  const uint16_t* in = t.data<uint16_t>();
  float* o = out.mutable_data<float>();
  bool f16 = t.dtype() == DType::kF16;
  ThreadPool::Global().ParallelFor(n, kConvertGrain, [&](size_t b, size_t e) {
    f16 ? HalfToFloat(std::span(in + b, e - b), std::span(o + b, e - b)) : BF16ToFloat(std::span(in + b, e - b), std::span(o + b, e - b));
  });
  return out;
}

Tensor FromF32(const Tensor& t, DType target) {
  if (t.dtype() != DType::kF32 || !IsHalfLike(target)) return t;
  Tensor out = Tensor::EmptyLike(target, t);
  auto n = static_cast<size_t>(t.numel());
  std::span<const float> in(t.data<float>(), n);
  std::span<uint16_t> o(out.mutable_data<uint16_t>(), n);
  if (target == DType::kF16) FloatToHalf(in, o);
  else FloatToBF16(in, o);
  return out;
}

Tensor ResultOver(const Tensor& x) {
  if (!x.sole_owner()) return Tensor::EmptyLike(x.dtype(), x);
  Tensor y = x;
  y.format = Format::kND;  // as a new tensor's
  return y;
}

Status WithWidenedHalves(KernelContext& c, const std::function<Status(KernelContext&)>& body) {
  DType narrow = DType::kUndefined;
  for (auto& t : c.inputs)
    if (t.defined() && IsHalfLike(t.dtype())) {
      if (narrow == DType::kUndefined) narrow = t.dtype();
      t = ToF32(t);
    }
  NPU_RETURN_IF_ERROR(body(c));
  if (narrow != DType::kUndefined)
    for (size_t j = 0; j < c.outputs.size(); ++j)
      if (Tensor& t = c.outputs[j]; t.defined() && t.dtype() == DType::kF32) t = c.Narrow(t, narrow, static_cast<int>(j));
  return Status::Ok();
}

std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

std::optional<std::vector<int64_t>> ReshapedStrides(const Shape& from, const std::vector<int64_t>& strides, const Shape& to) {
  if (NumElements(from) != NumElements(to) || NumElements(from) == 0) return std::nullopt;
  Shape dims;  // `from` without its unit dims, which no element walk steps along
  std::vector<int64_t> steps;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] != 1) dims.push_back(from[d]), steps.push_back(strides[d]);
  std::vector<int64_t> out(to.size(), 0);
  size_t i = 0, j = 0;
  while (j < to.size()) {
    if (to[j] == 1) {  // a unit dim anywhere: no step along it
      ++j;
      continue;
    }
    // The shortest runs of dims [i, i1) and [j, j1) with the same count of elements.
    size_t i1 = i + 1, j1 = j + 1;
    int64_t have = dims[i], want = to[j];
    while (have != want) {
      if (have < want) have *= dims[i1++];
      else want *= to[j1++];
    }
    for (size_t k = i; k + 1 < i1; ++k)  // merged dims must be evenly strided, one inside the other
      if (steps[k] != steps[k + 1] * dims[k + 1]) return std::nullopt;
    int64_t step = steps[i1 - 1];
    for (size_t k = j1; k-- > j;) {
      out[k] = step;
      step *= to[k];
    }
    i = i1;
    j = j1;
  }
  return out;
}

std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out) {
  std::vector<int64_t> st(out.size(), 0);
  auto base = Strides(in);
  size_t off = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) st[off + i] = in[i] == 1 ? 0 : base[i];
  return st;
}

BroadcastPlan MakeBroadcastPlan(const std::vector<const Shape*>& ins, const Shape& out) {
  BroadcastPlan p;
  // Merge adjacent dims where every input is either contiguous across both or broadcast across both,
  // so the innermost run is as long as possible.
  std::vector<std::vector<int64_t>> st;
  for (const Shape* s : ins) st.push_back(BroadcastStrides(*s, out));
  Shape dims;
  std::vector<std::vector<int64_t>> mst(ins.size());
  for (size_t d = 0; d < out.size(); ++d) {
    if (out[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < ins.size(); ++k) {
      int64_t prev = mst[k].back();
      merge = (prev == 0 && st[k][d] == 0) || (prev != 0 && st[k][d] != 0 && prev == st[k][d] * out[d]);
    }
    if (merge) {
      dims.back() *= out[d];
      for (size_t k = 0; k < ins.size(); ++k) mst[k].back() = st[k][d];
    } else {
      dims.push_back(out[d]);
      for (size_t k = 0; k < ins.size(); ++k) mst[k].push_back(st[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& m : mst) m.push_back(0);
  }
  p.out = dims;
  p.inner = dims.back();
  for (size_t k = 0; k < ins.size(); ++k) {
    p.inner_stride.push_back(mst[k].back());
    p.in_strides.push_back(mst[k]);
  }
  p.outer = NumElements(dims) / std::max<int64_t>(1, p.inner);
  return p;
}

BroadcastRowWalk::BroadcastRowWalk(const BroadcastPlan& p, int64_t row) : p_(p), idx_(p.out.size() - 1), offs_(p.in_strides.size()) {
  for (size_t d = idx_.size(); d-- > 0;) {
    idx_[d] = row % p.out[d];
    row /= p.out[d];
    for (size_t k = 0; k < offs_.size(); ++k) offs_[k] += idx_[d] * p.in_strides[k][d];
  }
}

void BroadcastRowWalk::Next() {
  for (size_t d = idx_.size(); d-- > 0;) {
    for (size_t k = 0; k < offs_.size(); ++k) offs_[k] += p_.in_strides[k][d];
    if (++idx_[d] < p_.out[d]) return;
    for (size_t k = 0; k < offs_.size(); ++k) offs_[k] -= p_.in_strides[k][d] * p_.out[d];
    idx_[d] = 0;
  }
}

float* ThreadScratch(size_t n, int slot) {
  thread_local std::vector<float> buffers[2];
  auto& b = buffers[slot];
  if (b.size() < n) b.resize(n);
  return b.data();
}

}  // namespace npu
