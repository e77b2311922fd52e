// ONNX -> ir::Graph. Parses the model from a memory map with the initializers' raw_data cut out first
// (weight_cut.h), so protobuf never copies the weights: an initializer is a view into the model file where
// its bytes are 64-byte aligned, else one copy made across the pool; external data is a view into its file.
// Checks every node against the op registry and reports all unsupported nodes at once.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct OnnxImportOptions {
  // Overrides for input shapes (--input_shape); unknown names are an E10016 error.
  std::map<std::string, Shape> input_shapes;
  // Output selection (--out_nodes): "node_name:output_index"; empty = the graph outputs.
  std::vector<std::pair<std::string, int>> out_nodes;
};

struct UnsupportedNode {
  std::string name, op_type, domain;
  int64_t opset;
  std::string reason;
};

struct OnnxModelInfo {
  int64_t opset = 0;
  std::string producer;
  std::vector<UnsupportedNode> unsupported;  // filled even when import fails on them
  std::vector<std::pair<std::string, std::string>> nodes;  // (name, op type) of every node, for reports
};

// Parses, checks and converts. On unsupported ops the Status lists every one of them (E16002) and
// `info->unsupported` holds them for reports.
Result<Graph> ImportOnnx(const std::string& path, const OnnxImportOptions& opts, OnnxModelInfo* info = nullptr);

// Reads a serialized TensorProto (the ONNX test-data .pb format) into a tensor.
Result<Tensor> ReadOnnxTensor(const std::string& path);

}  // namespace npu
