// Data-movement and shape ops. Most of them reduce to one strided copy (StridedCopy) with the right
// strides: Transpose permutes them, Slice offsets and scales them, Expand zeroes them. Output shapes are
// computed by the same functions in inference and in the kernel, so the two cannot disagree.
#include <cmath>
#include <cstring>

#include "kernels/kernel_util.h"

namespace npu {
namespace {

// dst[i] = src[offset + sum_d idx_d * strides[d]] for every index of out_shape (strides in elements).
void StridedCopy(ThreadPool& pool, const std::byte* src, int64_t offset, const std::vector<int64_t>& strides,
                 const Shape& out_shape, size_t es, std::byte* dst) {
  const int64_t total = NumElements(out_shape);
  if (total <= 0) return;
  const size_t r = out_shape.size();
  const int64_t inner = r ? out_shape.back() : 1, inner_stride = r ? strides.back() : 0, rows = total / inner;
  auto copy_rows = [&](size_t b, size_t e) {
    for (size_t row = b; row < e; ++row) {
      int64_t off = offset, rem = static_cast<int64_t>(row);
      for (int d = static_cast<int>(r) - 2; d >= 0; --d) {
        off += rem % out_shape[d] * strides[d];
        rem /= out_shape[d];
      }
      std::byte* o = dst + row * inner * es;
      if (inner_stride == 1) {
        std::memcpy(o, src + off * es, static_cast<size_t>(inner) * es);
        continue;
      }
      switch (es) {
        case 4: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 4, src + (off + i * inner_stride) * 4, 4); break;
        case 8: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 8, src + (off + i * inner_stride) * 8, 8); break;
        case 2: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 2, src + (off + i * inner_stride) * 2, 2); break;
        default: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * es, src + (off + i * inner_stride) * es, es);
      }
    }
  };
  pool.ParallelFor(static_cast<size_t>(rows), std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)), copy_rows);
}

// Integer list from a constant input (newer opsets) or an attribute (older ones).
std::optional<std::vector<int64_t>> IntsFrom(const Node& n, const Tensor* input, std::string_view attr) {
  if (input) return input->ToInt64Vector();
  if (n.has_attr(attr)) return n.attr_ints(attr);
  return std::nullopt;
}

Status Fail(const Node& n, std::string why) { return Status::Error("E10001", n.op_type + " node", n.name, std::move(why)); }

// ---- shape functions shared by inference and kernels ----------------------------------------------

Result<Shape> ReshapeShape(const Node& n, const Shape& in, const std::vector<int64_t>& target) {
  bool allowzero = n.attr_int("allowzero", 0) != 0;
  Shape out(target.begin(), target.end());
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !allowzero) {
      if (i >= in.size()) return Fail(n, "0 in the target shape refers to a missing input dim");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      if (infer_at >= 0) return Fail(n, "more than one -1 in the target shape");
      infer_at = static_cast<int64_t>(i);
    } else if (out[i] < 0) {
      return Fail(n, "negative dim in the target shape " + ShapeToString(target));
    } else {
      known *= out[i];
    }
  }
  int64_t total = NumElements(in);
  if (infer_at >= 0) {
    if (known == 0 || total % known) return Fail(n, "cannot reshape " + ShapeToString(in) + " to " + ShapeToString(target));
    out[infer_at] = total / known;
  } else if (known != total) {
    return Fail(n, "cannot reshape " + ShapeToString(in) + " (" + std::to_string(total) + " elements) to " + ShapeToString(target));
  }
  return out;
}

std::vector<int64_t> TransposePerm(const Node& n, size_t rank) {
  auto perm = n.attr_ints("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  return perm;
}

struct SliceParams {
  Shape out;
  std::vector<int64_t> start, step;  // per input dim
};

Result<SliceParams> ComputeSlice(const Node& n, const Shape& in, std::vector<int64_t> starts, std::vector<int64_t> ends,
                                 std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const int64_t r = static_cast<int64_t>(in.size());
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return Fail(n, "starts, ends, axes and steps differ in length");
  SliceParams p{in, std::vector<int64_t>(in.size(), 0), std::vector<int64_t>(in.size(), 1)};
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t ax = NormalizeAxis(axes[i], r);
    if (ax < 0 || ax >= r) return Fail(n, "axis " + std::to_string(axes[i]) + " out of range");
    int64_t dim = in[ax], step = steps[i];
    if (step == 0) return Fail(n, "step must not be 0");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t e = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      p.out[ax] = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = std::clamp<int64_t>(s, -1, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      p.out[ax] = s > e ? (s - e - step - 1) / -step : 0;
    }
    p.start[ax] = s;
    p.step[ax] = step;
  }
  return p;
}

