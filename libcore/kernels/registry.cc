#include "kernels/registry.h"

#include <mutex>

#include "kernels/families.h"

namespace npu {

Status KernelContext::Fail(std::string reason) const {
  return Status::Error("EH0002", node.op_type + " node", node.name, std::move(reason));
}

KernelRegistry& KernelRegistry::Get() {
  static KernelRegistry r;
  return r;
}

void KernelRegistry::Register(std::string_view type, KernelFn fn) {
  for (auto& [t, f] : kernels_)
    if (t == type) {
      f = std::move(fn);
      return;
    }
  kernels_.emplace_back(std::string(type), std::move(fn));
}

const KernelFn* KernelRegistry::Find(std::string_view type) const {
  for (const auto& [t, f] : kernels_)
    if (t == type) return &f;
  return nullptr;
}

void RegisterOp(OpSchema schema, KernelFn kernel) {
  KernelRegistry::Get().Register(schema.type, std::move(kernel));
  OpSchemaRegistry::Get().Register(std::move(schema));
}

void RegisterBuiltinOps() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwiseOps();
    RegisterConvOps();
    RegisterMatMulOps();
    RegisterNormOps();
    RegisterPoolOps();
    RegisterShapeOps();
    RegisterReduceOps();
    RegisterResizeOps();
  });
}

Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool) {
  const KernelFn* fn = KernelRegistry::Get().Find(node.op_type);
  if (!fn) return Status::Error("E16002", "node", node.name, "no kernel registered for op type " + node.op_type);
  KernelContext ctx{node, std::move(inputs), {}, pool};
  ctx.outputs.resize(node.outputs.size());
  NPU_RETURN_IF_ERROR((*fn)(ctx));
  outputs = std::move(ctx.outputs);
  return Status::Ok();
}

}  // namespace npu
