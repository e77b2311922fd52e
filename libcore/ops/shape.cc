// Schemas of the data-movement and shape ops, and the shape rules they share with the kernels.
#include "ops/shape.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "ops/families.h"

namespace npu {
namespace {

Status Fail(const Node& n, std::string why) { return Status::Error("E10001", n.op_type + " node", n.name, std::move(why)); }

// Integer list from a constant input (newer opsets) or an attribute (older ones).
std::optional<std::vector<int64_t>> IntsFrom(const Node& n, const Tensor* input, std::string_view attr) {
  if (input) return input->ToInt64Vector();
  if (n.has_attr(attr)) return n.attr_ints(attr);
  return std::nullopt;
}

// Slice's output shape, start and step per input dim.
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

}  // namespace

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

Shape FlattenShape(const Node& n, const Shape& in) {
  int64_t axis = NormalizeAxis(n.attr_int("axis", 1), static_cast<int64_t>(in.size()));
  int64_t a = 1, b = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d) (d < axis ? a : b) *= in[d];
  return {a, b};
}

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

namespace {

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
  // An axis of unknown length gives a slice of unknown length (SliceFor would clamp to it as if it were 0).
  Shape out = p.value().out;
  for (size_t d = 0; d < out.size() && d < c.in[0]->shape.size(); ++d)
    if (c.in[0]->shape[d] < 0) out[d] = -1;
  return SetShape(c, out);
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

void RegisterShapeSchemas() {
  auto gray = [](const char* type, int min_in, int max_in, InferFn infer, int max_out = 1) {
    OpSchema s{type, min_in, max_in, 1, max_out, Engine::kVector, std::move(infer)};
    s.moves_bytes = true;
    return s;
  };
  RegisterSchema(gray("Identity", 1, 1, InferSameAsInput0));
  // A format change: the same values, permuted when it took in a layout Transpose (passes/formats.cc).
  RegisterSchema(gray("TransData", 1, 1, [](InferContext& c) {
               if (!c.node.has_attr("perm") || !c.in[0]->has_shape) return InferSameAsInput0(c);
               Shape s;
               for (int64_t p : c.node.attr_ints("perm")) {
                 if (p < 0 || p >= static_cast<int64_t>(c.in[0]->shape.size())) return c.Fail("perm does not fit the input");
                 s.push_back(c.in[0]->shape[static_cast<size_t>(p)]);
               }
               c.set_output(0, c.in[0]->dtype, s);
               return Status::Ok();
             }));
  OpSchema dropout = gray("Dropout", 1, 3, [](InferContext& c) {
    c.set_output(0, c.in[0]->dtype, c.in[0]->shape, c.in[0]->has_shape);
    c.set_output(1, DType::kBool, c.in[0]->shape, c.in[0]->has_shape);
    return Status::Ok();
  }, 2);
  dropout.fixed_dtype_inputs = {1};  // the ratio
  RegisterSchema(std::move(dropout));
  RegisterSchema(gray("Reshape", 1, 2, NeedsConst(1, [](InferContext& c) {
               auto target = c.node.opset < 5 ? c.node.attr_ints("shape") : c.const_input(1)->ToInt64Vector();
               return SetShape(c, ReshapeShape(c.node, c.in[0]->shape, target));
             })));
  RegisterSchema(gray("Flatten", 1, 1, ShapeInfer([](InferContext& c) { return SetShape(c, FlattenShape(c.node, c.in[0]->shape)); })));
  RegisterSchema(gray("Squeeze", 1, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, SqueezeShape(c.node, c.in[0]->shape, c.const_input(1)));
             })));
  RegisterSchema(gray("Unsqueeze", 1, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, UnsqueezeShape(c.node, c.in[0]->shape, c.const_input(1)));
             })));
  RegisterSchema(gray("Transpose", 1, 1, ShapeInfer(InferTranspose)));
  RegisterSchema(gray("ConfusionTranspose", 1, 1, ShapeInfer([](InferContext& c) {
               return SetShape(c, ConfusionTransposeShape(c.node, c.in[0]->shape));
             })));
  // Caffe's and Ascend IR's channel shuffle: (N, g, C/g, ...) transposed to (N, C/g, g, ...), as one op.
  RegisterSchema(gray("ShuffleChannel", 1, 1, ShapeInfer([](InferContext& c) {
               const Shape& s = c.in[0]->shape;
               int64_t group = c.node.attr_int("group", 1);
               if (s.size() < 2 || group < 1 || s[1] % group != 0)
                 return c.Fail("needs rank >= 2 and channels divisible by group " + std::to_string(group));
               return SetShape(c, s);
             })));
  // TF's SpaceToBatchND / BatchToSpaceND on NHWC data with two block dims (attrs block_shape [b0, b1] and
  // paddings / crops [top, bottom, left, right], TF's [2, 2] row-major): spatial blocks to and from the batch.
  RegisterSchema(gray("SpaceToBatchND", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               const Shape& s = c.in[0]->shape;
               auto b = c.node.attr_ints("block_shape"), p = c.node.attr_ints("paddings");
               if (s.size() != 4 || b.size() != 2 || p.size() != 4 || b[0] < 1 || b[1] < 1)
                 return c.Fail("needs a 4-D NHWC input, 2 block sizes >= 1 and 4 paddings");
               const int64_t h = s[1] + p[0] + p[1], w = s[2] + p[2] + p[3];
               if (h % b[0] || w % b[1]) return c.Fail("the padded height and width must divide by the block sizes");
               return SetShape(c, Shape{s[0] * b[0] * b[1], h / b[0], w / b[1], s[3]});
             })));
  RegisterSchema(gray("BatchToSpaceND", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               const Shape& s = c.in[0]->shape;
               auto b = c.node.attr_ints("block_shape"), k = c.node.attr_ints("crops");
               if (s.size() != 4 || b.size() != 2 || k.size() != 4 || b[0] < 1 || b[1] < 1 || s[0] % (b[0] * b[1]))
                 return c.Fail("needs a 4-D NHWC input whose batch divides by the block sizes' product, and 4 crops");
               const int64_t h = s[1] * b[0] - k[0] - k[1], w = s[2] * b[1] - k[2] - k[3];
               if (h < 0 || w < 0) return c.Fail("the crops are larger than the image");
               return SetShape(c, Shape{s[0] / (b[0] * b[1]), h, w, s[3]});
             })));
  RegisterSchema(gray("Slice", 1, 5, ShapeInfer(InferSlice)));
  RegisterSchema(gray("Split", 1, 2, ShapeInfer(InferSplit), 1 << 16));
  RegisterSchema(gray("Concat", 1, 1 << 16, [](InferContext& c) -> Status {
               std::vector<const Shape*> shapes;
               for (auto* v : c.in) {
                 if (!v->has_shape) {
                   SetUnknown(c, c.in[0]->dtype);
                   return Status::Ok();
                 }
                 shapes.push_back(&v->shape);
               }
               return SetShape(c, ConcatShape(c.node, shapes));
             }));
  RegisterSchema(gray("Gather", 2, 2, [](InferContext& c) -> Status {
               if (!c.in[0]->has_shape || !c.in[1]->has_shape) {
                 SetUnknown(c, c.in[0]->dtype);
                 return Status::Ok();
               }
               return SetShape(c, GatherShape(c.node, c.in[0]->shape, c.in[1]->shape));
             }));
  // ScatterND: data with the slices updates[i...] written (or reduced) at indices[i...]; indices (..., k) address
  // the first k axes of data, so updates is indices.shape[:-1] + data.shape[k:].
  RegisterSchema(gray("ScatterND", 3, 3, [](InferContext& c) -> Status {
               const Value &data = *c.in[0], &idx = *c.in[1], &upd = *c.in[2];
               if (data.has_shape && idx.has_shape && upd.has_shape) {
                 if (idx.shape.empty() || idx.shape.back() < 0 || idx.shape.back() > static_cast<int64_t>(data.shape.size()))
                   return c.Fail("the last axis of indices must be at most the rank of data");
                 Shape want(idx.shape.begin(), idx.shape.end() - 1);
                 want.insert(want.end(), data.shape.begin() + idx.shape.back(), data.shape.end());
                 if (upd.shape != want) return c.Fail("updates must have the shape indices.shape[:-1] + data.shape[k:]");
               }
               c.set_output(0, data.dtype, data.shape, data.has_shape);
               return Status::Ok();
             }));
  RegisterSchema(gray("Expand", 2, 2, NeedsConst(1, [](InferContext& c) {
               return SetShape(c, BroadcastShapes(c.in[0]->shape, c.const_input(1)->ToInt64Vector()));
             })));
  RegisterSchema(gray("Tile", 2, 2, NeedsConst(1, [](InferContext& c) -> Status {
               auto reps = c.const_input(1)->ToInt64Vector();
               if (reps.size() != c.in[0]->shape.size()) return c.Fail("repeats length must equal the input rank");
               Shape s = c.in[0]->shape;
               for (size_t d = 0; d < s.size(); ++d) s[d] *= reps[d];
               return SetShape(c, s);
             })));
  RegisterSchema(gray("Pad", 1, 4, NeedsConst(1, [](InferContext& c) -> Status {
               if (c.has_input(3) && !c.const_input(3)) {
                 SetUnknown(c, c.in[0]->dtype);
                 return Status::Ok();
               }
               auto p = PadFor(c.node, c.in[0]->shape, c.const_input(1), c.const_input(3));
               if (!p.ok()) return p.status();
               Shape s = c.in[0]->shape;
               for (size_t d = 0; d < s.size(); ++d) s[d] += p.value().begin[d] + p.value().end[d];
               return SetShape(c, s);
             })));
  RegisterSchema(gray("DepthToSpace", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               Shape s = c.in[0]->shape;
               int64_t b = c.node.attr_int("blocksize", 1);
               if (s.size() != 4 || b <= 0) return c.Fail("input must be 4-D and blocksize positive");
               return SetShape(c, Shape{s[0], s[1] / (b * b), s[2] * b, s[3] * b});
             })));
  RegisterSchema(gray("SpaceToDepth", 1, 1, ShapeInfer([](InferContext& c) -> Status {
               Shape s = c.in[0]->shape;
               int64_t b = c.node.attr_int("blocksize", 1);
               if (s.size() != 4 || b <= 0) return c.Fail("input must be 4-D and blocksize positive");
               return SetShape(c, Shape{s[0], s[1] * b * b, s[2] / b, s[3] / b});
             })));
  // Ops whose value is known at compile time when their inputs' shapes are: inference fills the constant.
  RegisterSchema(gray("Shape", 1, 1, [](InferContext& c) {
               if (c.in[0]->has_shape && NumElements(c.in[0]->shape) >= 0) {
                 Tensor t = ShapeValue(c.node, c.in[0]->shape);
                 c.set_output(0, DType::kI64, t.shape());
                 c.out[0]->constant = t;
               } else {
                 c.set_output(0, DType::kI64, {}, false);
               }
               return Status::Ok();
             }));
  RegisterSchema(gray("Size", 1, 1, [](InferContext& c) {
               c.set_output(0, DType::kI64, {});
               if (c.in[0]->has_shape && NumElements(c.in[0]->shape) >= 0) {
                 Tensor t = Tensor::Empty(DType::kI64, {});
                 *t.mutable_data<int64_t>() = NumElements(c.in[0]->shape);
                 c.out[0]->constant = t;
               }
               return Status::Ok();
             }));
  RegisterSchema(gray("Constant", 0, 0, [](InferContext& c) {
               Tensor t = ConstantValue(c.node);
               c.set_output(0, t.dtype(), t.shape());
               c.out[0]->constant = t;
               return Status::Ok();
             }));
  RegisterSchema(gray("ConstantOfShape", 1, 1, [](InferContext& c) {
               DType t = c.node.attr_tensor("value") ? c.node.attr_tensor("value")->dtype() : DType::kF32;
               if (const Tensor* s = c.const_input(0)) c.set_output(0, t, s->ToInt64Vector());
               else c.set_output(0, t, {}, false);
               return Status::Ok();
             }));
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
  range.moves_bytes = false;
  // computes start + i * delta
  RegisterSchema(std::move(range));
  // TensorFlow's random tensors (shape as input 0, attrs seed, seed2, dtype): AI CPU ops on the device.
  for (const char* type : {"RandomUniform", "RandomStandardNormal"}) {
    OpSchema random{type, 1, 1, 1, 1, Engine::kAiCpu, [](InferContext& c) {
                      auto dt = static_cast<DType>(c.node.attr_int("dtype", static_cast<int64_t>(DType::kF32)));
                      if (const Tensor* s = c.const_input(0)) c.set_output(0, dt, s->ToInt64Vector());
                      else c.set_output(0, dt, {}, false);
                      return Status::Ok();
                    }};
    random.random = true;
    RegisterSchema(std::move(random));
  }
}

}  // namespace npu
