// ONNX op type -> the Ascend IR op type CANN's ONNX parser gives it (one table, ascend_types.cc).
#pragma once
#include <string>

#include "ir/graph.h"

namespace npu {

// The Ascend IR type of a framework node; `rank` is the rank of its first input (Conv2D vs Conv3D).
// Types without a row keep their name (Relu, Add, Cast, ...).
std::string AscendOpType(const Node& n, size_t rank);
// The inverse, for ops described by their Ascend IR type (atc --singleop): the framework type whose kernel
// runs it (RealDiv -> Div, GatherV2 -> Gather); types without a row are their own.
std::string FrameworkOpType(std::string_view ascend);
// Sets every node's ascend_type (nodes a pass already typed keep theirs).
void MapAscendOpTypes(Graph& g);

}  // namespace npu
