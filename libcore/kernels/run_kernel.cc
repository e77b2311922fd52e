// Running one node's kernel: the definition's half-precision policy, and what UB fusion put around the kernel (a
// fused residual, an absorbed activation, a dual quantised output), inside the kernel where that changes no value.
#include <algorithm>
#include <optional>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "kernels/quant.h"
#include "kernels/registry.h"

namespace npu {

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

Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool) {
  static const ExecContext reference;
  return RunKernel(node, std::move(inputs), outputs, pool, reference, nullptr);
}

PreparedKernel PrepareKernel(const Node& node) {
  PreparedKernel k;
  k.def = KernelRegistry::Get().Find(node.op_type);
  if (node.has_attr(kEpilogueResidualInput)) k.residual_at = node.attr_int(kEpilogueResidualInput, 0);
  if (node.has_attr(kEpilogueOp)) {
    k.act = EpilogueNode(node);
    k.in_place = KernelRegistry::Get().InPlaceForm(*k.act);
  }
  return k;
}

Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool,
                 const ExecContext& exec, FloatStatus* status, KernelRunOptions options) {
  return RunPrepared(node, PrepareKernel(node), std::move(inputs), outputs, pool, exec, status, options);
}

Status RunPrepared(const Node& node, const PreparedKernel& kernel, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool,
                   const ExecContext& exec, FloatStatus* status, KernelRunOptions options) {
  if (!kernel.def) return Status::Error("E16002", "node", node.name, "no kernel registered for op type " + node.op_type);
  Tensor residual;
  if (kernel.residual_at) {
    const int64_t at = *kernel.residual_at;
    if (at <= 0 || at >= static_cast<int64_t>(inputs.size())) return Status::Error("EH0002", "node", node.name, "the residual input index is out of range");
    residual = std::move(inputs[static_cast<size_t>(at)]);
    inputs.resize(static_cast<size_t>(at));
  }
  KernelContext ctx{node, std::move(inputs), {}, pool, exec, {}, {}, false, {}, false, options};
  ctx.outputs.resize(node.outputs.size());
  // The residual and the activation go inside the kernel only where that cannot change a value: fp32 inputs
  // and an fp32 residual (with 16-bit ones the kernel's result is rounded before they see it).
  bool all_f32 = std::all_of(ctx.inputs.begin(), ctx.inputs.end(), [](const Tensor& t) { return !t.defined() || t.dtype() == DType::kF32; });
  DType residual_dtype = IsHalfLike(options.residual_dtype) ? options.residual_dtype : residual.dtype();
  // Moved in: a kernel holding the last reference may write its result over it (conv_dnnl.cc SumDestination).
  const bool has_residual = residual.defined();
  if (has_residual && all_f32 && residual_dtype == DType::kF32) ctx.residual = std::move(residual);
  if (kernel.act && all_f32 && (!has_residual || ctx.residual.defined())) ctx.epilogue = kernel.in_place;
  // The 16-bit rounding goes inside the kernel only where it comes last: no residual or dual output after the
  // kernel, and the activation (if any) offered to the kernel too.
  std::optional<ChunkRounding> rounding;
  if (IsHalfLike(options.round_output_to) && all_f32 && !has_residual && !node.has_attr(kDualQuantOutput) && (!kernel.act || ctx.epilogue)) {
    rounding.emplace(options.round_output_to, exec);
    ctx.round_output = &*rounding;
  }
  std::optional<ChunkRounding> then_rounding;
  if (options.then_act && IsHalfLike(options.then_round_to)) {
    then_rounding.emplace(options.then_round_to, exec);
    ctx.then_round = &*then_rounding;
  }
  // The half-precision policy of the kernel's definition: one place, not one wrapper per registration.
  Status s = kernel.def->halves == Halves::kWiden ? WithWidenedHalves(ctx, kernel.def->fn) : kernel.def->fn(ctx);
  if (!s.ok()) {
    // A helper's error (a shape check, an allocation) names no node: say which one failed.
    if (!s.param().ends_with(" node")) s.with_context("in " + node.op_type + " node '" + node.name + "'");
    return s;
  }
  if (ctx.epilogue_applied && has_residual && !ctx.residual_applied)
    return Status::Error("EH0002", "node", node.name, "internal error: the kernel applied the activation before the residual");
  if (ctx.output_rounded && kernel.act && !ctx.epilogue_applied)
    return Status::Error("EH0002", "node", node.name, "internal error: the kernel rounded its result before the activation");
  outputs = std::move(ctx.outputs);
  if (status && ctx.status.any()) *status = ctx.status;
  if (ctx.output_rounded) {
    if (status) rounding->MergeInto(*status);
    if (options.output_rounded) *options.output_rounded = true;
  }
  if (ctx.then_applied) {
    if (status && then_rounding) then_rounding->MergeInto(*status);
    if (options.then_applied) *options.then_applied = true;
  }
  if (has_residual && !ctx.residual_applied) {
    const InPlaceFn* act = kernel.act && !ctx.epilogue_applied && kernel.in_place ? &kernel.in_place : nullptr;
    const Tensor& pending = ctx.residual.defined() ? ctx.residual : residual;
    // The runtime's rounding of the result in the residual's pass, where nothing runs on the result after it.
    std::optional<ChunkRounding> round_sum;
    if (IsHalfLike(options.round_output_to) && options.output_rounded && !ctx.output_rounded && !node.has_attr(kDualQuantOutput) &&
        (!kernel.act || ctx.epilogue_applied || act))
      round_sum.emplace(options.round_output_to, exec);
    NPU_ASSIGN_OR_RETURN(const ResidualAdded added, AddResidual(node, outputs, pending, residual_dtype, pool, exec, status, act,
                                                                round_sum ? &*round_sum : nullptr));
    ctx.epilogue_applied |= added.act_applied;
    if (added.rounded) {
      if (status) round_sum->MergeInto(*status);
      *options.output_rounded = true;
    }
  }
  if (kernel.act && !ctx.epilogue_applied) NPU_RETURN_IF_ERROR(RunEpilogue(*kernel.act, kernel.in_place, outputs, pool, exec, status));
  if (node.has_attr(kDualQuantOutput)) return QuantizeDualOutput(node, outputs, options.output_dtype, pool, exec, status);
  return Status::Ok();
}

