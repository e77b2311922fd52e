// .npy reading and writing (format versions 1.0-3.0, little-endian, C order).
#pragma once
#include <string>

#include "base/status.h"
#include "ir/tensor.h"

namespace npu {

// The returned tensor aliases the file's memory map.
Result<Tensor> ReadNpy(const std::string& path);
Status WriteNpy(const std::string& path, const Tensor& t);
std::string NpyHeader(const Tensor& t);  // magic + version + padded header dict
std::string NpyHeader(std::string_view descr, const Shape& shape);  // for element types Tensor lacks (uint32, ...)

}  // namespace npu
