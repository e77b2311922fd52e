#include "ops/reduce.h"

#include "ir/node_attrs.h"
#include "ops/families.h"

namespace npu {

Result<std::vector<bool>> ReducedAxes(const Node& n, int64_t rank, const Tensor* axes_input) {
  std::vector<int64_t> axes = axes_input ? axes_input->ToInt64Vector() : n.attr_ints("axes");
  std::vector<bool> red(static_cast<size_t>(rank), axes.empty() && !n.attr_int("noop_with_empty_axes", 0));
  for (int64_t a : axes) {
    int64_t ax = NormalizeAxis(a, rank);
    if (ax < 0 || ax >= rank) return Status::Error("E10001", n.op_type + " node", n.name, "axis " + std::to_string(a) + " out of range");
    red[ax] = true;
  }
  return red;
}

Shape ReducedShape(const Shape& in, const std::vector<bool>& red, bool keep) {
  Shape out;
  for (size_t d = 0; d < in.size(); ++d)
    if (!red[d]) out.push_back(in[d]);
    else if (keep) out.push_back(1);
  return out;
}

bool AxesIsInput(const Node& n) { return n.op_type == "ReduceSum" ? n.opset >= 13 : n.opset >= 18; }

namespace {

Status InferReduce(InferContext& c) {
  const Value& x = *c.in[0];
  bool axes_in = AxesIsInput(c.node) && c.has_input(1);
  if (!x.has_shape || (axes_in && !c.const_input(1))) {
    c.set_output(0, x.dtype, {}, false);
    return Status::Ok();
  }
  auto red = ReducedAxes(c.node, static_cast<int64_t>(x.shape.size()), axes_in ? c.const_input(1) : nullptr);
  if (!red.ok()) return red.status();
  c.set_output(0, x.dtype, ReducedShape(x.shape, red.value(), c.node.attr_int("keepdims", 1) != 0));
  return Status::Ok();
}

Status InferArg(InferContext& c) {
  const Value& x = *c.in[0];
  if (!x.has_shape) {
    c.set_output(0, DType::kI64, {}, false);
    return Status::Ok();
  }
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), static_cast<int64_t>(x.shape.size()));
  if (axis < 0 || axis >= static_cast<int64_t>(x.shape.size())) return c.Fail("axis out of range");
  std::vector<bool> red(x.shape.size(), false);
  red[axis] = true;
  const auto out_type = static_cast<DType>(c.node.attr_int(kArgOutputType, static_cast<int64_t>(DType::kI64)));
  if (out_type != DType::kI64 && out_type != DType::kI32) return c.Fail("the index type must be int32 or int64");
  c.set_output(0, out_type, ReducedShape(x.shape, red, c.node.attr_int("keepdims", 1) != 0));
  return Status::Ok();
}

}  // namespace

void RegisterReduceSchemas() {
  for (const char* name : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
  {
    OpSchema s{name, 1, 2, 1, 1, Engine::kVector, InferReduce};
    s.selects_values = std::string_view(name) == "ReduceMax" || std::string_view(name) == "ReduceMin";
    RegisterSchema(std::move(s));
  }
  RegisterSchema({"ArgMax", 1, 1, 1, 1, Engine::kVector, InferArg});
  RegisterSchema({"ArgMin", 1, 1, 1, 1, Engine::kVector, InferArg});
  RegisterSchema({"TopK", 1, 2, 2, 2, Engine::kAiCpu, [](InferContext& c) {
                const Value& x = *c.in[0];
                const Tensor* kt = c.const_input(1);
                if (!x.has_shape || (c.node.opset >= 10 && !kt)) {
                  c.set_output(0, x.dtype, {}, false);
                  c.set_output(1, DType::kI64, {}, false);
                  return Status::Ok();
                }
                int64_t k = kt ? kt->ToInt64Vector().at(0) : c.node.attr_int("k", 0);
                int64_t axis = NormalizeAxis(c.node.attr_int("axis", -1), static_cast<int64_t>(x.shape.size()));
                if (axis < 0 || axis >= static_cast<int64_t>(x.shape.size())) return c.Fail("axis out of range");
                Shape s = x.shape;
                s[axis] = k;
                c.set_output(0, x.dtype, s);
                c.set_output(1, DType::kI64, s);
                return Status::Ok();
              }});
  RegisterSchema({"CumSum", 2, 2, 1, 1, Engine::kVector, InferSameAsInput0});
}

}  // namespace npu