namespace {
// out = x * sigmoid(x), the Sigmoid's values rounded to `sigmoid_dtype` first when it is a 16-bit dtype (as the
// runtime rounds every 16-bit result, with or without a SoC); out may be x.
void SigmoidTimesValues(std::span<const float> x, std::span<float> out, DType sigmoid_dtype, const ExecContext& exec) {
  if (!IsHalfLike(sigmoid_dtype)) return SiluValues(x, out);
  const std::span<float> sig(ThreadScratch(x.size()), x.size());  // apart, as out may be x
  SigmoidValues(x, sig);
  RoundValuesInPlace(sig, sigmoid_dtype, exec);
  for (size_t i = 0; i < out.size(); ++i) out[i] = x[i] * sig[i];
}
}  // namespace

InPlaceFn SigmoidTimesInputInPlace(DType sigmoid_dtype, const ExecContext& exec) {
  return [sigmoid_dtype, &exec](std::span<float> v) { SigmoidTimesValues(v, v, sigmoid_dtype, exec); };
}

Tensor SigmoidTimesInput(Tensor x, DType sigmoid_dtype, DType out_dtype, const ExecContext& exec, FloatStatus* status, ThreadPool& pool) {
  Tensor y = ResultOver(x);  // over x when it was moved in (an element's x is read before it is written)
  const float* in = x.data<float>();
  float* out = y.mutable_data<float>();
  // On the Sigmoid kernel's own chunks (its ParallelFor over the elements with this grain) and written to the
  // same places: where Eigen's exp computes them (hosts without AVX2), a value's bits depend on whether it falls
  // in a chunk's vectorised body or its tail. Unrounded, the
  // product is taken in the same pass (x read once); a rounded Sigmoid needs its values first. A rounded product
  // is rounded while the chunk is in cache; the chunks' exceptions are merged in index order, so the record keeps
  // the first element as the runtime's pass would.
  std::optional<ChunkRounding> round_out;
  if (IsHalfLike(out_dtype)) round_out.emplace(out_dtype, exec);
  // fp16 values throughout (the runtime holds 16-bit values rounded): one walk does the three steps, the passes the rest.
  const bool half = sigmoid_dtype == DType::kF16 && out_dtype == DType::kF16;
  pool.ParallelFor(static_cast<size_t>(x.numel()), kElementwiseGrain, [&](size_t b, size_t e) {
    if (half) b += HalfSiluWhileFinite({in + b, e - b}, {out + b, e - b}, RoundsToInfinity(DType::kF16), /*x_is_half=*/true);
    if (b == e) return;
    const std::span<float> s(out + b, e - b);
    SigmoidTimesValues({in + b, e - b}, s, sigmoid_dtype, exec);
    if (round_out) round_out->Round(s, b);
  });
  if (round_out && status) round_out->MergeInto(*status);
  return y;
}

