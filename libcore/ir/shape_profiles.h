// Shape profiles (atc --dynamic_batch_size / --dynamic_image_size / --dynamic_dims) and input ranges
// (--input_shape "x:1~8,..."): what the flags parse into, the .om stores and the runtime checks.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/tensor.h"

namespace npu {

// The shape profiles of a model converted with --dynamic_batch_size, --dynamic_image_size or --dynamic_dims.
struct ShapeProfiles {
  std::string kind;  // "batch", "image_size", "dims"; empty for a static model
  std::vector<std::pair<std::string, Shape>> inputs;  // as --input_shape gave them: -1 where a profile decides
  std::vector<std::vector<int64_t>> values;            // per profile: the value of each -1 (batch: one value)

  bool empty() const { return kind.empty(); }
  // Every input's shape at profile k.
  std::vector<std::pair<std::string, Shape>> ShapesAt(size_t k) const;
  // "batch 4", "image size 224,224", "dims 1,2" (for messages and --mode=6).
  std::string Describe(size_t k) const;
  std::string DescribeAll() const;  // every profile, "; "-separated
  // The profile whose -1 dims take `values`, or an error naming every profile.
  Result<size_t> Find(const std::vector<int64_t>& values, const std::string& flag) const;
};

// The extra input CANN adds to a profile model: the profile's values, so the runtime can select it.
inline constexpr const char* kShapeDataInput = "ascend_mbatch_shape_data";

// The dims an input of a dynamic-shape model may take (atc --input_shape "x:1~8,3,224,224").
struct InputRange {
  std::string name;
  Shape min, max;  // per dim; min == max for a fixed dim
};

}  // namespace npu
