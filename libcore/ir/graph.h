// The graph IR: values (named tensors with dtype/shape, optionally constant) and nodes in topological
// order. Every node remembers the framework op names it came from, so fusion never loses the mapping
// that dumps and accuracy comparison need.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "base/status.h"
#include "ir/device_format.h"
#include "ir/tensor.h"

namespace npu {

using Attr = std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
                          std::vector<std::string>, Tensor>;
using AttrMap = std::map<std::string, Attr, std::less<>>;

struct Value {
  std::string name;
  DType dtype = DType::kUndefined;
  Shape shape;             // dims < 0 are unknown
  bool has_shape = false;  // false: rank unknown
  std::string layout;      // graph inputs: atc --input_format; empty = by rank (see LayoutOf)
  std::optional<Tensor> constant;
  int producer = -1;  // node index, -1 for graph inputs and constants
  // The layout the device holds the value in, when atc assigned one other than the origin layout
  // (NC1HWC0, FRACTAL_Z, FRACTAL_NZ; see ir/device_format.h). `shape` stays the origin shape: kernels
  // compute on it, the .om and dumps record the device layout.
  std::optional<Format> device_format;
  int64_t device_groups = 1;  // grouped FRACTAL_Z (the dump's sub_format)
};

// The layout recorded for a value: its own when set, else NCHW for 4-D and ND otherwise.
inline std::string LayoutOf(const Value& v) { return !v.layout.empty() ? v.layout : v.shape.size() == 4 ? "NCHW" : "ND"; }
Format OriginFormat(const Value& v);  // LayoutOf as a Format (ND when the name is not one)
Format DeviceFormat(const Value& v);  // device_format, else the origin format
// The value's device layout and shape (the origin shape when the format is not blocked or the shape unknown).
DeviceLayout DeviceLayoutOf(const Value& v);
Shape DeviceShapeOf(const Value& v);

struct Node {
  // op_type selects the schema and kernel (the ONNX name, or npukit's for fused ops); ascend_type is the
  // Ascend IR type users see (dump names, --mode=1 JSON, mixed-precision lists), set by atc's mapping.
  std::string name, op_type, domain, ascend_type;
  int opset = 0;
  std::vector<int> inputs;  // value indices; -1 marks an omitted optional input
  std::vector<int> outputs;
  AttrMap attrs;
  std::vector<std::string> original_names;

  bool has_attr(std::string_view k) const { return attrs.find(k) != attrs.end(); }
  int64_t attr_int(std::string_view k, int64_t def) const;
  float attr_float(std::string_view k, float def) const;
  std::string attr_string(std::string_view k, std::string def = {}) const;
  std::vector<int64_t> attr_ints(std::string_view k, std::vector<int64_t> def = {}) const;
  std::vector<float> attr_floats(std::string_view k) const;
  const Tensor* attr_tensor(std::string_view k) const;
  // Attributes that hold a comma-separated list of names (per-node decisions such as _fusion_off).
  bool attr_list_has(std::string_view k, std::string_view item) const;
  void attr_list_add(std::string_view k, std::string_view item);
};

class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;
  std::vector<int> inputs, outputs;  // value indices

  int AddValue(std::string name);  // returns the existing index if the name is taken
  int FindValue(std::string_view name) const;  // -1 if absent
  // Gives value v a new (unused) name; passes use it to hand a graph output's name to an inserted node.
  void RenameValue(int v, std::string new_name);
  // Checks that names are unique, every input is produced before use and outputs exist.
  Status Verify() const;
  // Human-readable dump, one node per line.
  std::string ToText() const;
  // Recomputes Value::producer and drops nodes whose outputs nobody reads.
  void RemoveDeadNodes();

 private:
  std::unordered_map<std::string, int> index_;
};

std::string AttrToString(const Attr& a);
// The permutation from node n's output 0 (channels-first) to the framework's layout of that tensor, when the
// node carries kFrameworkLayoutAttr and the output has the layout's rank; empty otherwise.
std::vector<int64_t> FrameworkLayoutPerm(const Node& n, size_t rank);
// The type shown to users: the Ascend IR type once atc has mapped it, the framework type before.
inline const std::string& ShownType(const Node& n) { return n.ascend_type.empty() ? n.op_type : n.ascend_type; }

}  // namespace npu
