// Detection post-processing ops as ATC leaves them in .om files: GE's BatchMultiClassNonMaxSuppression (TF's
// combined_non_max_suppression, an AI CPU op) and OneHot.
#include "ops/families.h"

namespace npu {
namespace {

// boxes [B, N, q, 4], scores [B, N, C] (q is 1 or C) -> nmsed_boxes [B, T, 4], nmsed_scores [B, T],
// nmsed_classes [B, T], nmsed_num [B] (int32), T = max_total_size.
Status InferNms(InferContext& c) {
  const Value &boxes = *c.in[0], &scores = *c.in[1];
  const int64_t total = c.node.attr_int("max_total_size", 0);
  if (total < 1) return c.Fail("max_total_size must be at least 1");
  if (!boxes.has_shape || !scores.has_shape) {
    for (int k = 0; k < 4; ++k) c.set_output(k, k == 3 ? DType::kI32 : scores.dtype, {}, false);
    return Status::Ok();
  }
  if (boxes.shape.size() != 4 || boxes.shape[3] != 4 || scores.shape.size() != 3) return c.Fail("boxes must be [batch, anchors, q, 4] and scores [batch, anchors, classes]");
  const int64_t b = boxes.shape[0];
  if (scores.shape[0] != b || scores.shape[1] != boxes.shape[1] || (boxes.shape[2] != 1 && boxes.shape[2] != scores.shape[2]))
    return c.Fail("boxes " + ShapeToString(boxes.shape) + " do not fit scores " + ShapeToString(scores.shape));
  c.set_output(0, boxes.dtype, {b, total, 4});
  c.set_output(1, scores.dtype, {b, total});
  c.set_output(2, scores.dtype, {b, total});
  c.set_output(3, DType::kI32, {b});
  return Status::Ok();
}

// indices, depth (a constant), values [off, on] -> indices' shape with depth inserted at `axis`, values' dtype.
Status InferOneHot(InferContext& c) {
  const Value& idx = *c.in[0];
  const Tensor* depth = c.const_input(1);
  if (!idx.has_shape || !depth || depth->numel() != 1) {
    c.set_output(0, c.in[2]->dtype, {}, false);
    return Status::Ok();
  }
  const auto rank = static_cast<int64_t>(idx.shape.size()) + 1;
  int64_t axis = c.node.attr_int("axis", -1);
  if (axis < -rank || axis >= rank) return c.Fail("axis " + std::to_string(axis) + " is outside the output's rank");
  if (axis < 0) axis += rank;
  Shape s = idx.shape;
  s.insert(s.begin() + axis, depth->ToInt64Vector()[0]);
  c.set_output(0, c.in[2]->dtype, s);
  return Status::Ok();
}

}  // namespace

void RegisterDetectionSchemas() {
  RegisterSchema({"BatchMultiClassNonMaxSuppression", 2, 4, 4, 4, Engine::kAiCpu, InferNms});
  RegisterSchema({"OneHot", 3, 3, 1, 1, Engine::kVector, InferOneHot});
}

}  // namespace npu
