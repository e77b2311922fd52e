// The interface every framework front end implements (frontend/<framework>/): a model file in, an ir::Graph
// in the framework's op types out, plus what reports need (opset, producer, every node, the unsupported
// ones). Compile() picks the importer by atc's --framework number; nothing else names a framework.
#pragma once
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct ImportOptions {
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

struct ModelInfo {
  int64_t opset = 0;
  std::string producer;
  std::vector<UnsupportedNode> unsupported;  // filled even when import fails on them
  std::vector<std::pair<std::string, std::string>> nodes;  // (name, op type) of every node, for reports
};

class Importer {
 public:
  virtual ~Importer() = default;
  virtual std::string_view name() const = 0;  // "ONNX", for messages
  // Parses, checks every node against the op schemas (all unsupported nodes reported at once, E16002) and
  // converts.
  virtual Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const = 0;
};

// The importer for atc's --framework value (CANN's numbers: 0 Caffe, 1 MindSpore, 3 TensorFlow, 5 ONNX);
// null when this build has none.
const Importer* FindImporter(std::string_view framework);
// "5 (ONNX)": the --framework values this build takes, for messages.
std::string SupportedFrameworks();

}  // namespace npu
