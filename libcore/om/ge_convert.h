// npukit's MODEL_DEF on disk is CANN's ge.proto.ModelDef (ge_ir.proto), so Netron and CANN's tools read it.
// In memory the .om code keeps its own om.proto messages; these two functions translate, losslessly, between
// them: graph inputs become Data ops, weights Const ops (their bytes located by the `value` TensorDef's
// data_offset and weight_size, as CANN does), graph outputs a NetOutput op, op inputs "op:index"; what GE has no
// field for (npukit's kernel type, opset, engine, has_shape, FRACTAL_Z groups, shape profiles, input ranges,
// external weight files) travels as attributes named _npukit_*.
#pragma once
#include <string>

#include "base/status.h"
#include "ge_ir.pb.h"
#include "om.pb.h"

namespace npu::om {

// `feature_map_bytes`, when given, gets the feature-map memory the ops' offsets need (om/ge_op_fields.h).
npukit::ge::ModelDef ToGeModel(const ModelDef& md, uint64_t* feature_map_bytes = nullptr);
Result<ModelDef> FromGeModel(const npukit::ge::ModelDef& ge, const std::string& path);
// An attribute as text: a string as it is, numbers in decimal, lists joined with commas (model attributes,
// which npukit keeps as strings).
std::string GeAttrText(const npukit::ge::AttrDef& a);

}  // namespace npu::om
