#include "kernels/registry.h"

#include <mutex>

#include "kernels/families.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "ops/schemas.h"

namespace npu {

Status KernelContext::Fail(std::string reason) const {
  return Status::Error("EH0002", node.op_type + " node", node.name, std::move(reason));
}

Status KernelContext::Fault(std::string reason) const {
  return Status::Error(kTaskFaultCode, node.op_type + " node", node.name, std::move(reason));
}

ChunkFinish KernelContext::TakeChunkFinish(bool take_act) {
  ChunkFinish f;
  if (take_act && epilogue && !epilogue_applied) {
    f.act = &epilogue;
    epilogue_applied = true;
  }
  if (round_output && !output_rounded && (!epilogue || epilogue_applied)) {  // last: not before an activation still to run
    f.round = round_output;
    output_rounded = true;
  }
  // This task's result is final once its activation, residual and rounding are done: the next task's activation may
  // follow in the same pass.
  const bool result_final = (!epilogue || epilogue_applied) && (!residual.defined() || residual_applied) &&
                            (!IsHalfLike(options.round_output_to) || output_rounded);
  if (options.then_act && result_final && !then_applied) {
    f.then_act = options.then_act;
    f.then_round = then_round;
    f.then_half_silu = options.then_act_is_half_silu;
    then_applied = true;
  }
  return f;
}

void ChunkFinish::operator()(std::span<float> chunk, size_t at) const {
  if (act) (*act)(chunk);
  // The rounding, the SiLU pair and its rounding in one walk where all three are fp16 (without `round` the result
  // is rounded already: npukit's depthwise kernel rounds in its registers); the passes below take what it leaves.
  if (then_half_silu && then_round && then_round->to() == DType::kF16 && (!round || round->to() == DType::kF16)) {
    const size_t done = HalfSiluWhileFinite(chunk, chunk, RoundsToInfinity(DType::kF16), /*x_is_half=*/!round);
    if (done == chunk.size()) return;
    chunk = chunk.subspan(done);
    at += done;
  }
  if (round) round->Round(chunk, at);
  if (then_act) (*then_act)(chunk);
  if (then_round) then_round->Round(chunk, at);
}

KernelRegistry& KernelRegistry::Get() {
  static KernelRegistry r;
  return r;
}

void KernelRegistry::Register(std::string_view type, KernelDef def) { kernels_[std::string(type)] = std::move(def); }

const KernelDef* KernelRegistry::Find(std::string_view type) const {
  auto it = kernels_.find(type);
  return it == kernels_.end() ? nullptr : &it->second;
}

bool KernelRegistry::TakesChannelsLast(std::string_view type) const {
  const KernelDef* d = Find(type);
  return d && d->channels_last;
}

InPlaceFn KernelRegistry::InPlaceForm(const Node& op) const {
  const KernelDef* d = Find(op.op_type);
  return d && d->in_place ? d->in_place(op) : InPlaceFn{};
}

void RegisterKernel(std::string_view type, KernelFn kernel) { KernelRegistry::Get().Register(type, {.fn = std::move(kernel)}); }
void RegisterKernel(std::string_view type, KernelDef def) { KernelRegistry::Get().Register(type, std::move(def)); }

void RegisterBuiltinOps() {
  static std::once_flag once;
  RegisterBuiltinSchemas();
  std::call_once(once, [] {
    RegisterElementwiseKernels();
    RegisterConvKernels();
    RegisterMatMulKernels();
    RegisterNormKernels();
    RegisterPoolKernels();
    RegisterShapeKernels();
    RegisterReduceKernels();
    RegisterResizeKernels();
    RegisterAippKernels();
    RegisterQuantKernels();
    RegisterRnnKernels();
    RegisterDetectionKernels();
  });
}

}  // namespace npu