Result<SliceParams> SliceFor(const Node& n, const Shape& in, const std::vector<const Tensor*>& c) {
  if (n.opset < 10)
    return ComputeSlice(n, in, n.attr_ints("starts"), n.attr_ints("ends"), n.attr_ints("axes"), {});
  auto get = [&](size_t i) { return i < c.size() && c[i] ? c[i]->ToInt64Vector() : std::vector<int64_t>{}; };
  return ComputeSlice(n, in, get(1), get(2), get(3), get(4));
}

Result<std::vector<int64_t>> SplitSizes(const Node& n, const Shape& in, const Tensor* split_input, size_t outputs) {
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = NormalizeAxis(n.attr_int("axis", 0), r);
  if (axis < 0 || axis >= r) return Fail(n, "axis out of range");
  auto split = IntsFrom(n, split_input, "split").value_or(std::vector<int64_t>{});
  if (split.empty()) {
    int64_t dim = in[axis], k = static_cast<int64_t>(outputs);
    int64_t chunk = (dim + k - 1) / k;  // opset 18: the last chunk may be smaller
    for (int64_t i = 0; i < k; ++i) split.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  }
  int64_t sum = 0;
  for (int64_t s : split) sum += s;
  if (sum != in[axis] || split.size() != outputs) return Fail(n, "split sizes do not add up to the axis length");
  return split;
}

