// The interface every framework front end implements (frontend/<framework>/): a model file in, an ir::Graph
// in the framework's op types out, plus what reports need (opset, producer, every node, the unsupported
// ones). Compile() picks the importer by atc's --framework number; nothing else names a framework.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct ImportOptions {
  // The weights file of frameworks that keep them apart (Caffe's .caffemodel: atc --weight).
  std::string weight;
  // Overrides for input shapes (--input_shape); unknown names are an E10016 error.
  std::map<std::string, Shape> input_shapes;
  // Output selection (--out_nodes): "node_name:output_index"; empty = the graph outputs.
  std::vector<std::pair<std::string, int>> out_nodes;
};

// What every framework translator returns (a TF op's, a Caffe layer's, a GE op's): nothing when it converted
// the op, or why it could not, in words for the one coded list of unsupported ops (E13010). A translator
// returns the reason as text: `return "its mode " + m + " is not supported";`, or `return {};` when done.
struct NotConverted {
  NotConverted(std::string why) : reason(std::move(why)) {}  // NOLINT: implicit, so a reason can be returned as is
  NotConverted(const char* why) : reason(why) {}             // NOLINT
  std::string reason;
};
using ConvertResult = std::optional<NotConverted>;

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
  std::vector<std::string> warnings;  // what the import left out, for the user (atc prints them)
};

class Importer {
 public:
  virtual ~Importer() = default;
  virtual std::string_view name() const = 0;  // "ONNX", for messages
  // The --input_format values the framework's models take (the first is the default).
  virtual std::vector<std::string_view> input_formats() const = 0;
  // Whether an image --input_format must fit every input (ONNX), or applies to the inputs of its rank only.
  virtual bool input_format_fits_all() const { return false; }
  // Parses, checks every node against the op schemas (all unsupported nodes reported at once, E16002) and
  // converts.
  virtual Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const = 0;
};

// "\n    name (type T): reason" per node: the list an unsupported-op error shows.
std::string UnsupportedList(const std::vector<UnsupportedNode>& bad);

// The importer for atc's --framework value (CANN's numbers: 0 Caffe, 1 MindSpore, 3 TensorFlow, 5 ONNX);
// null when this build has none.
const Importer* FindImporter(std::string_view framework);
// The --framework a reference-path model file is for, by its name: .onnx 5, .pb/.pbtxt 3, .prototxt 0, .air 1.
std::optional<std::string_view> FrameworkOfFile(std::string_view path);
// "0 (Caffe), ..., 5 (ONNX)": the --framework values this build takes, for messages and help.
std::string SupportedFrameworks();
// "Caffe .prototxt, ..., ONNX .onnx": the model files of each framework, for help.
std::string ModelFileKinds();
// "Caffe, MindSpore AIR, TensorFlow and ONNX", for a tool's one-line description.
std::string FrameworkNames();

}  // namespace npu
