#include "ops/resize.h"

#include <cmath>

#include "ops/families.h"

namespace npu {

Result<ResizeParams> ResizeParamsFor(const Node& n, const Shape& in, const std::vector<const Tensor*>& ins) {
  auto at = [&](size_t i) { return i < ins.size() ? ins[i] : nullptr; };
  bool v11 = n.op_type == "Resize" && n.opset >= 11;
  const Tensor* scales = v11 ? at(2) : at(1);
  const Tensor* sizes = v11 ? at(3) : nullptr;
  ResizeParams p;
  size_t r = in.size();
  if (sizes && sizes->numel() > 0) {
    auto s = sizes->ToInt64Vector();
    if (s.size() != r) return Status::Error("E10001", "Resize node", n.name, "sizes must have one entry per input dim");
    p.out = s;
    for (size_t d = 0; d < r; ++d) p.scales.push_back(in[d] ? static_cast<double>(s[d]) / static_cast<double>(in[d]) : 1.0);
  } else {
    std::vector<double> sc;
    if (scales && scales->numel() > 0) sc = scales->ToDoubleVector();
    else
      for (float f : n.attr_floats("scales")) sc.push_back(f);
    if (sc.size() != r) return Status::Error("E10001", n.op_type + " node", n.name, "scales must have one entry per input dim");
    p.scales = sc;
    for (size_t d = 0; d < r; ++d) p.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(in[d]) * static_cast<float>(sc[d]))));
  }
  if (v11 && at(1) && at(1)->numel() == static_cast<int64_t>(2 * r)) p.roi = at(1)->ToDoubleVector();
  return p;
}

namespace {

Status InferResize(InferContext& c) {
  std::vector<const Tensor*> ins;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    ins.push_back(c.const_input(i));
    if (i > 0 && c.has_input(i) && !ins.back()) {
      c.set_output(0, c.in[0]->dtype, {}, false);
      return Status::Ok();
    }
  }
  if (!c.in[0]->has_shape) {
    c.set_output(0, c.in[0]->dtype, {}, false);
    return Status::Ok();
  }
  auto p = ResizeParamsFor(c.node, c.in[0]->shape, ins);
  if (!p.ok()) return p.status();
  c.set_output(0, c.in[0]->dtype, p.value().out);
  return Status::Ok();
}

}  // namespace

void RegisterResizeSchemas() {
  for (const char* name : {"Resize", "Upsample"}) {
    OpSchema s{name, 1, 4, 1, 1, Engine::kVector, InferResize};
    s.fixed_dtype_inputs = {1, 2};  // roi and scales are geometry, not data: they keep their dtype
    RegisterSchema(std::move(s));
  }
}

}  // namespace npu
