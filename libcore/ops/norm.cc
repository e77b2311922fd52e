// Normalisation and softmax schemas.
#include "ops/families.h"

namespace npu {
namespace {

Status InferLayerNorm(InferContext& c) {
  NPU_RETURN_IF_ERROR(InferSameAsInput0(c));
  if (!c.in[0]->has_shape) return Status::Ok();
  Shape s = c.in[0]->shape;
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", -1), static_cast<int64_t>(s.size()));
  if (axis < 0 || axis >= static_cast<int64_t>(s.size())) return c.Fail("axis out of range");
  for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) s[d] = 1;
  for (size_t i = 1; i < c.out.size(); ++i) c.set_output(i, DType::kF32, s);
  return Status::Ok();
}

Status InferBatchNorm(InferContext& c) {
  c.set_output(0, c.in[0]->dtype, c.in[0]->shape, c.in[0]->has_shape);
  for (size_t i = 1; i < c.out.size(); ++i) c.set_output(i, c.in[3]->dtype, c.in[3]->shape, c.in[3]->has_shape);
  return Status::Ok();
}

}  // namespace

void RegisterNormSchemas() {
  RegisterSchema({"BatchNormalization", 5, 5, 1, 3, Engine::kVector, InferBatchNorm});
  RegisterSchema({"InstanceNormalization", 3, 3, 1, 1, Engine::kVector, InferSameAsInput0});
  RegisterSchema({"LRN", 1, 1, 1, 1, Engine::kVector, InferSameAsInput0});
  RegisterSchema({"LayerNormalization", 1, 3, 1, 3, Engine::kVector, InferLayerNorm});
  RegisterSchema({"Softmax", 1, 1, 1, 1, Engine::kVector, InferSameAsInput0});
  RegisterSchema({"LogSoftmax", 1, 1, 1, 1, Engine::kVector, InferSameAsInput0});
  RegisterSchema({"Hardmax", 1, 1, 1, 1, Engine::kVector, InferSameAsInput0});
}

}  // namespace npu
