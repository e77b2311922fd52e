// The Aipp op's schema (atc --insert_op_conf; ir/aipp_config.h): uint8 image in, the model input out.
#include "ops/families.h"

namespace npu {
namespace {

Status InferAipp(InferContext& c) {
  auto dtype = DTypeFromGe(static_cast<int32_t>(c.node.attr_int("output_dtype", static_cast<int64_t>(DType::kF32))));
  c.set_output(0, dtype.value_or(DType::kF32), c.node.attr_ints("output_shape"));
  return Status::Ok();
}

}  // namespace

// Input 1: dynamic AIPP's parameters (ir/aipp_config.h).
void RegisterAippSchemas() { RegisterSchema({"Aipp", 1, 2, 1, 1, Engine::kVector, InferAipp}); }

}  // namespace npu
