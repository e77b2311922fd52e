// --input_shape as CANN spells it, for every tool that takes it (atc, aoe, msame's .onnx path):
// "in1:1,3,224,224;in2:1,10", with -1 for a dim a shape profile fills and min~max for a ranged dim.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/shape_profiles.h"
#include "ir/tensor.h"

namespace npu {

// Per input, the min and max of every dim: "n" -> n..n, "-1" -> -1..-1 (a profile's), "1~8" -> 1..8.
// Errors: E10002 (syntax), E10048 (a malformed range).
Result<std::vector<InputRange>> ParseInputShapeRanges(std::string_view spec);
// A range's shape as the graph holds it: its fixed dims, -1 for a ranged one.
Shape ShapeOf(const InputRange& r);
// The same in the order given, ranges and -1 as -1.
Result<std::vector<std::pair<std::string, Shape>>> ParseInputShapeList(std::string_view spec);
// The same by name.
Result<std::map<std::string, Shape>> ParseInputShape(std::string_view spec);
// The inverse of ParseInputShapeList: "in1:1,3,224,224;in2:1,10".
std::string InputShapeSpec(const std::vector<std::pair<std::string, Shape>>& shapes);

}  // namespace npu
