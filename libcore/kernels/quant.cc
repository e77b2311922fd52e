// The quantization ops' arithmetic (ops/quant.h), per SoC generation. Sources: reference/int8.md §2 (ops-nn's
// AscendQuant golden model, the legacy TBE ascend_dequant, aclnnTransQuantParam). Where no source settles a
// point, the choice is marked [choice] here, and only here.
//
// AscendQuant, every SoC npukit models (all pre-950): in fp16, as ops-nn's golden does: x and scale to fp16,
// x * scale in fp16 (twice with sqrt_mode), + offset in fp16, then the round mode, saturation to int8.
//   [choice] NaN becomes 0 (a float-to-int conversion's usual result; no source says).
// AscendDequant, by the SoC's family:
//   v100 (ascend310, ascend910): the vector unit in fp16: fp16(x) * fp16(deq_scale), relu, * deq_scale again
//     with sqrt_mode; every step rounded to fp16 (so int32 values past 2048 lose bits; past 65504 they become
//     +-65504 in saturation mode, the only mode of Ascend310, else +-inf).
//   v200 (ascend310p): deq_cast: fp32(x) * the fp32 scale in the uint64 word's low 32 bits, relu, one rounding to
//     the output dtype. sqrt_mode is refused there, as the TBE op refuses it.
//   fixpipe (ascend910b): as v200, with the scale kept to its high 19 bits (mask 0xFFFFE000), as the fixpipe's
//     DEQSCALE register keeps it. [choice] the mask is applied (aclnnTransQuantParam's open code does not).
//   no SoC (the fp32 reference path): fp32(x) * scale, IEEE.
//   The uint64 word: [choice] its low 32 bits are the fp32 scale (AMCT and MindSpore write offset_w 0 and no
//   shift, so the other fields are 0 in practice; what ATC rewrites them into is not documented).
// AscendRequant: [choice] int8 sat(rne(fp32(x) * scale)), relu first; AscendAntiQuant: (x + offset) * scale
// (* scale with sqrt_mode) in fp16 on every SoC npukit models.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <vector>

#include "base/half.h"
#include "kernels/channels_last.h"
#include "kernels/families.h"
#include "kernels/quant.h"
#include "ir/node_attrs.h"
#include "kernels/kernel_util.h"
#include "ops/quant.h"

