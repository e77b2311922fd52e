#include "ops/conv.h"
#include "ops/quant.h"

#include <algorithm>

#include "ops/families.h"
#include "ops/window.h"

namespace npu {
namespace {

// Fills the last r entries of a 3-vector from a per-spatial-dim attribute list.
Dims3 Widen(const std::vector<int64_t>& v, int64_t fill) {
  Dims3 d{fill, fill, fill};
  std::copy(v.begin(), v.end(), d.end() - static_cast<long>(v.size()));
  return d;
}

Status RankError(const Node& node, size_t r) {
  return Status::Error("E10055", node.op_type + " node", node.name,
                       std::to_string(r) + "-D convolution is not supported (1-D, 2-D and 3-D are)");
}

Status InferConv(InferContext& c, bool transpose) {
  const Value &x = *c.in[0], &w = *c.in[1];
  NPU_ASSIGN_OR_RETURN(DType out, CubeOutputDtype(c, 2));
  if (!x.has_shape || !w.has_shape) {
    c.set_output(0, out, {}, false);
    return Status::Ok();
  }
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) return c.Fail("input and weight ranks must match and be >= 3");
  auto geo = transpose ? MakeConvTranspose(c.node, x.shape, w.shape) : MakeConv(c.node, x.shape, w.shape, false);
  if (!geo.ok()) return geo.status();
  if (c.has_input(2) && c.in[2]->has_shape && (c.in[2]->shape.size() != 1 || c.in[2]->shape[0] != geo.value().M))
    return c.Fail("the bias has shape " + ShapeToString(c.in[2]->shape) + "; it needs one value per output channel (" + std::to_string(geo.value().M) + ")");
  c.set_output(0, out, geo.value().OutShape(x.shape[0]));
  return Status::Ok();
}

}  // namespace

Result<ConvGeom> MakeConv(const Node& node, const Shape& x, const Shape& w, bool transpose) {
  size_t r = x.size() - 2;
  if (r < 1 || r > 3) return RankError(node, r);
  ConvGeom p;
  p.rank = r;
  p.G = node.attr_int("group", 1);
  p.C = x[1];
  p.M = transpose ? w[1] * p.G : w[0];
  std::vector<int64_t> k = node.attr_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  Shape sp(x.begin() + 2, x.end());
  if (!transpose) {
    NPU_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindow(node, sp, k));
    p.in = Widen(g.in, 1), p.k = Widen(g.kernel, 1), p.out = Widen(g.out, 1);
    p.stride = Widen(g.stride, 1), p.dil = Widen(g.dilation, 1), p.pad = Widen(g.pad_begin, 0);
  }
  if (p.G <= 0 || p.C % p.G != 0 || p.M % p.G != 0)
    return Status::Error("E10001", node.op_type + " node", node.name, "channels are not divisible by group");
  if (!transpose && w[1] != p.Cg())
    return Status::Error("E10001", node.op_type + " node", node.name,
                         "weight expects " + std::to_string(w[1] * p.G) + " input channels, input has " + std::to_string(p.C));
  return p;
}

Result<ConvGeom> MakeConvTranspose(const Node& n, const Shape& x, const Shape& w) {
  NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConv(n, x, w, true));
  size_t r = x.size() - 2;
  std::vector<int64_t> k = n.attr_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  auto strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  auto dil = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  auto outpad = n.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  auto out_shape = n.attr_ints("output_shape");
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (k.size() != r || strides.size() != r || dil.size() != r || outpad.size() != r || pads.size() != 2 * r)
    return Status::Error("E10001", n.op_type + " node", n.name, "attribute lengths do not match the spatial rank");
  if (out_shape.size() > r) out_shape.erase(out_shape.begin(), out_shape.end() - static_cast<long>(r));
  std::vector<int64_t> out(r), pb(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t in = x[2 + i], eff = (k[i] - 1) * dil[i] + 1;
    int64_t full = strides[i] * (in - 1) + outpad[i] + eff;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t target = out_shape.empty() ? in * strides[i] : out_shape[i];
      int64_t total = full - target;
      bool upper = auto_pad != "SAME_LOWER";
      pb[i] = upper ? total / 2 : total - total / 2;
      out[i] = target;
    } else {
      if (auto_pad == "VALID") pads[i] = pads[i + r] = 0;
      pb[i] = pads[i];
      out[i] = full - pads[i] - pads[i + r];
    }
  }
  p.in = Widen(Shape(x.begin() + 2, x.end()), 1), p.k = Widen(k, 1), p.out = Widen(out, 1);
  p.stride = Widen(strides, 1), p.dil = Widen(dil, 1), p.pad = Widen(pb, 0);
  return p;
}

void RegisterConvSchemas() {
  RegisterSchema({"Conv", 2, 3, 1, 1, Engine::kCube, [](InferContext& c) { return InferConv(c, false); }});
  RegisterSchema({"ConvTranspose", 2, 3, 1, 1, Engine::kCube, [](InferContext& c) { return InferConv(c, true); }});
}

}  // namespace npu
