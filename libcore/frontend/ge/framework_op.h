// GE's FrameworkOp: a TensorFlow op that GE leaves to the AI CPU as TF defines it. Its TF type is the attribute
// original_type and its TF NodeDef, attributes included, is serialized in node_def (GE's ATTR_NAME_FRAMEWORK_
// ORIGINAL_TYPE and ATTR_NAME_FRAMEWORK_NODE_DEF). Unwrapped, the node is that TF op with the NodeDef's
// attributes, and the GE op table (ge_ops.cc) maps it like any other op.
#pragma once
#include <string>

#include "ge_ir.pb.h"
#include "ir/graph.h"

namespace npu {

inline constexpr const char* kFrameworkOpType = "FrameworkOp";

// Sets n's op type to the TF type and adds the NodeDef's scalar and list attributes (TF dtypes as npukit's
// DType numbers). Returns why the node_def cannot be read, or "".
std::string UnwrapFrameworkOp(const npukit::ge::OpDef& op, Node& n);

}  // namespace npu
