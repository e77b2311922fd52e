// The TensorFlow importer's inside, shared by tf_importer.cc (the file, the graph walk, inputs and outputs)
// and tf_ops.cc (one converter per TF op). Not for use outside frontend/tf.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "frontend/convert_context.h"
#include "frontend/graph_builder.h"
#include "frontend/importer.h"
#include "tf_graph.pb.h"

namespace npu::tf {

class Converter;
// Emits the internal nodes for one TF node and binds its outputs (Converter::Bind); or says why it cannot
// (frontend/importer.h's ConvertResult, which every importer's translators return).
using ConvertFn = ConvertResult (*)(Converter& c, const npukit::tf::NodeDef& n);

struct OpEntry {
  std::string_view tf_type;
  ConvertFn convert;
};
// The table of supported ops (tf_ops.cc) and why the known-unsupported ones are not.
const OpEntry* FindOp(std::string_view tf_type);
std::optional<std::string> KnownUnsupported(std::string_view tf_type);

// The TF side of the shared converter context (frontend/convert_context.h): a NodeDef's inputs and attrs, and
// how many nodes read each output. Tensor names are TF's "node:k".
class Converter : public ConvertContext {
 public:
  Converter(Graph& g, std::vector<std::span<const std::byte>> cuts, std::shared_ptr<const void> file)
      : ConvertContext(g), cuts_(std::move(cuts)), file_(std::move(file)) {}

  // The value of the node's j-th data input (control inputs are gone by now). A node with fewer inputs than
  // its op reads is a broken model: the import fails (E10041) after the walk, and a stand-in value lets the
  // converter finish meanwhile.
  int In(const npukit::tf::NodeDef& n, int j);
  int NumInputs(const npukit::tf::NodeDef& n) const { return n.input_size(); }
  // The constant behind input j, when it is one. The pointer is into the graph's values: adding a value
  // (any GraphBuilder call) may move it, so read what you need first.
  const Tensor* ConstIn(const npukit::tf::NodeDef& n, int j) const;
  std::optional<std::vector<int64_t>> IntsIn(const npukit::tf::NodeDef& n, int j) const;
  // How many data inputs of other nodes read output k of node `name`.
  int Readers(const std::string& name, int k = 0) const;

  // Binds output k of TF node `n` to value v (the TF tensor "name:k").
  void Bind(const npukit::tf::NodeDef& n, int k, int v);
  std::optional<int> Lookup(const std::string& tensor) const;

  // Attrs.
  const npukit::tf::AttrValue* Attr(const npukit::tf::NodeDef& n, std::string_view key) const;
  int64_t AttrInt(const npukit::tf::NodeDef& n, std::string_view key, int64_t def) const;
  float AttrFloat(const npukit::tf::NodeDef& n, std::string_view key, float def) const;
  bool AttrBool(const npukit::tf::NodeDef& n, std::string_view key, bool def) const;
  std::string AttrString(const npukit::tf::NodeDef& n, std::string_view key, std::string def = {}) const;
  std::vector<int64_t> AttrInts(const npukit::tf::NodeDef& n, std::string_view key) const;
  std::optional<int> AttrType(const npukit::tf::NodeDef& n, std::string_view key) const;

  // A TF TensorProto as a tensor (cut-out content located in the file).
  Result<Tensor> TensorOf(const npukit::tf::TensorProto& t, const std::string& where) const;

  // Data edges, registered before conversion: `reader` reads `tensor` ("node:k").
  void Consumed(const std::string& tensor, const npukit::tf::NodeDef* reader) { readers_[tensor].push_back(reader); }

 private:
  std::vector<std::span<const std::byte>> cuts_;
  std::shared_ptr<const void> file_;
  std::map<std::string, std::vector<const npukit::tf::NodeDef*>> readers_;  // "node:k" -> data readers
  int missing_ = -1;  // the stand-in for inputs a node lacks
};

// "node", "node:k", "^node" -> ("node", k); control edges give k = -1.
std::pair<std::string, int> ParseInputName(std::string_view s);
std::string TensorName(std::string_view node, int k);
std::optional<DType> FromTfType(int t);

}  // namespace npu::tf