namespace npu {
namespace {

enum class DequantPath { kVectorFp16, kDeqCast, kFixpipe, kReference };

// One row per SoC family (SocSpec::ops_family).
constexpr std::pair<std::string_view, DequantPath> kDequantPaths[] = {
    {"ascend310", DequantPath::kVectorFp16}, {"ascend910", DequantPath::kVectorFp16},
    {"ascend310p", DequantPath::kDeqCast}, {"ascend910b", DequantPath::kFixpipe}};
constexpr uint32_t kFixpipeScaleMask = 0xFFFFE000u;  // the high 19 bits of an fp32 scale
constexpr int kInt8Min = -128, kInt8Max = 127;

DequantPath PathOf(const ExecContext& e) {
  if (!e.soc) return DequantPath::kReference;
  for (const auto& [family, path] : kDequantPaths)
    if (family == e.soc->ops_family) return path;
  return DequantPath::kDeqCast;
}

float Fp16(float v) { return HalfToFloat(FloatToHalf(v)); }
// An fp16 step of the vector unit: past the fp16 range it saturates to +-65504 on SoCs in saturation mode.
float Fp16Step(float v, bool saturate) {
  constexpr float kHalfMax = 65504.0f;
  const float h = Fp16(v);
  return saturate && std::isinf(h) ? std::copysign(kHalfMax, h) : h;
}
// fp16 a + b, one rounding: the exact sum of two fp16 values fits a double.
float Fp16Add(float a, float b) { return Fp16(static_cast<float>(static_cast<double>(a) + static_cast<double>(b))); }

// v to int8 by `mode`, saturated. Clamping before rounding is exact: the bounds are integers, so clamping
// commutes with every round mode.
template <QuantRound M>
int8_t SaturateInt8(float v) {
  v = v == v ? std::clamp(v, static_cast<float>(kInt8Min), static_cast<float>(kInt8Max)) : 0.0f;
  if constexpr (M == QuantRound::kHalfEven) v = std::nearbyint(v);  // the default FE_TONEAREST: ties to even
  else if constexpr (M == QuantRound::kFloor) v = std::floor(v);
  else if constexpr (M == QuantRound::kCeil) v = std::ceil(v);
  else v = std::trunc(v);
  return static_cast<int8_t>(static_cast<int32_t>(v));
}

// Every value of v to int8 (one loop per mode, so each vectorises).
void SaturateSpan(std::span<const float> v, QuantRound mode, int8_t* out) {
  auto run = [&]<QuantRound M>() {
    for (size_t i = 0; i < v.size(); ++i) out[i] = SaturateInt8<M>(v[i]);
  };
  switch (mode) {
    case QuantRound::kHalfEven: return run.template operator()<QuantRound::kHalfEven>();
    case QuantRound::kFloor: return run.template operator()<QuantRound::kFloor>();
    case QuantRound::kCeil: return run.template operator()<QuantRound::kCeil>();
    case QuantRound::kTrunc: return run.template operator()<QuantRound::kTrunc>();
  }
}

// The scale operand's values as fp32, one per channel (or one).
std::vector<float> ScaleValues(const Tensor& s, DequantPath path) {
  std::vector<float> out(static_cast<size_t>(s.numel()));
  for (size_t i = 0; i < out.size(); ++i) {
    if (s.dtype() == DType::kU64) {
      uint32_t bits = static_cast<uint32_t>(s.data<uint64_t>()[i] & 0xFFFFFFFFu);
      if (path == DequantPath::kFixpipe) bits &= kFixpipeScaleMask;
      out[i] = std::bit_cast<float>(bits);
    } else if (s.dtype() == DType::kF16) {  // a fused dequant's scale (an attribute, as stored)
      out[i] = HalfToFloat(s.data<uint16_t>()[i]);
    } else {
      out[i] = s.data<float>()[i];  // an input's fp16 values, widened exactly by the runtime
    }
    if (path == DequantPath::kVectorFp16) out[i] = Fp16(out[i]);
  }
  return out;
}

// Calls f(first, count, s, steps) over runs of x's elements in memory order that cover it: element first + k
// takes the per-channel scale s[k] when `steps` (a row of a tensor whose channel is its innermost dim: the last
// dim, or C of a channels-last NCHW tensor), else s[0] (a per-tensor scale, or one channel of an NCHW tensor).
template <class F>
void ForEachScaleRun(const Tensor& t, std::span<const float> scale, ThreadPool& pool, F f) {
  const int64_t n = t.numel();
  if (n == 0) return;
  if (scale.size() == 1) {
    pool.ParallelFor(static_cast<size_t>(n), kElementwiseGrain,
                     [&](size_t b, size_t e) { f(static_cast<int64_t>(b), static_cast<int64_t>(e - b), scale.data(), false); });
    return;
  }
  const Shape& x = t.shape();
  const bool channel_innermost = x.size() != 4 || t.channels_last;
  const int64_t c = static_cast<int64_t>(scale.size()), row = channel_innermost ? c : x[2] * x[3];
  if (row == 0) return;
  const size_t grain = static_cast<size_t>(std::max<int64_t>(1, kElementwiseGrain / row));
  pool.ParallelFor(static_cast<size_t>(n / row), grain, [&](size_t b, size_t e) {
    for (auto r = static_cast<int64_t>(b); r < static_cast<int64_t>(e); ++r)
      f(r * row, row, channel_innermost ? scale.data() : scale.data() + r % c, channel_innermost);
  });
}

// out[k] = op(k, scale of element k) over one run of ForEachScaleRun, in a loop the compiler can vectorise.
template <class Op>
void MapRun(int64_t count, const float* s, bool steps, Op op) {
  if (steps) {
    for (int64_t k = 0; k < count; ++k) op(k, s[k]);
  } else {
    const float s0 = *s;
    for (int64_t k = 0; k < count; ++k) op(k, s0);
  }
}

// Rounds every element to its fp16 value in place, infinities and NaN included (a scale past the fp16 range
// makes every product infinite). RoundToHalf rounds finite values in one pass and leaves the others as they
// are; from the first of those on, the conversions both ways, which take any value.
void RoundSpanToHalf(std::span<float> v) {
  constexpr float kNoLimit = std::numeric_limits<float>::infinity();
  constexpr size_t kBlock = 256;
  uint16_t h[kBlock];
  for (size_t i = RoundToHalf(v, v, kNoLimit); i < v.size(); i += kBlock) {
    const std::span<float> part = v.subspan(i, std::min(kBlock, v.size() - i));
    FloatToHalf(part, std::span<uint16_t>(h, part.size()));
    HalfToFloat(std::span<const uint16_t>(h, part.size()), part);
  }
}

// AscendQuant's arithmetic on fp32 x (16-bit values widened) with the attributes under `prefix` of `n`. On a SoC
// each step is an fp16 rounding, done a chunk at a time: the product of two fp16 values is exact in fp32, so
// rounding it once gives the fp16 multiply.
Tensor Quantize(const Tensor& x, const Node& n, const std::string& prefix, const ExecContext& exec, ThreadPool& pool) {
  const bool sqrt_mode = n.attr_int(prefix + "sqrt_mode", 0) != 0;
  const QuantRound mode = RoundModeOf(n.attr_string(prefix + "round_mode", "Round")).value_or(QuantRound::kHalfEven);  // checked by the schema
  const bool device = exec.soc != nullptr;
  const float scale = device ? Fp16(n.attr_float(prefix + "scale", 1.0f)) : n.attr_float(prefix + "scale", 1.0f);
  const float offset = device ? Fp16(n.attr_float(prefix + "offset", 0.0f)) : n.attr_float(prefix + "offset", 0.0f);
  Tensor y = Tensor::EmptyLike(DType::kI8, x);
  const float* in = x.data<float>();
  int8_t* out = y.mutable_data<int8_t>();
  pool.ParallelFor(static_cast<size_t>(x.numel()), kElementwiseGrain, [&](size_t b, size_t e) {
    thread_local std::vector<float> chunk;
    chunk.assign(in + b, in + e);
    std::span<float> v(chunk);
    if (device) {
      RoundSpanToHalf(v);
      for (float& f : v) f *= scale;
      RoundSpanToHalf(v);
      if (sqrt_mode) {
        for (float& f : v) f *= scale;
        RoundSpanToHalf(v);
      }
      if (offset != 0.0f) {  // the fp32 sum of two fp16 values rounds to fp16 correctly: 24 >= 2 * 11 + 2 bits
        for (float& f : v) f += offset;
        RoundSpanToHalf(v);
      }
    } else {
      for (float& f : v) f = (sqrt_mode ? f * scale * scale : f * scale) + offset;
    }
    SaturateSpan(v, mode, out + b);
  });
  return y;
}

Status AscendQuant(KernelContext& c) {
  c.outputs[0] = Quantize(c.in(0), c.node, "", c.exec, c.pool);
  return Status::Ok();
}

// AscendDequant's arithmetic on int32 x with the scale operand `scale_op` and the attributes under `prefix`.
Result<Tensor> Dequantize(KernelContext& c, const Tensor& x, const Tensor& scale_op, const std::string& prefix) {
  const DequantPath path = PathOf(c.exec);
  const bool sqrt_mode = c.node.attr_int(prefix + "sqrt_mode", 0) != 0, relu = c.node.attr_int(prefix + "relu_flag", 0) != 0;
  if (sqrt_mode && (path == DequantPath::kDeqCast || path == DequantPath::kFixpipe))
    return c.Fail("sqrt_mode is not available on " + c.exec.soc->name + " (its dequant takes a uint64 scale, without sqrt_mode)");
  if (scale_op.dtype() != DType::kU64 && path != DequantPath::kVectorFp16 && path != DequantPath::kReference)
    return c.Fail("deq_scale must be uint64 on " + c.exec.soc->name + " (fp16 deq_scale is the v100 form)");
  const std::vector<float> scale = ScaleValues(scale_op, path);
  const bool saturate = c.exec.saturate();
  Tensor y = Tensor::EmptyLike(DType::kF32, x);
  const int32_t* in = x.data<int32_t>();
  float* out = y.mutable_data<float>();
  if (scale.size() != 1 && static_cast<int64_t>(scale.size()) != QuantChannels(x.shape()))
    return c.Fail("the dequant scale has " + std::to_string(scale.size()) + " values for " + std::to_string(QuantChannels(x.shape())) + " channels");
  ForEachScaleRun(x, scale, c.pool, [&](int64_t first, int64_t count, const float* s, bool steps) {
    const int32_t* i = in + first;
    float* o = out + first;
    if (path == DequantPath::kVectorFp16) {
      MapRun(count, s, steps, [&](int64_t k, float sk) {
        float v = Fp16Step(Fp16Step(static_cast<float>(i[k]), saturate) * sk, saturate);
        if (relu) v = std::max(v, 0.0f);
        o[k] = sqrt_mode ? Fp16Step(v * sk, saturate) : v;
      });
      return;
    }
    MapRun(count, s, steps, [&](int64_t k, float sk) { o[k] = static_cast<float>(i[k]) * sk; });
    if (relu)
      for (int64_t k = 0; k < count; ++k) o[k] = std::max(o[k], 0.0f);
    if (sqrt_mode) MapRun(count, s, steps, [&](int64_t k, float sk) { o[k] *= sk; });  // the reference path only
  });
  return y;  // the runtime rounds it to the output dtype
}

Status AscendDequant(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(c.outputs[0], Dequantize(c, c.in(0), c.in(1), ""));
  return Status::Ok();
}

Status AscendRequant(KernelContext& c) {
  const Tensor& x = c.in(0);
  const std::vector<float> scale = ScaleValues(c.in(1), PathOf(c.exec) == DequantPath::kFixpipe ? DequantPath::kFixpipe : DequantPath::kDeqCast);
  const bool relu = c.node.attr_int("relu_flag", 0) != 0;
  if (scale.size() != 1 && static_cast<int64_t>(scale.size()) != QuantChannels(x.shape()))
    return c.Fail("the requant scale has " + std::to_string(scale.size()) + " values for " + std::to_string(QuantChannels(x.shape())) + " channels");
  Tensor y = Tensor::EmptyLike(DType::kI8, x);
  const int32_t* in = x.data<int32_t>();
  int8_t* out = y.mutable_data<int8_t>();
  ForEachScaleRun(x, scale, c.pool, [&](int64_t first, int64_t count, const float* s, bool steps) {
    thread_local std::vector<float> v;
    v.resize(static_cast<size_t>(count));
    MapRun(count, s, steps, [&](int64_t k, float sk) { v[k] = static_cast<float>(in[first + k]) * sk; });
    if (relu)
      for (float& f : v) f = std::max(f, 0.0f);
    SaturateSpan(v, QuantRound::kHalfEven, out + first);
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status AscendAntiQuant(KernelContext& c) {
  const Tensor& x = c.in(0);
  const bool sqrt_mode = c.node.attr_int("sqrt_mode", 0) != 0, device = c.exec.soc != nullptr;
  const float scale = device ? Fp16(c.node.attr_float("scale", 1.0f)) : c.node.attr_float("scale", 1.0f);
  const float offset = device ? Fp16(c.node.attr_float("offset", 0.0f)) : c.node.attr_float("offset", 0.0f);
  Tensor y = Tensor::EmptyLike(DType::kF32, x);
  const int8_t* in = x.data<int8_t>();
  float* out = y.mutable_data<float>();
  c.pool.ParallelFor(static_cast<size_t>(x.numel()), kElementwiseGrain, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      float v;
      if (device) {
        v = Fp16(Fp16Add(static_cast<float>(in[i]), offset) * scale);
        if (sqrt_mode) v = Fp16(v * scale);
      } else {
        v = (static_cast<float>(in[i]) + offset) * scale;
        if (sqrt_mode) v *= scale;
      }
      out[i] = v;
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ONNX's QuantizeLinear and DequantizeLinear (the fp32 reference of a QDQ model): y = sat(rne(x / s) + zp) and
// (x - zp) * s, per tensor or along `axis`.
struct LinearQuant {
  std::vector<float> scale;
  std::vector<int64_t> zero;
  int64_t inner = 1;
  float s(int64_t i) const { return scale[scale.size() == 1 ? 0 : static_cast<size_t>((i / inner) % static_cast<int64_t>(scale.size()))]; }
  float z(int64_t i) const { return zero.empty() ? 0.0f : static_cast<float>(zero[zero.size() == 1 ? 0 : static_cast<size_t>((i / inner) % static_cast<int64_t>(zero.size()))]); }
};

Result<LinearQuant> LinearParams(KernelContext& c) {
  LinearQuant q;
  Tensor s = CastTensor(c.in(1), DType::kF32);
  q.scale.assign(s.data<float>(), s.data<float>() + s.numel());
  if (c.has(2)) q.zero = c.in(2).ToInt64Vector();
  const Shape& x = c.in(0).shape();
  int64_t axis = c.node.attr_int("axis", 1);
  if (axis < 0) axis += static_cast<int64_t>(x.size());
  if (q.scale.size() > 1) {
    if (axis < 0 || axis >= static_cast<int64_t>(x.size()) || x[static_cast<size_t>(axis)] != static_cast<int64_t>(q.scale.size()))
      return c.Fail("the scale does not fit the axis");
    for (size_t d = static_cast<size_t>(axis) + 1; d < x.size(); ++d) q.inner *= x[d];
  }
  return q;
}

Status QuantizeLinear(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(LinearQuant q, LinearParams(c));
  const bool is_signed = !c.has(2) ? false : c.in(2).dtype() == DType::kI8;
  const Tensor x = CastTensor(c.in(0), DType::kF32);
  Tensor y = Tensor::Empty(is_signed ? DType::kI8 : DType::kU8, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) {
    const float v = std::nearbyint(x.data<float>()[i] / q.s(i)) + q.z(i);
    if (is_signed) y.mutable_data<int8_t>()[i] = static_cast<int8_t>(std::clamp(std::isnan(v) ? 0.0f : v, -128.0f, 127.0f));
    else y.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(std::clamp(std::isnan(v) ? 0.0f : v, 0.0f, 255.0f));
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status DequantizeLinear(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(LinearQuant q, LinearParams(c));
  const Tensor x = CastTensor(c.in(0), DType::kF32);
  Tensor y = Tensor::Empty(DType::kF32, x.shape());
  for (int64_t i = 0; i < x.numel(); ++i) y.mutable_data<float>()[i] = (x.data<float>()[i] - q.z(i)) * q.s(i);
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

}  // namespace

Status ApplyFusedQuantization(KernelContext& c) {
  const std::string deq = kDequantPrefix, req = kRequantPrefix;
  if (!c.node.has_attr(deq + "scale")) return Status::Ok();
  const auto* scale = std::get_if<Tensor>(&c.node.attrs.find(deq + "scale")->second);
  if (!scale) return c.Fail("the fused dequant's scale is not a tensor");
  NPU_ASSIGN_OR_RETURN(Tensor y, Dequantize(c, c.outputs[0], *scale, deq));
  const DType dequant_dtype = c.node.attr_int(deq + "dtype", 0) == 1 ? DType::kF16 : DType::kF32;
  if (auto it = c.node.attrs.find(deq + "bias"); it != c.node.attrs.end()) {  // the absorbed Add, on the dequant's rounded result
    const auto* bias = std::get_if<Tensor>(&it->second);
    if (!bias || bias->numel() != (y.rank() ? y.shape().back() : 1)) return c.Fail("the fused bias does not fit the result's last dim");
    if (dequant_dtype == DType::kF16) y = ToF32(c.Narrow(y, DType::kF16));
    const Tensor b = ToF32(*bias);
    const int64_t n = b.numel();
    if (y.channels_last && OrdersDiffer(y.shape())) y = ToChannelsFirst(y, c.pool);  // the bias runs along the last dim
    float* p = y.mutable_data<float>();
    const float* bp = b.data<float>();
    for (int64_t i = 0; i < y.numel(); ++i) p[i] += bp[i % n];
  }
  if (!c.node.has_attr(req + "scale") || c.node.has_attr(kDualQuantOutput)) {
    c.outputs[0] = std::move(y);  // rounded to the dequant's dtype by the runtime, as the separate task's result
    return Status::Ok();
  }
  // The separate AscendQuant reads the dequant's result in its dtype: round it there first.
  if (dequant_dtype == DType::kF16) y = ToF32(c.Narrow(y, DType::kF16));
  c.outputs[0] = Quantize(y, c.node, req, c.exec, c.pool);
  return Status::Ok();
}

Status QuantizeDualOutput(const Node& n, std::vector<Tensor>& outputs, DType stored, ThreadPool& pool, const ExecContext& exec,
                          FloatStatus* status) {
  if (outputs.size() != 2 || !outputs[0].defined() || outputs[0].dtype() != DType::kF32)
    return Status::Error("EH0002", "node", n.name, "internal error: a dual-output requant needs two outputs, the first fp32");
  if (IsHalfLike(stored)) outputs[0] = RoundToDTypeValues(std::move(outputs[0]), stored, exec, status, 0);
  outputs[1] = Quantize(outputs[0], n, kRequantPrefix, exec, pool);
  return Status::Ok();
}

void RegisterQuantKernels() {
  // Elementwise, with per-channel scales found in either memory order (ForEachScaleRun): the result keeps the input's.
  RegisterKernel("AscendQuant", {.fn = AscendQuant, .channels_last = true});
  RegisterKernel("AscendDequant", {.fn = AscendDequant, .channels_last = true});
  RegisterKernel("AscendRequant", {.fn = AscendRequant, .channels_last = true});
  RegisterKernel("AscendAntiQuant", {.fn = AscendAntiQuant, .channels_last = true});
  RegisterKernel("QuantizeLinear", QuantizeLinear);
  RegisterKernel("DequantizeLinear", DequantizeLinear);
}

}  // namespace npu