Result<Shape> SqueezeShape(const Node& n, const Shape& in, const Tensor* axes_input) {
  auto axes = IntsFrom(n, axes_input, "axes").value_or(std::vector<int64_t>{});
  std::vector<bool> drop(in.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  for (int64_t a : axes) {
    int64_t ax = NormalizeAxis(a, static_cast<int64_t>(in.size()));
    if (ax < 0 || ax >= static_cast<int64_t>(in.size()) || in[ax] != 1) return Fail(n, "cannot squeeze axis " + std::to_string(a));
    drop[ax] = true;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Result<Shape> UnsqueezeShape(const Node& n, const Shape& in, const Tensor* axes_input) {
  auto axes = IntsFrom(n, axes_input, "axes").value_or(std::vector<int64_t>{});
  int64_t r = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> ins(r, false);
  for (int64_t a : axes) {
    int64_t ax = NormalizeAxis(a, r);
    if (ax < 0 || ax >= r || ins[ax]) return Fail(n, "invalid axes");
    ins[ax] = true;
  }
  Shape out;
  size_t j = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(ins[i] ? 1 : in[j++]);
  return out;
}

Result<Shape> ConcatShape(const Node& n, const std::vector<const Shape*>& ins) {
  const Shape& first = *ins[0];
  int64_t axis = NormalizeAxis(n.attr_int("axis", 0), static_cast<int64_t>(first.size()));
  if (axis < 0 || axis >= static_cast<int64_t>(first.size())) return Fail(n, "axis out of range");
  Shape out = first;
  out[axis] = 0;
  for (const Shape* s : ins) {
    if (s->size() != first.size()) return Fail(n, "inputs differ in rank");
    for (size_t d = 0; d < s->size(); ++d)
      if (static_cast<int64_t>(d) != axis && (*s)[d] != first[d])
        return Fail(n, "inputs differ outside the concat axis: " + ShapeToString(first) + " vs " + ShapeToString(*s));
    out[axis] += (*s)[axis];
  }
  return out;
}

Result<Shape> GatherShape(const Node& n, const Shape& data, const Shape& idx) {
  int64_t axis = NormalizeAxis(n.attr_int("axis", 0), static_cast<int64_t>(data.size()));
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) return Fail(n, "axis out of range");
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

struct PadParams {
  std::vector<int64_t> begin, end;
};

Result<PadParams> PadFor(const Node& n, const Shape& in, const Tensor* pads_in, const Tensor* axes_in) {
  auto pads = IntsFrom(n, pads_in, n.opset < 11 ? "pads" : "paddings").value_or(n.attr_ints("pads"));
  size_t r = in.size();
  std::vector<int64_t> axes;
  if (axes_in) axes = axes_in->ToInt64Vector();
  else
    for (size_t i = 0; i < r; ++i) axes.push_back(static_cast<int64_t>(i));
  if (pads.size() != 2 * axes.size()) return Fail(n, "pads must have 2 entries per padded axis");
  PadParams p{std::vector<int64_t>(r, 0), std::vector<int64_t>(r, 0)};
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t ax = NormalizeAxis(axes[i], static_cast<int64_t>(r));
    if (ax < 0 || ax >= static_cast<int64_t>(r)) return Fail(n, "pad axis out of range");
    p.begin[ax] = pads[i];
    p.end[ax] = pads[i + axes.size()];
  }
  return p;
}

// ---- kernels ------------------------------------------------------------------------------------

Status ReshapeLike(KernelContext& c, Shape s) {
  c.outputs[0] = c.in(0).Reshaped(std::move(s));  // shares storage: no copy
  return Status::Ok();
}

Status ReshapeKernel(KernelContext& c) {
  std::vector<int64_t> target = c.node.opset < 5 ? c.node.attr_ints("shape") : c.in(1).ToInt64Vector();
  NPU_ASSIGN_OR_RETURN(Shape s, ReshapeShape(c.node, c.in(0).shape(), target));
  return ReshapeLike(c, s);
}

Shape FlattenShape(const Node& n, const Shape& in) {
  int64_t axis = NormalizeAxis(n.attr_int("axis", 1), static_cast<int64_t>(in.size()));
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) (d < axis ? a : b) *= in[d];
  return {a, b};
}

Status SliceKernel(KernelContext& c) {
  std::vector<const Tensor*> ins;
  for (auto& t : c.inputs) ins.push_back(t.defined() ? &t : nullptr);
  NPU_ASSIGN_OR_RETURN(SliceParams p, SliceFor(c.node, c.in(0).shape(), ins));
  const Tensor& x = c.in(0);
  auto st = Strides(x.shape());
  int64_t off = 0;
  std::vector<int64_t> strides(st.size());
  for (size_t d = 0; d < st.size(); ++d) {
    off += p.start[d] * st[d];
    strides[d] = st[d] * p.step[d];
  }
  Tensor y = Tensor::Empty(x.dtype(), p.out);
  StridedCopy(c.pool, x.raw(), off, strides, p.out, DTypeSize(x.dtype()), y.mutable_raw());
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status ConcatKernel(KernelContext& c) {
  std::vector<const Shape*> shapes;
  for (auto& t : c.inputs) shapes.push_back(&t.shape());
  NPU_ASSIGN_OR_RETURN(Shape os, ConcatShape(c.node, shapes));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), static_cast<int64_t>(os.size()));
  const size_t es = DTypeSize(c.in(0).dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= os[d];
  for (size_t d = axis + 1; d < os.size(); ++d) inner *= os[d];
  Tensor y = Tensor::Empty(c.in(0).dtype(), os);
  const size_t out_row = static_cast<size_t>(os[axis] * inner) * es;
  size_t col = 0;
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != y.dtype()) return c.Fail("inputs differ in dtype");
    size_t row = static_cast<size_t>(t.shape()[axis] * inner) * es;
    for (int64_t o = 0; o < outer; ++o) std::memcpy(y.mutable_raw() + o * out_row + col, t.raw() + o * row, row);
    col += row;
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status SplitKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(auto sizes, SplitSizes(c.node, x.shape(), c.has(1) ? &c.in(1) : nullptr, c.outputs.size()));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), x.rank());
  auto st = Strides(x.shape());
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape os = x.shape();
    os[axis] = sizes[k];
    Tensor y = Tensor::Empty(x.dtype(), os);
    StridedCopy(c.pool, x.raw(), start * st[axis], st, os, DTypeSize(x.dtype()), y.mutable_raw());
    c.outputs[k] = std::move(y);
    start += sizes[k];
  }
  return Status::Ok();
}

