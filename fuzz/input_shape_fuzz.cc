// --input_shape in its three readings (fixed shapes, the ordered list, ranges with ~ and -1).
#include <string_view>

#include "frontend/input_shape.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view spec(reinterpret_cast<const char*>(data), size);
  (void)npu::ParseInputShape(spec);
  (void)npu::ParseInputShapeList(spec);
  (void)npu::ParseInputShapeRanges(spec);
  return 0;
}
