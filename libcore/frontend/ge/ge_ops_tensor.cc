// GE's data-movement ops, in both of the forms ATC leaves in an .om: the *D form, whose constant operands GE
// folded into attributes (PadD's paddings, SplitD's split_dim, TileD's multiples, StridedSliceD's begin/end/
// strides, GatherV2D's axis, ResizeBilinearV2D's size), and the plain form, which reads them from constant
// inputs. Each becomes the ONNX-named kernel that takes those operands as inputs.
#include <algorithm>
#include <climits>

#include "frontend/ge/ge_op.h"

namespace npu {
namespace {

std::string RankMismatch(std::string_view what, size_t got, size_t rank) {
  return std::string(what) + " hold " + std::to_string(got) + " values for a rank-" + std::to_string(rank) + " input";
}

// An axis list of the framework's layout as axes of value v (NHWC held channels-first is permuted).
std::optional<std::vector<int64_t>> PermuteAxes(GeOp& c, int v, const std::vector<int64_t>& per_dim) {
  std::vector<int64_t> out(per_dim.size());
  for (size_t d = 0; d < per_dim.size(); ++d) {
    auto a = c.Axis(v, static_cast<int64_t>(d));
    if (!a) return std::nullopt;
    out[static_cast<size_t>(*a)] = per_dim[d];
  }
  return out;
}

}  // namespace

// PadD (paddings attr), Pad (paddings input), PadV3D / PadV3 (mode, constant_values; paddings_contiguous false
// lists all begins, then all ends). GE's paddings are [begin, end] per dim; ONNX's pads all begins, then all ends.
ConvertResult MapPad(GeOp& c) {
  const int x = c.node().inputs[0];
  const size_t rank = c.in(0).shape.size();
  auto flat = c.IntsOr("paddings", 1);
  if (!flat) return "its paddings are neither an attribute nor a constant";
  if (flat->size() != 2 * rank) return RankMismatch("paddings", flat->size(), rank);
  const bool contiguous = c.ge.attr_int("paddings_contiguous", 1) != 0;
  std::vector<int64_t> begins(rank), ends(rank);
  for (size_t d = 0; d < rank; ++d) {
    begins[d] = contiguous ? (*flat)[2 * d] : (*flat)[d];
    ends[d] = contiguous ? (*flat)[2 * d + 1] : (*flat)[rank + d];
  }
  auto b = PermuteAxes(c, x, begins), e = PermuteAxes(c, x, ends);
  if (!b || !e) return "its input's rank does not fit its layout";
  std::vector<int64_t> pads = *b;
  pads.insert(pads.end(), e->begin(), e->end());
  std::string mode = c.ge.attr_string("mode", "constant");
  std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (mode != "constant" && mode != "reflect" && mode != "edge") return "its mode '" + mode + "' is not constant, reflect or edge";
  int value = -1;
  if (c.ge.has_attr("constant_values")) {  // PadV3D keeps it as an int or a float
    const float fill = c.ge.attr_float("constant_values", static_cast<float>(c.ge.attr_int("constant_values", 0)));
    if (fill != 0.0f && c.in(0).dtype != DType::kF32) return "a constant_values other than 0 on a non-float32 input";
    if (fill != 0.0f) {
      Tensor v = Tensor::Empty(DType::kF32, {});
      *v.mutable_data<float>() = fill;
      value = c.b.Constant(c.node().name + "/constant_values", std::move(v));
    }
  } else if (c.has_in(2)) {
    value = c.node().inputs[2];
  }
  c.node().inputs = {x, c.Ints("pads", pads)};
  if (value >= 0) c.node().inputs.push_back(value);
  c.node().attrs["mode"] = mode;
  return {};
}

// SplitD (split_dim, num_split), SplitVD (size_splits, split_dim), SplitV (size_splits and split_dim as inputs):
// the sizes are the outputs' extents along the axis (size_splits may hold one -1 that GE resolved there).
ConvertResult MapSplit(GeOp& c) {
  const int x = c.node().inputs[0];
  std::optional<int64_t> dim;
  if (c.ge.has_attr("split_dim")) dim = c.ge.attr_int("split_dim", 0);
  else if (auto d = c.IntConst(2); d && d->size() == 1) dim = (*d)[0];
  if (!dim) return "its split_dim is neither an attribute nor a constant";
  auto axis = c.Axis(x, *dim);
  if (!axis) return "split_dim " + std::to_string(*dim) + " is outside the input's rank";
  std::vector<int64_t> sizes;
  int64_t total = 0;
  for (size_t k = 0; k < c.node().outputs.size(); ++k) {
    const Shape& s = c.out(k).shape;
    if (s.size() != c.in(0).shape.size()) return "output " + std::to_string(k) + " has another rank than the input";
    sizes.push_back(s[static_cast<size_t>(*axis)]);
    total += sizes.back();
  }
  if (total != c.in(0).shape[static_cast<size_t>(*axis)]) return "its outputs do not add up to the input along split_dim";
  c.node().inputs = {x, c.Ints("split", sizes)};
  c.node().attrs["axis"] = *axis;
  return {};
}

// TileD (multiples attr), Tile (multiples input).
ConvertResult MapTile(GeOp& c) {
  const int x = c.node().inputs[0];
  auto m = c.IntsOr("multiples", 1);
  if (!m) return "its multiples are neither an attribute nor a constant";
  if (m->size() != c.in(0).shape.size()) return RankMismatch("multiples", m->size(), c.in(0).shape.size());
  auto repeats = PermuteAxes(c, x, *m);
  if (!repeats) return "its input's rank does not fit its layout";
  c.node().inputs = {x, c.Ints("repeats", *repeats)};
  return {};
}

// StridedSliceD (begin/end/strides attrs) and StridedSlice (inputs 1-3), with TF's masks: a Slice, then a
// Reshape to the output's shape where shrink_axis_mask drops dims or new_axis_mask adds them.
ConvertResult MapStridedSlice(GeOp& c) {
  const int x = c.node().inputs[0];
  auto begin = c.IntsOr("begin", 1), end = c.IntsOr("end", 2), strides = c.IntsOr("strides", 3);
  if (!begin || !end || !strides || begin->size() != end->size() || begin->size() != strides->size())
    return "begin, end and strides are not attributes or constants of one length";
  if (c.ge.attr_int("ellipsis_mask", 0) != 0) return "its ellipsis_mask (npukit slices with explicit dims only)";
  const int64_t bm = c.ge.attr_int("begin_mask", 0), em = c.ge.attr_int("end_mask", 0), sm = c.ge.attr_int("shrink_axis_mask", 0),
                nm = c.ge.attr_int("new_axis_mask", 0);
  const Shape& in = c.in(0).shape;
  if ((sm || nm) && c.HeldNhwc(x)) return "it changes the rank of an NHWC tensor held channels-first";
  std::vector<int64_t> starts, ends, axes, steps;
  Shape mid = in;  // the Slice's result: the input's dims, sliced
  size_t dim = 0;
  for (size_t i = 0; i < begin->size(); ++i) {
    if (nm >> i & 1) continue;  // a new axis consumes no input dim: the Reshape adds it
    if (dim >= in.size()) return "begin, end and strides cover more dims than the input has";
    int64_t s = (*strides)[i], b = (*begin)[i], e = (*end)[i];
    if (s == 0) return "a stride is 0";
    if (sm >> i & 1) {
      e = b == -1 ? INT64_MAX : b + 1;
      s = 1;
    } else {
      if (bm >> i & 1) b = s > 0 ? 0 : INT64_MAX;
      if (em >> i & 1) e = s > 0 ? INT64_MAX : INT64_MIN;
    }
    auto a = c.Axis(x, static_cast<int64_t>(dim));
    const int64_t n = in[static_cast<size_t>(*a)];
    // ONNX Slice's clamping: negative indexes count from the end; a backward slice may end before index 0.
    auto at = [&](int64_t v, int64_t lo, int64_t hi) { return std::clamp<int64_t>(v < 0 ? v + n : v, lo, hi); };
    const int64_t first = s > 0 ? at(b, 0, n) : at(b, 0, n - 1), last = s > 0 ? at(e, 0, n) : at(e, -1, n - 1);
    mid[static_cast<size_t>(*a)] = s > 0 ? std::max<int64_t>(0, (last - first + s - 1) / s) : std::max<int64_t>(0, (first - last - s - 1) / -s);
    starts.push_back(b), ends.push_back(e), axes.push_back(*a), steps.push_back(s);
    ++dim;
  }
  if (NumElements(mid) != NumElements(c.out(0).shape)) return "the slice makes " + ShapeToString(mid) + ", not the output's " + ShapeToString(c.out(0).shape);
  c.node().inputs = {x, c.Ints("starts", starts), c.Ints("ends", ends), c.Ints("axes", axes), c.Ints("steps", steps)};
  if (mid != c.out(0).shape) c.InsertAfter("Reshape", {}, {c.Ints("shape", c.out(0).shape)}, mid);
  return {};
}

// GatherV2D (axis attr), GatherV2 (axis input 2), Gather (TF's, axis 0).
ConvertResult MapGather(GeOp& c) {
  const int x = c.node().inputs[0];
  if (!c.has_in(1)) return "it has no indices input";
  if (c.ge.attr_int("batch_dims", 0) != 0) return "its batch_dims (npukit gathers with batch_dims 0)";
  int64_t axis = c.ge.attr_int("axis", 0);
  if (!c.ge.has_attr("axis") && c.has_in(2)) {
    auto a = c.IntConst(2);
    if (!a || a->size() != 1) return "its axis input is not a constant scalar";
    axis = (*a)[0];
  }
  auto mapped = c.Axis(x, axis);
  if (!mapped) return "axis " + std::to_string(axis) + " is outside the input's rank";
  if (c.HeldNhwc(x) && c.in(1).shape.size() != 1) return "it gathers from an NHWC tensor held channels-first with indices of rank other than 1";
  c.node().inputs.resize(2);
  c.node().attrs["axis"] = *mapped;
  return {};
}

// ResizeNearestNeighborV2(D) and ResizeBilinearV2(D): TF's resize (align_corners, half_pixel_centers) as ONNX's
// Resize to the output's shape, with the coordinate modes that reproduce TF's sampling.
ConvertResult MapResize(GeOp& c) {
  const int x = c.node().inputs[0];
  if (c.in(0).shape.size() != 4 || c.out(0).shape.size() != 4) return "its input and output are not 4-D";
  auto size = c.IntsOr("size", 1);
  if (size && size->size() != 2) return "its size holds " + std::to_string(size->size()) + " values, not 2";
  const Shape& y = c.out(0).shape;
  const bool channels_first = c.HeldNhwc(x) || c.in(0).layout != "NHWC";
  if (size && (channels_first ? (y[2] != (*size)[0] || y[3] != (*size)[1]) : (y[1] != (*size)[0] || y[2] != (*size)[1])))
    return "its size " + ShapeToString(*size) + " is not the output's " + ShapeToString(y);
  const bool bilinear = c.ge_type.find("Bilinear") != std::string::npos;
  const bool align = c.ge.attr_int("align_corners", 0) != 0, half = c.ge.attr_int("half_pixel_centers", 0) != 0;
  Node& n = c.node();
  n.attrs["mode"] = std::string(bilinear ? "linear" : "nearest");
  n.attrs["coordinate_transformation_mode"] = std::string(align ? "align_corners" : half ? (bilinear ? "half_pixel" : "tf_half_pixel_for_nearest") : "asymmetric");
  if (!bilinear) n.attrs["nearest_mode"] = std::string(align ? "round_prefer_ceil" : "floor");
  n.inputs = {x, -1, -1, c.Ints("sizes", y)};
  return {};
}

}  // namespace npu
