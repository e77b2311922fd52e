// Pooling schemas.
#include "ops/families.h"
#include "ops/window.h"

namespace npu {
namespace {

Status InferPool(InferContext& c) {
  const Value& x = *c.in[0];
  if (!x.has_shape) {
    c.set_output(0, x.dtype, {}, false);
    return Status::Ok();
  }
  if (x.shape.size() < 3) return c.Fail("pooling needs at least one spatial dim");
  Shape sp(x.shape.begin() + 2, x.shape.end());
  auto g = ComputeWindow(c.node, sp, c.node.attr_ints("kernel_shape"), c.node.attr_int("ceil_mode", 0) != 0);
  if (!g.ok()) return g.status();
  Shape os = {x.shape[0], x.shape[1]};
  os.insert(os.end(), g.value().out.begin(), g.value().out.end());
  c.set_output(0, x.dtype, os);
  if (c.out.size() > 1) c.set_output(1, DType::kI64, os);
  return Status::Ok();
}

Status InferGlobalPool(InferContext& c) {
  Shape s = c.in[0]->shape;
  for (size_t d = 2; d < s.size(); ++d) s[d] = 1;
  c.set_output(0, c.in[0]->dtype, s, c.in[0]->has_shape);
  return Status::Ok();
}

}  // namespace

void RegisterPoolSchemas() {
  OpSchema max_pool{"MaxPool", 1, 1, 1, 2, Engine::kVector, InferPool}, global_max_pool{"GlobalMaxPool", 1, 1, 1, 1, Engine::kVector, InferGlobalPool};
  max_pool.selects_values = global_max_pool.selects_values = true;  // a window's maximum, or -inf for an empty one
  RegisterSchema(std::move(max_pool));
  RegisterSchema({"AveragePool", 1, 1, 1, 1, Engine::kVector, InferPool});
  RegisterSchema({"GlobalAveragePool", 1, 1, 1, 1, Engine::kVector, InferGlobalPool});
  RegisterSchema(std::move(global_max_pool));
}

}  // namespace npu