Status GatherKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &idx = c.in(1);
  NPU_ASSIGN_OR_RETURN(Shape os, GatherShape(c.node, x.shape(), idx.shape()));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), x.rank());
  int64_t outer = 1, inner = 1, dim = x.shape()[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  auto ids = idx.ToInt64Vector();
  for (auto& i : ids) {
    if (i < -dim || i >= dim) return c.Fail("index " + std::to_string(i) + " out of range [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")");
    if (i < 0) i += dim;
  }
  const size_t es = DTypeSize(x.dtype()), block = static_cast<size_t>(inner) * es;
  Tensor y = Tensor::Empty(x.dtype(), os);
  std::byte* out = y.mutable_raw();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : ids) {
      std::memcpy(out, x.raw() + (o * dim + i) * block, block);
      out += block;
    }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status ExpandKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(Shape os, BroadcastShapes(x.shape(), c.in(1).ToInt64Vector()));
  Tensor y = Tensor::Empty(x.dtype(), os);
  StridedCopy(c.pool, x.raw(), 0, BroadcastStrides(x.shape(), os), os, DTypeSize(x.dtype()), y.mutable_raw());
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status TileKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto reps = c.in(1).ToInt64Vector();
  if (static_cast<int64_t>(reps.size()) != x.rank()) return c.Fail("repeats length must equal the input rank");
  // Tile = expand a [1, d0, 1, d1, ...]-shaped view to [r0, d0, r1, d1, ...], then reshape.
  Shape view, big, os;
  for (int64_t d = 0; d < x.rank(); ++d) {
    view.insert(view.end(), {1, x.shape()[d]});
    big.insert(big.end(), {reps[d], x.shape()[d]});
    os.push_back(reps[d] * x.shape()[d]);
  }
  Tensor y = Tensor::Empty(x.dtype(), big);
  StridedCopy(c.pool, x.raw(), 0, BroadcastStrides(view, big), big, DTypeSize(x.dtype()), y.mutable_raw());
  c.outputs[0] = y.Reshaped(os);
  return Status::Ok();
}