// UB fusion with a residual. The cube's fp32 result reaches the UB in the residual's dtype (L0C -> UB
// converts), and the vector unit adds in that dtype: a 16-bit residual means the result rounds to 16 bits
// first, then the sum rounds again (in the runtime). An fp32 residual adds exactly.
Result<ResidualAdded> AddResidual(const Node& fused, std::vector<Tensor>& outputs, const Tensor& residual, DType residual_dtype,
                                  ThreadPool& pool, const ExecContext& exec, FloatStatus* status, const InPlaceFn* act,
                                  ChunkRounding* round_out) {
  Tensor result = std::move(outputs[0]), other = residual;
  if (IsHalfLike(residual_dtype)) {
    other = ToF32(residual);  // a no-op when the runtime holds it in fp32 already
    if (result.dtype() == DType::kF32 && result.shape() == other.shape() && result.channels_last == other.channels_last) {
      // One pass: each chunk is rounded, summed and given the activation while it is in cache (three passes
      // over the map otherwise), in the same order per element, so the same bits.
      const float* r = other.data<float>();
      const RoundedChunkFn add = [&](std::span<float> y, size_t at) {
        for (size_t i = 0; i < y.size(); ++i) y[i] += r[at + i];
        if (act) (*act)(y);
        if (round_out) round_out->Round(y, at);
      };
      outputs[0] = RoundToDTypeValues(std::move(result), residual_dtype, exec, status, 0, &add);  // in place when it may
      return ResidualAdded{act != nullptr, round_out != nullptr};
    }
    result = RoundToDTypeValues(std::move(result), residual_dtype, exec, status);
  }
  // Into the result itself where nothing else holds it and the two lie alike: the Add kernel's arithmetic
  // (one fp32 add per element) without a new tensor per fused op.
  if (result.sole_owner() && result.dtype() == DType::kF32 && other.dtype() == DType::kF32 && result.shape() == other.shape() &&
      result.channels_last == other.channels_last) {
    float* y = result.mutable_data<float>();
    const float* r = other.data<float>();
    pool.ParallelFor(static_cast<size_t>(result.numel()), static_cast<size_t>(kElementwiseGrain), [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) y[i] += r[i];
    });
    outputs[0] = std::move(result);
    return ResidualAdded{};
  }
  Node add;
  add.name = fused.name;
  add.op_type = "Add";
  add.opset = 14;
  add.inputs = {fused.outputs.at(0), fused.outputs.at(0)};
  add.outputs = {fused.outputs.at(0)};
  std::vector<Tensor> out;
  NPU_RETURN_IF_ERROR(RunKernel(add, {result, other}, out, pool, exec, status));
  outputs[0] = std::move(out[0]);
  return ResidualAdded{};
}

// UB fusion: the absorbed elementwise op (`act`, see EpilogueNode) runs on the fused op's result before it
// leaves the core (in fp32, so the pair rounds once), through that op's own kernel.
Status RunEpilogue(const Node& act, const InPlaceFn& in_place, std::vector<Tensor>& outputs, ThreadPool& pool, const ExecContext& exec,
                   FloatStatus* status) {
  if (in_place && outputs[0].dtype() == DType::kF32 && outputs[0].sole_owner()) {  // elementwise: in the result's memory order, in place
    float* p = outputs[0].mutable_data<float>();
    pool.ParallelFor(static_cast<size_t>(outputs[0].numel()), kElementwiseGrain, [&](size_t b, size_t e) { in_place({p + b, e - b}); });
    return Status::Ok();
  }
  std::vector<Tensor> out;
  // The result may be channels-last (a conv's); an activation kernel that does not take that order reads (N, C, H, W).
  Tensor x = KernelRegistry::Get().TakesChannelsLast(act.op_type) ? outputs[0] : ToChannelsFirst(outputs[0], pool);
  NPU_RETURN_IF_ERROR(RunKernel(act, {std::move(x)}, out, pool, exec, status));
  outputs[0] = std::move(out[0]);
  return Status::Ok();
}

}  // namespace npu
