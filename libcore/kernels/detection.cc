// BatchMultiClassNonMaxSuppression and OneHot (schemas: ops/detection.cc).
#include <algorithm>
#include <array>
#include <numeric>

#include "kernels/families.h"
#include "kernels/kernel_util.h"
#include "kernels/registry.h"

namespace npu {
namespace {

using Box = std::array<float, 4>;  // y1, x1, y2, x2 (TF's order; either corner may come first)

// TF's IOU: corners ordered per axis; a box of no area overlaps nothing.
float Iou(const Box& a, const Box& b) {
  const float ay1 = std::min(a[0], a[2]), ax1 = std::min(a[1], a[3]), ay2 = std::max(a[0], a[2]), ax2 = std::max(a[1], a[3]);
  const float by1 = std::min(b[0], b[2]), bx1 = std::min(b[1], b[3]), by2 = std::max(b[0], b[2]), bx2 = std::max(b[1], b[3]);
  const float area_a = (ay2 - ay1) * (ax2 - ax1), area_b = (by2 - by1) * (bx2 - bx1);
  if (area_a <= 0 || area_b <= 0) return 0;
  const float ih = std::max(std::min(ay2, by2) - std::max(ay1, by1), 0.0f), iw = std::max(std::min(ax2, bx2) - std::max(ax1, bx1), 0.0f);
  const float inter = ih * iw;
  return inter / (area_a + area_b - inter);
}

struct Detection {
  float score;
  int64_t cls;
  Box box;
};

struct NmsParams {
  float score_threshold, iou_threshold;
  int64_t per_class, total;
  bool normalize;  // change_coordinate_frame: boxes relative to the clip window
};

// One image: per class, the boxes above the threshold in score order, each kept unless it overlaps a kept one by
// more than iou_threshold (at most per_class); then every class's kept boxes by score, the first `total`.
std::vector<Detection> NmsImage(const float* boxes, const float* scores, int64_t anchors, int64_t q, int64_t classes,
                                const Box* window, const NmsParams& p) {
  std::vector<Detection> all;
  std::vector<int64_t> order;
  for (int64_t cls = 0; cls < classes; ++cls) {
    order.clear();
    for (int64_t a = 0; a < anchors; ++a)
      if (scores[a * classes + cls] > p.score_threshold) order.push_back(a);
    std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return scores[x * classes + cls] > scores[y * classes + cls]; });
    std::vector<Detection> kept;
    for (int64_t a : order) {
      if (static_cast<int64_t>(kept.size()) >= p.per_class) break;
      const float* b = boxes + (a * q + (q == 1 ? 0 : cls)) * 4;
      Box box = {b[0], b[1], b[2], b[3]};
      if (window)
        for (int k = 0; k < 4; ++k) box[k] = std::clamp(box[k], (*window)[k % 2], (*window)[k % 2 + 2]);
      if (std::none_of(kept.begin(), kept.end(), [&](const Detection& d) { return Iou(d.box, box) > p.iou_threshold; }))
        kept.push_back({scores[a * classes + cls], cls, box});
    }
    all.insert(all.end(), kept.begin(), kept.end());
  }
  std::stable_sort(all.begin(), all.end(), [](const Detection& a, const Detection& b) { return a.score > b.score; });
  if (static_cast<int64_t>(all.size()) > p.total) all.resize(static_cast<size_t>(p.total));
  if (p.normalize && window) {
    const float h = (*window)[2] - (*window)[0], w = (*window)[3] - (*window)[1];
    for (Detection& d : all)
      for (int k = 0; k < 4; ++k) d.box[k] = (d.box[k] - (*window)[k % 2]) / (k % 2 ? w : h);
  }
  return all;
}

