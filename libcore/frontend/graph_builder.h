// What the TensorFlow and Caffe importers share: building an ir::Graph in npukit's internal op types (the
// ONNX names the schemas and kernels know, at opset 13) from framework ops. One framework op may become a
// few internal nodes (a TF Conv2D in NHWC is Transpose -> Conv -> Transpose); every node keeps the framework
// op's name in `original_names` and, for the node that stands for the op, CANN's Ascend IR type.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace npu {

// The opset the internal nodes follow (axes of Squeeze/Unsqueeze/ReduceSum and Split's sizes are inputs).
inline constexpr int kInternalOpset = 13;

class GraphBuilder {
 public:
  // Over an empty graph (an importer's) or one being mapped in place (GE's): new names avoid the nodes there.
  explicit GraphBuilder(Graph& g) : g_(g) {
    for (const Node& n : g.nodes) node_names_.insert(n.name);
  }
  Graph& graph() { return g_; }
  const Graph& graph() const { return g_; }

  struct Op {
    std::string type;            // internal op type
    std::vector<int> inputs;     // value ids, -1 for an omitted optional input
    AttrMap attrs = {};
    std::string ascend = {};     // CANN's type for this node, when it stands for the framework op
    int outputs = 1;
  };
  // Adds a node named `name` (made unique) for framework op(s) `origin`; its outputs are named `name`,
  // `name:1`, ... (the framework's tensor names) unless `out_names` gives them. Returns the output ids.
  std::vector<int> Add(const std::string& name, Op op, const std::vector<std::string>& origin, std::vector<std::string> out_names = {});
  int Add1(const std::string& name, Op op, const std::vector<std::string>& origin) { return Add(name, std::move(op), origin)[0]; }

  int Constant(const std::string& name, Tensor t);
  int Int64s(const std::string& name, const std::vector<int64_t>& values);  // a 1-D int64 constant
  int Scalar(const std::string& name, float value);                         // a 0-D float constant
  int Transpose(const std::string& name, int v, std::vector<int64_t> perm, const std::vector<std::string>& origin);
  int GraphInput(const std::string& name, DType dt, Shape shape, bool has_shape);

 private:
  Graph& g_;
  std::unordered_set<std::string> node_names_;
  std::string UniqueNode(const std::string& base);
  std::string UniqueValue(const std::string& base);
};

// Permutations between channels-last and channels-first layouts of rank 4 or 5 (NHWC <-> NCHW, NDHWC <-> NCDHW).
std::vector<int64_t> ToChannelsFirst(size_t rank);
std::vector<int64_t> ToChannelsLast(size_t rank);

}  // namespace npu
