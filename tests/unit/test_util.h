// Helpers shared by the unit tests.
#pragma once
#include <algorithm>
#include <vector>

#include "ir/tensor.h"

namespace npu {

// An fp32 tensor with the given shape and values.
inline Tensor F32(Shape s, std::vector<float> v) {
  Tensor t = Tensor::Empty(DType::kF32, std::move(s));
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

}  // namespace npu