Status PadKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(PadParams p, PadFor(c.node, x.shape(), c.has(1) ? &c.in(1) : nullptr, c.has(3) ? &c.in(3) : nullptr));
  std::string mode = c.node.attr_string("mode", "constant");
  Shape os = x.shape();
  for (size_t d = 0; d < os.size(); ++d) {
    os[d] += p.begin[d] + p.end[d];
    if (os[d] < 0) return c.Fail("negative padded size");
    if (mode != "constant" && x.shape()[d] == 0 && os[d] > 0) return c.Fail(mode + " padding of an empty axis");
  }
  const size_t es = DTypeSize(x.dtype());
  Tensor y = Tensor::Empty(x.dtype(), os);
  // Constant fill value: input 2 (opset 11+) or attribute `value`.
  std::vector<std::byte> fill(es);
  if (c.has(2)) std::memcpy(fill.data(), c.in(2).raw(), es);
  else if (float v = c.node.attr_float("value", 0.f); v != 0.f) {
    Tensor f = CastTensor(Tensor::View(DType::kF32, {}, nullptr, &v), x.dtype());
    std::memcpy(fill.data(), f.raw(), es);
  }
  auto ost = Strides(os), ist = Strides(x.shape());
  const int64_t total = y.numel();
  c.pool.ParallelFor(static_cast<size_t>(total), 4096, [&](size_t b, size_t e) {
    for (size_t o = b; o < e; ++o) {
      int64_t src = 0;
      bool inside = true;
      for (size_t d = 0; d < os.size(); ++d) {
        int64_t i = static_cast<int64_t>(o) / ost[d] % os[d] - p.begin[d], n = x.shape()[d];
        if (i < 0 || i >= n) {
          if (mode == "constant") { inside = false; break; }
          if (mode == "edge") i = i < 0 ? 0 : n - 1;
          else {  // reflect, without repeating the edge
            int64_t period = 2 * (n - 1);
            if (period == 0) i = 0;
            else {
              i = ((i % period) + period) % period;
              if (i >= n) i = period - i;
            }
          }
        }
        src += i * ist[d];
      }
      std::memcpy(y.mutable_raw() + o * es, inside ? x.raw() + src * es : fill.data(), es);
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// DepthToSpace/SpaceToDepth as reshape + transpose + reshape.
Status BlockRearrange(KernelContext& c, bool to_space) {
  const Tensor& x = c.in(0);
  if (x.rank() != 4) return c.Fail("input must be 4-D");
  int64_t b = c.node.attr_int("blocksize", 0), N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (b <= 0) return c.Fail("blocksize must be positive");
  Tensor y;
  if (to_space) {
    if (C % (b * b)) return c.Fail("channels not divisible by blocksize^2");
    bool crd = c.node.attr_string("mode", "DCR") == "CRD";
    Tensor v = crd ? x.Reshaped({N, C / (b * b), b, b, H, W}) : x.Reshaped({N, b, b, C / (b * b), H, W});
    y = TransposeTensor(v, crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2}, c.pool);
    y = y.Reshaped({N, C / (b * b), H * b, W * b});
  } else {
    if (H % b || W % b) return c.Fail("height/width not divisible by blocksize");
    Tensor v = x.Reshaped({N, C, H / b, b, W / b, b});
    y = TransposeTensor(v, {0, 3, 5, 1, 2, 4}, c.pool).Reshaped({N, C * b * b, H / b, W / b});
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status RangeKernel(KernelContext& c) {
  const Tensor& s = c.in(0);
  Tensor y;
  bool ok = DispatchAll(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T start = c.in(0).data<T>()[0], limit = c.in(1).data<T>()[0], delta = c.in(2).data<T>()[0];
      double n = std::ceil((double(limit) - double(start)) / double(delta));
      int64_t count = std::max<int64_t>(0, static_cast<int64_t>(n));
      y = Tensor::Empty(s.dtype(), {count});
      for (int64_t i = 0; i < count; ++i) y.mutable_data<T>()[i] = static_cast<T>(start + T(i) * delta);
    }
  });
  if (!ok || !y.defined()) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Tensor ConstantValue(const Node& n) {
  if (const Tensor* t = n.attr_tensor("value")) return *t;
  if (n.has_attr("value_float")) {
    Tensor t = Tensor::Empty(DType::kF32, {});
    *t.mutable_data<float>() = n.attr_float("value_float", 0);
    return t;
  }
  if (n.has_attr("value_int")) {
    Tensor t = Tensor::Empty(DType::kI64, {});
    *t.mutable_data<int64_t>() = n.attr_int("value_int", 0);
    return t;
  }
  if (n.has_attr("value_floats")) {
    auto v = n.attr_floats("value_floats");
    Tensor t = Tensor::Empty(DType::kF32, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.mutable_data<float>());
    return t;
  }
  auto v = n.attr_ints("value_ints");
  Tensor t = Tensor::Empty(DType::kI64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  return t;
}

Tensor ConstantOfShapeValue(const Node& n, const std::vector<int64_t>& shape) {
  Tensor fill = n.attr_tensor("value") ? *n.attr_tensor("value") : Tensor::Zeros(DType::kF32, {1});
  Tensor y = Tensor::Empty(fill.dtype(), shape);
  const size_t es = DTypeSize(fill.dtype());
  for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(y.mutable_raw() + i * es, fill.raw(), es);
  return y;
}

Tensor ShapeValue(const Node& n, const Shape& in) {
  int64_t r = static_cast<int64_t>(in.size());
  int64_t s = n.attr_int("start", 0), e = n.attr_int("end", r);
  s = std::clamp<int64_t>(s < 0 ? s + r : s, 0, r);
  e = std::clamp<int64_t>(e < 0 ? e + r : e, 0, r);
  Tensor t = Tensor::Empty(DType::kI64, {std::max<int64_t>(0, e - s)});
  for (int64_t i = s; i < e; ++i) t.mutable_data<int64_t>()[i - s] = in[i];
  return t;
}

// ---- inference ----------------------------------------------------------------------------------

// Shape from a function of the input shape and constant inputs; unknown when a needed constant is absent.
template <class F>
InferFn ShapeInfer(F f) {
  return [f](InferContext& c) -> Status {
    if (!c.in[0]->has_shape) {
      for (size_t i = 0; i < c.out.size(); ++i) c.set_output(i, c.in[0]->dtype, {}, false);
      return Status::Ok();
    }
    return f(c);
  };
}

Status SetShape(InferContext& c, Result<Shape> s) {
  if (!s.ok()) return s.status();
  c.set_output(0, c.in[0]->dtype, s.value());
  return Status::Ok();
}

void SetUnknown(InferContext& c, DType t) { c.set_output(0, t, {}, false); }

Status InferTranspose(InferContext& c) {
  auto perm = TransposePerm(c.node, c.in[0]->shape.size());
  if (perm.size() != c.in[0]->shape.size()) return c.Fail("perm length differs from the input rank");
  Shape s;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size())) return c.Fail("perm entry out of range");
    s.push_back(c.in[0]->shape[p]);
  }
  return SetShape(c, s);
}

// ConfusionTransposeD (passes/fusion.cc): a Reshape to `shape` and a Transpose by `perm` in one op, the
// transpose first when transpose_first is set.
Result<Shape> ConfusionTransposeShape(const Node& n, const Shape& in) {
  auto perm = n.attr_ints("perm");
  Shape shape = n.attr_ints("shape");
  bool transpose_first = n.attr_int("transpose_first", 0) != 0;
  const Shape& permuted_in = transpose_first ? in : shape;
  if (NumElements(shape) != NumElements(in) || perm.size() != permuted_in.size())
    return Fail(n, "shape " + ShapeToString(shape) + " / perm do not fit input " + ShapeToString(in));
  Shape permuted;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size())) return Fail(n, "perm entry out of range");
    permuted.push_back(permuted_in[p]);
  }
  return transpose_first ? shape : permuted;
}