Status NmsKernel(KernelContext& c) {
  const Tensor &boxes = c.in(0), &scores = c.in(1);
  if (c.node.attr_int("transpose_box", 0) != 0) return c.Fail("transpose_box (boxes as [batch, q, 4, anchors]) is not supported");
  const int64_t batch = boxes.shape()[0], anchors = boxes.shape()[1], q = boxes.shape()[2], classes = scores.shape()[2];
  const NmsParams p{c.node.attr_float("score_threshold", 0.0f), c.node.attr_float("iou_threshold", 0.5f),
                    c.node.attr_int("max_size_per_class", 0), c.node.attr_int("max_total_size", 0), c.node.attr_int("change_coordinate_frame", 0) != 0};
  if (p.per_class < 0 || p.total < 1) return c.Fail("max_size_per_class must be >= 0 and max_total_size >= 1");
  const bool clip = c.has(2), valid = c.has(3);
  if (clip && c.in(2).numel() != batch * 4) return c.Fail("clip_window must be [batch, 4]");
  if (valid && c.in(3).numel() != batch) return c.Fail("num_valid_boxes must be [batch]");
  const std::vector<int64_t> counts = valid ? c.in(3).ToInt64Vector() : std::vector<int64_t>(static_cast<size_t>(batch), anchors);
  Tensor ob = Tensor::Zeros(DType::kF32, {batch, p.total, 4}), os = Tensor::Zeros(DType::kF32, {batch, p.total}),
         oc = Tensor::Zeros(DType::kF32, {batch, p.total}), on = Tensor::Zeros(DType::kI32, {batch});
  for (int64_t b = 0; b < batch; ++b) {
    Box window{};
    if (clip) std::copy_n(c.in(2).data<float>() + b * 4, 4, window.begin());
    const int64_t n = std::clamp<int64_t>(counts[static_cast<size_t>(b)], 0, anchors);
    auto dets = NmsImage(boxes.data<float>() + b * anchors * q * 4, scores.data<float>() + b * anchors * classes, n, q, classes,
                         clip ? &window : nullptr, p);
    for (size_t k = 0; k < dets.size(); ++k) {
      const int64_t at = b * p.total + static_cast<int64_t>(k);
      std::copy(dets[k].box.begin(), dets[k].box.end(), ob.mutable_data<float>() + at * 4);
      os.mutable_data<float>()[at] = dets[k].score;
      oc.mutable_data<float>()[at] = static_cast<float>(dets[k].cls);
    }
    on.mutable_data<int32_t>()[b] = static_cast<int32_t>(dets.size());
  }
  c.outputs[0] = std::move(ob), c.outputs[1] = std::move(os), c.outputs[2] = std::move(oc), c.outputs[3] = std::move(on);
  return Status::Ok();
}

// ONNX OneHot; a TF one (GE's OneHotD, attribute negative_is_off) gives a negative index the off value instead
// of counting it from the end.
Status OneHotKernel(KernelContext& c) {
  const std::vector<int64_t> idx = c.in(0).ToInt64Vector();
  const int64_t depth = c.in(1).ToInt64Vector().at(0);
  const Tensor& values = c.in(2);
  if (values.numel() != 2) return c.Fail("values must hold [off, on]");
  if (depth < 1) return c.Fail("depth must be at least 1");
  const Shape& is = c.in(0).shape();
  const auto rank = static_cast<int64_t>(is.size()) + 1;
  int64_t axis = c.node.attr_int("axis", -1);
  if (axis < 0) axis += rank;
  const bool negative_off = c.node.attr_int("negative_is_off", 0) != 0;
  // indices [outer, inner] around the axis; output [outer, depth, inner]
  const int64_t outer = std::accumulate(is.begin(), is.begin() + axis, int64_t{1}, std::multiplies<>()),
                inner = std::accumulate(is.begin() + axis, is.end(), int64_t{1}, std::multiplies<>());
  Shape os = is;
  os.insert(os.begin() + axis, depth);
  const std::vector<double> v = values.ToDoubleVector();
  Tensor y = Tensor::Empty(DType::kF32, os);
  float* out = y.mutable_data<float>();
  std::fill(out, out + y.numel(), static_cast<float>(v[0]));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t k = idx[static_cast<size_t>(o * inner + i)];
      if (k < 0 && !negative_off) k += depth;
      if (k >= 0 && k < depth) out[(o * depth + k) * inner + i] = static_cast<float>(v[1]);
    }
  c.outputs[0] = values.dtype() == DType::kF32 ? std::move(y) : CastTensor(y, values.dtype());
  return Status::Ok();
}

}  // namespace

void RegisterDetectionKernels() {
  RegisterKernel("BatchMultiClassNonMaxSuppression", {.fn = NmsKernel, .halves = Halves::kWiden});
  RegisterKernel("OneHot", OneHotKernel);
}

}  // namespace npu
