// ONNX -> ir::Graph. Parses the model from a memory map with the initializers' raw_data cut out first
// (weight_cut.h), so protobuf never copies the weights: an initializer is a view into the model file where
// its bytes are 64-byte aligned, else one copy made across the pool; external data is a view into its file.
// Checks every node against the op registry and reports all unsupported nodes at once.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/importer.h"
#include "ir/graph.h"

namespace npu {

// Parses, checks and converts. On unsupported ops the Status lists every one of them (E16002) and
// `info->unsupported` holds them for reports.
Result<Graph> ImportOnnx(const std::string& path, const ImportOptions& opts, ModelInfo* info = nullptr);
// ImportOnnx behind the Importer interface (--framework=5).
const Importer& OnnxImporter();

// Reads a serialized TensorProto (the ONNX test-data .pb format) into a tensor.
Result<Tensor> ReadOnnxTensor(const std::string& path);

}  // namespace npu
