#include "ir/op_schema.h"

#include <algorithm>

#include "ir/node_attrs.h"

namespace npu {

void InferContext::set_output(size_t i, DType t, Shape s, bool has_shape) {
  if (i >= out.size() || out[i] == nullptr) return;
  out[i]->dtype = t;
  out[i]->shape = std::move(s);
  out[i]->has_shape = has_shape;
}

Status InferContext::Fail(std::string reason) const {
  return Status::Error("E10001", node.op_type + " node", node.name, std::move(reason),
                       "Check the model: the operator's inputs do not fit its definition.");
}

OpSchemaRegistry& OpSchemaRegistry::Get() {
  static OpSchemaRegistry r;
  return r;
}

void OpSchemaRegistry::Register(OpSchema schema) {
  auto it = std::find_if(schemas_.begin(), schemas_.end(), [&](const OpSchema& s) { return s.type == schema.type; });
  if (it != schemas_.end()) *it = std::move(schema);
  else schemas_.push_back(std::move(schema));
}

const OpSchema* OpSchemaRegistry::Find(std::string_view type) const {
  for (const auto& s : schemas_)
    if (s.type == type) return &s;
  return nullptr;
}

std::vector<std::string> OpSchemaRegistry::Types() const {
  std::vector<std::string> v;
  for (const auto& s : schemas_) v.push_back(s.type);
  std::sort(v.begin(), v.end());
  return v;
}

int64_t NormalizeAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

Result<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da == db || db == 1) out[i] = da;
    else if (da == 1) out[i] = db;
    else if (da < 0 || db < 0) out[i] = -1;
    else
      return Status::Error("E10001", "shapes", ShapeToString(a) + " and " + ShapeToString(b),
                           "the shapes cannot be broadcast together");
  }
  return out;
}

namespace {
Status InferBroadcastTo(InferContext& c, DType out_type) {
  Shape s;
  bool known = true;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    if (!c.has_input(i)) continue;
    if (!c.in[i]->has_shape) {
      known = false;
      continue;
    }
    auto r = BroadcastShapes(s, c.in[i]->shape);
    if (!r.ok()) return c.Fail(r.status().reason() + " (" + ShapeToString(s) + " vs " + ShapeToString(c.in[i]->shape) + ")");
    s = r.value();
  }
  c.set_output(0, out_type, s, known);
  return Status::Ok();
}
}  // namespace

Status InferSameAsInput0(InferContext& c) {
  for (size_t i = 0; i < c.out.size(); ++i) c.set_output(i, c.in[0]->dtype, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}
Status InferBroadcast(InferContext& c) { return InferBroadcastTo(c, c.in[0]->dtype); }
Status InferBroadcastBool(InferContext& c) { return InferBroadcastTo(c, DType::kBool); }

std::string ArityProblem(const OpSchema& s, const Graph& g, const Node& n) {
  auto range = [](int lo, int hi) { return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi); };
  auto count = static_cast<int64_t>(n.inputs.size());
  int64_t max_inputs = s.max_inputs + (n.has_attr(kEpilogueResidualInput) ? 1 : 0);  // UB fusion's residual joins the inputs
  if (count < s.min_inputs || count > max_inputs)
    return "has " + std::to_string(count) + " input(s); " + s.type + " takes " + range(s.min_inputs, s.max_inputs);
  count = static_cast<int64_t>(n.outputs.size());
  const int64_t max_outputs = s.max_outputs + (n.has_attr(kDualQuantOutput) ? 1 : 0);  // quant fusion's int8 second output
  if (count < s.min_outputs || count > max_outputs)
    return "has " + std::to_string(count) + " output(s); " + s.type + " gives " + range(s.min_outputs, s.max_outputs);
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= static_cast<int>(g.values.size()) || (n.inputs[i] < 0 && static_cast<int>(i) < s.min_inputs))
      return "input " + std::to_string(i) + " is missing; " + s.type + " needs its first " + std::to_string(s.min_inputs);
  for (int o : n.outputs)
    if (o < 0 || o >= static_cast<int>(g.values.size())) return "an output is missing";
  return {};
}

Status InferNode(Graph& g, const Node& n) {
  const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
  if (!s) return Status::Error("E16002", "node", n.name, "no schema registered for op type " + n.op_type);
  InferContext c{n, {}, {}};
  if (std::string why = ArityProblem(*s, g, n); !why.empty()) return c.Fail(why);
  for (int i : n.inputs) c.in.push_back(i < 0 ? nullptr : &g.values[i]);
  for (int o : n.outputs) c.out.push_back(&g.values[o]);
  Status st = s->infer(c);
  if (!st.ok()) return st.with_context("node " + n.name + " (" + n.op_type + ")");
  if (n.has_attr(kDualQuantOutput) && c.out.size() == 2) c.set_output(1, DType::kI8, c.out[0]->shape, c.out[0]->has_shape);
  for (const Value* out : c.out)  // a shape no tensor can have stops here, before a pass or kernel sizes memory by it
    if (out && out->has_shape)
      if (std::string why = ShapeLimitProblem(out->shape); !why.empty()) return c.Fail("output '" + out->name + "' would be " + why);
  return st;
}

Status InferGraph(Graph& g) {
  for (const auto& n : g.nodes) NPU_RETURN_IF_ERROR(InferNode(g, n));
  return Status::Ok();
}

}  // namespace npu