Status InferSlice(InferContext& c) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    ins.push_back(c.const_input(i));
    if (c.node.opset >= 10 && i > 0 && c.has_input(i) && !ins.back()) {
      SetUnknown(c, c.in[0]->dtype);
      return Status::Ok();
    }
  }
  auto p = SliceFor(c.node, c.in[0]->shape, ins);
  if (!p.ok()) return p.status();
  return SetShape(c, p.value().out);
}

Status InferSplit(InferContext& c) {
  if (c.has_input(1) && !c.const_input(1)) {
    for (size_t i = 0; i < c.out.size(); ++i) c.set_output(i, c.in[0]->dtype, {}, false);
    return Status::Ok();
  }
  auto sizes = SplitSizes(c.node, c.in[0]->shape, c.const_input(1), c.out.size());
  if (!sizes.ok()) return sizes.status();
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), static_cast<int64_t>(c.in[0]->shape.size()));
  for (size_t i = 0; i < c.out.size(); ++i) {
    Shape s = c.in[0]->shape;
    s[axis] = sizes.value()[i];
    c.set_output(i, c.in[0]->dtype, s);
  }
  return Status::Ok();
}

// Ops whose second input is a shape-like list: unknown output unless it is constant.
template <class F>
InferFn NeedsConst(size_t input, F f) {
  return ShapeInfer([input, f](InferContext& c) -> Status {
    if (c.has_input(input) && !c.const_input(input)) {
      SetUnknown(c, c.in[0]->dtype);
      return Status::Ok();
    }
    return f(c);
  });
}

}  // namespace

Tensor TransposeTensor(const Tensor& x, const std::vector<int64_t>& perm, ThreadPool& pool) {
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
  if (identity) return x;
  auto st = Strides(x.shape());
  Shape os;
  std::vector<int64_t> strides;
  for (int64_t p : perm) {
    os.push_back(x.shape()[p]);
    strides.push_back(st[p]);
  }
  Tensor y = Tensor::Empty(x.dtype(), os);
  StridedCopy(pool, x.raw(), 0, strides, os, DTypeSize(x.dtype()), y.mutable_raw());
  return y;
}

