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
  static const ExecContext reference;
  return RunKernel(node, std::move(inputs), outputs, pool, reference, nullptr);
}

Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool,
                 const ExecContext& exec, FloatStatus* status) {
  const KernelFn* fn = KernelRegistry::Get().Find(node.op_type);
  if (!fn) return Status::Error("E16002", "node", node.name, "no kernel registered for op type " + node.op_type);
  KernelContext ctx{node, std::move(inputs), {}, pool, exec, {}};
  ctx.outputs.resize(node.outputs.size());
  NPU_RETURN_IF_ERROR((*fn)(ctx));
  outputs = std::move(ctx.outputs);
  if (status && ctx.status.any()) *status = ctx.status;
  if (node.has_attr(kEpilogueOp)) return RunEpilogue(node, outputs, pool, exec, status);
  return Status::Ok();
}

namespace {

// The absorbed activation as a node of its own.
Node EpilogueNode(const Node& fused) {
  Node act;
  act.name = fused.name;
  act.op_type = fused.attr_string(kEpilogueOp);
  act.opset = static_cast<int>(fused.attr_int(kEpilogueOpset, 13));
  act.inputs = {fused.outputs.at(0)};
  act.outputs = {fused.outputs.at(0)};
  constexpr std::string_view prefix = kEpilogueAttrPrefix;
  for (const auto& [k, v] : fused.attrs)
    if (k.rfind(prefix, 0) == 0) act.attrs[k.substr(prefix.size())] = v;
  return act;
}

}  // namespace

// UB fusion: the absorbed elementwise op runs on the fused op's result before it leaves the core (in fp32,
// so the pair rounds once), through that op's own kernel.
Status RunEpilogue(const Node& fused, std::vector<Tensor>& outputs, ThreadPool& pool, const ExecContext& exec, FloatStatus* status) {
  Node act = EpilogueNode(fused);
  std::vector<Tensor> out;
  NPU_RETURN_IF_ERROR(RunKernel(act, {outputs[0]}, out, pool, exec, status));
  outputs[0] = std::move(out[0]);
  return Status::Ok();
}

}  // namespace npu
