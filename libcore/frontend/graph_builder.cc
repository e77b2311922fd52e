#include "frontend/graph_builder.h"

#include "ir/node_attrs.h"

namespace npu {

std::string GraphBuilder::UniqueNode(const std::string& base) {
  if (node_names_.insert(base).second) return base;
  for (int i = 1;; ++i)
    if (std::string s = base + "_" + std::to_string(i); node_names_.insert(s).second) return s;
}

std::string GraphBuilder::UniqueValue(const std::string& base) {
  if (g_.FindValue(base) < 0) return base;
  for (int i = 1;; ++i)
    if (std::string s = base + "_" + std::to_string(i); g_.FindValue(s) < 0) return s;
}

std::vector<int> GraphBuilder::Add(const std::string& name, Op op, const std::vector<std::string>& origin, std::vector<std::string> out_names) {
  Node n;
  n.name = UniqueNode(name);
  n.op_type = std::move(op.type);
  n.ascend_type = std::move(op.ascend);
  n.opset = kInternalOpset;
  n.inputs = std::move(op.inputs);
  n.attrs = std::move(op.attrs);
  n.original_names = origin;
  for (int k = 0; k < op.outputs; ++k) {
    std::string base = k < static_cast<int>(out_names.size()) ? out_names[k] : k == 0 ? n.name : n.name + ":" + std::to_string(k);
    int v = g_.AddValue(UniqueValue(base));
    g_.values[v].producer = static_cast<int>(g_.nodes.size());
    n.outputs.push_back(v);
  }
  std::vector<int> outs = n.outputs;
  g_.nodes.push_back(std::move(n));
  return outs;
}

int GraphBuilder::Constant(const std::string& name, Tensor t) {
  int v = g_.AddValue(UniqueValue(name));
  Value& val = g_.values[v];
  val.dtype = t.dtype();
  val.shape = t.shape();
  val.has_shape = true;
  val.constant = std::move(t);
  return v;
}

int GraphBuilder::Int64s(const std::string& name, const std::vector<int64_t>& values) {
  Tensor t = Tensor::Empty(DType::kI64, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.mutable_data<int64_t>());
  return Constant(name, std::move(t));
}

int GraphBuilder::Scalar(const std::string& name, float value) {
  Tensor t = Tensor::Empty(DType::kF32, {});
  *t.mutable_data<float>() = value;
  return Constant(name, std::move(t));
}

int GraphBuilder::Transpose(const std::string& name, int v, std::vector<int64_t> perm, const std::vector<std::string>& origin) {
  return Add1(name, {"Transpose", {v}, {{"perm", std::move(perm)}, {kLayoutTransposeAttr, int64_t{1}}}}, origin);
}

int GraphBuilder::GraphInput(const std::string& name, DType dt, Shape shape, bool has_shape) {
  int v = g_.AddValue(UniqueValue(name));
  Value& val = g_.values[v];
  val.dtype = dt;
  val.shape = std::move(shape);
  val.has_shape = has_shape;
  g_.inputs.push_back(v);
  return v;
}

std::vector<int64_t> ToChannelsFirst(size_t rank) { return rank == 5 ? std::vector<int64_t>{0, 4, 1, 2, 3} : std::vector<int64_t>{0, 3, 1, 2}; }
std::vector<int64_t> ToChannelsLast(size_t rank) { return rank == 5 ? std::vector<int64_t>{0, 2, 3, 4, 1} : std::vector<int64_t>{0, 2, 3, 1}; }

}  // namespace npu