void RegisterShapeOps() {
  auto gray = [](const char* type, int min_in, int max_in, InferFn infer, int max_out = 1) {
    OpSchema s{type, min_in, max_in, 1, max_out, Engine::kVector, std::move(infer)};
    s.moves_bytes = true;
    return s;
  };
  // The input itself, in whatever memory order it is in (channels_last.h).
  auto pass_through = [](KernelContext& c) {
    c.outputs[0] = c.in(0);
    return Status::Ok();
  };
  RegisterOp(gray("Identity", 1, 1, InferSameAsInput0), pass_through);
  // Kernels compute on origin layouts, so the format change a TransData records (passes/formats.cc) costs
  // the host nothing: the simulated device time is the cost model's, and dumps write the device layout.
  RegisterOp(gray("TransData", 1, 1, InferSameAsInput0), pass_through);
  KernelRegistry::Get().TakeChannelsLast("Identity");
  KernelRegistry::Get().TakeChannelsLast("TransData");
  OpSchema dropout = gray("Dropout", 1, 3, [](InferContext& c) {
    c.set_output(0, c.in[0]->dtype, c.in[0]->shape, c.in[0]->has_shape);
    c.set_output(1, DType::kBool, c.in[0]->shape, c.in[0]->has_shape);
    return Status::Ok();
  }, 2);
  dropout.fixed_dtype_inputs = {1};  // the ratio
  RegisterOp(std::move(dropout),
             [](KernelContext& c) {  // inference: identity, mask all true
               NPU_RETURN_IF_ERROR(ReshapeLike(c, c.in(0).shape()));
               if (c.outputs.size() > 1) {
                 c.outputs[1] = Tensor::Empty(DType::kBool, c.in(0).shape());
                 std::memset(c.outputs[1].mutable_raw(), 1, c.outputs[1].nbytes());
               }
               return Status::Ok();
             });
  RegisterOp(gray("Reshape", 1, 2, NeedsConst(1, [](InferContext& c) {
               auto target = c.node.opset < 5 ? c.node.attr_ints("shape") : c.const_input(1)->ToInt64Vector();
               return SetShape(c, ReshapeShape(c.node, c.in[0]->shape, target));
             })),
             ReshapeKernel);
  RegisterOp(gray("Flatten", 1, 1, ShapeInfer([](InferContext& c) { return SetShape(c, FlattenShape(c.node, c.in[0]->shape)); })),
             [](KernelContext& c) { return ReshapeLike(c, FlattenShape(c.node, c.in(0).shape())); });
  RegisterOp(gray("Squeeze", 1, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, SqueezeShape(c.node, c.in[0]->shape, c.const_input(1)));
             })),
             [](KernelContext& c) -> Status {
               NPU_ASSIGN_OR_RETURN(Shape s, SqueezeShape(c.node, c.in(0).shape(), c.has(1) ? &c.in(1) : nullptr));
               return ReshapeLike(c, s);
             });
  RegisterOp(gray("Unsqueeze", 1, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, UnsqueezeShape(c.node, c.in[0]->shape, c.const_input(1)));
             })),
             [](KernelContext& c) -> Status {
               NPU_ASSIGN_OR_RETURN(Shape s, UnsqueezeShape(c.node, c.in(0).shape(), c.has(1) ? &c.in(1) : nullptr));
               return ReshapeLike(c, s);
             });
  RegisterOp(gray("Transpose", 1, 1, ShapeInfer(InferTranspose)), [](KernelContext& c) {
    auto perm = TransposePerm(c.node, c.in(0).shape().size());
    if (perm.size() != c.in(0).shape().size()) return c.Fail("perm length differs from the input rank");
    c.outputs[0] = TransposeTensor(c.in(0), perm, c.pool);
    return Status::Ok();
  });
  RegisterOp(gray("ConfusionTranspose", 1, 1, ShapeInfer([](InferContext& c) {
               return SetShape(c, ConfusionTransposeShape(c.node, c.in[0]->shape));
             })),
             [](KernelContext& c) -> Status {
               NPU_ASSIGN_OR_RETURN(Shape out, ConfusionTransposeShape(c.node, c.in(0).shape()));
               auto perm = c.node.attr_ints("perm");
               if (c.node.attr_int("transpose_first", 0)) c.outputs[0] = TransposeTensor(c.in(0), perm, c.pool).Reshaped(out);
               else c.outputs[0] = TransposeTensor(c.in(0).Reshaped(c.node.attr_ints("shape")), perm, c.pool);
               return Status::Ok();
             });
  RegisterOp(gray("Slice", 1, 5, ShapeInfer(InferSlice)), SliceKernel);
  RegisterOp(gray("Split", 1, 2, ShapeInfer(InferSplit), 1 << 16), SplitKernel);
  RegisterOp(gray("Concat", 1, 1 << 16, [](InferContext& c) -> Status {
               std::vector<const Shape*> shapes;
               for (auto* v : c.in) {
                 if (!v->has_shape) {
                   SetUnknown(c, c.in[0]->dtype);
                   return Status::Ok();
                 }
                 shapes.push_back(&v->shape);
               }
               return SetShape(c, ConcatShape(c.node, shapes));
             }),
             ConcatKernel);
  RegisterOp(gray("Gather", 2, 2, [](InferContext& c) -> Status {
               if (!c.in[0]->has_shape || !c.in[1]->has_shape) {
                 SetUnknown(c, c.in[0]->dtype);
                 return Status::Ok();
               }
               return SetShape(c, GatherShape(c.node, c.in[0]->shape, c.in[1]->shape));
             }),
             GatherKernel);
  RegisterOp(gray("Expand", 2, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, BroadcastShapes(c.in[0]->shape, c.const_input(1)->ToInt64Vector()));
             })),
             ExpandKernel);
  RegisterOp(gray("Tile", 2, 2, NeedsConst(1, [](InferContext& c) -> Status {
               auto reps = c.const_input(1)->ToInt64Vector();
               if (reps.size() != c.in[0]->shape.size()) return c.Fail("repeats length must equal the input rank");
               Shape s = c.in[0]->shape;
               for (size_t d = 0; d < s.size(); ++d) s[d] *= reps[d];
               return SetShape(c, s);
             })),
             TileKernel);
  RegisterOp(gray("Pad", 1, 4, NeedsConst(1, [](InferContext& c) -> Status {
               if (c.has_input(3) && !c.const_input(3)) {
                 SetUnknown(c, c.in[0]->dtype);
                 return Status::Ok();
               }
               auto p = PadFor(c.node, c.in[0]->shape, c.const_input(1), c.const_input(3));
               if (!p.ok()) return p.status();
               Shape s = c.in[0]->shape;
               for (size_t d = 0; d < s.size(); ++d) s[d] += p.value().begin[d] + p.value().end[d];
               return SetShape(c, s);
             })),
             PadKernel);
  RegisterOp(gray("DepthToSpace", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               Shape s = c.in[0]->shape;
               int64_t b = c.node.attr_int("blocksize", 1);
               if (s.size() != 4 || b <= 0) return c.Fail("input must be 4-D and blocksize positive");
               return SetShape(c, Shape{s[0], s[1] / (b * b), s[2] * b, s[3] * b});
             })),
             [](KernelContext& c) { return BlockRearrange(c, true); });
  RegisterOp(gray("SpaceToDepth", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               Shape s = c.in[0]->shape;
               int64_t b = c.node.attr_int("blocksize", 1);
               if (s.size() != 4 || b <= 0) return c.Fail("input must be 4-D and blocksize positive");
               return SetShape(c, Shape{s[0], s[1] * b * b, s[2] / b, s[3] / b});
             })),
             [](KernelContext& c) { return BlockRearrange(c, false); });
  // Ops whose value is known at compile time when their inputs' shapes are: inference fills the constant.
  RegisterOp(gray("Shape", 1, 1, [](InferContext& c) {
               if (c.in[0]->has_shape && NumElements(c.in[0]->shape) >= 0) {
                 Tensor t = ShapeValue(c.node, c.in[0]->shape);
                 c.set_output(0, DType::kI64, t.shape());
                 c.out[0]->constant = t;
               } else {
                 c.set_output(0, DType::kI64, {}, false);
               }
               return Status::Ok();
             }),
             [](KernelContext& c) {
               c.outputs[0] = ShapeValue(c.node, c.in(0).shape());
               return Status::Ok();
             });
  RegisterOp(gray("Size", 1, 1, [](InferContext& c) {
               c.set_output(0, DType::kI64, {});
               if (c.in[0]->has_shape && NumElements(c.in[0]->shape) >= 0) {
                 Tensor t = Tensor::Empty(DType::kI64, {});
                 *t.mutable_data<int64_t>() = NumElements(c.in[0]->shape);
                 c.out[0]->constant = t;
               }
               return Status::Ok();
             }),
             [](KernelContext& c) {
               c.outputs[0] = Tensor::Empty(DType::kI64, {});
               *c.outputs[0].mutable_data<int64_t>() = c.in(0).numel();
               return Status::Ok();
             });
  RegisterOp(gray("Constant", 0, 0, [](InferContext& c) {
               Tensor t = ConstantValue(c.node);
               c.set_output(0, t.dtype(), t.shape());
               c.out[0]->constant = t;
               return Status::Ok();
             }),
             [](KernelContext& c) {
               c.outputs[0] = ConstantValue(c.node);
               return Status::Ok();
             });
  RegisterOp(gray("ConstantOfShape", 1, 1, [](InferContext& c) {
               DType t = c.node.attr_tensor("value") ? c.node.attr_tensor("value")->dtype() : DType::kF32;
               if (const Tensor* s = c.const_input(0)) c.set_output(0, t, s->ToInt64Vector());
               else c.set_output(0, t, {}, false);
               return Status::Ok();
             }),
             [](KernelContext& c) {
               c.outputs[0] = ConstantOfShapeValue(c.node, c.in(0).ToInt64Vector());
               return Status::Ok();
             });
  OpSchema range = gray("Range", 3, 3, [](InferContext& c) {
    // ONNX: max(ceil((limit - start) / delta), 0) elements; known when all three are constants.
    const Tensor *start = c.const_input(0), *limit = c.const_input(1), *delta = c.const_input(2);
    int64_t n = -1;
    if (start && limit && delta && start->numel() == 1 && limit->numel() == 1 && delta->numel() == 1) {
      double d = delta->ToDoubleVector()[0];
      if (d == 0) return c.Fail("delta is 0");
      n = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit->ToDoubleVector()[0] - start->ToDoubleVector()[0]) / d)), 0);
    }
    c.set_output(0, c.in[0]->dtype, {n});
    return Status::Ok();
  });
  range.moves_bytes = false;  // computes start + i * delta
  RegisterOp(std::move(range), RangeKernel);
}

}  // namespace npu
