// CANN's quantization ops, as AMCT's deploy models and GE IR carry them (reference/int8.md §1.2): AscendQuant
// (float -> int8), AscendDequant (int32 + deq_scale -> float), AscendAntiQuant (int8 -> float), AscendRequant
// (int32 + req_scale -> int8). Their arithmetic per SoC generation is in kernels/quant.cc.
#include "ops/families.h"
#include "ops/quant.h"

#include "ir/node_attrs.h"

namespace npu {
namespace {

// GE's C-enum dtype numbering (DT_FLOAT 0, DT_FLOAT16 1): what AMCT writes into a dequant's `dtype` attribute.
std::optional<DType> GeEnumFloat(int64_t code) {
  if (code == 0) return DType::kF32;
  if (code == 1) return DType::kF16;
  return std::nullopt;
}

Status InferQuant(InferContext& c) {
  if (std::string why = QuantAttrProblem(c.node); !why.empty()) return c.Fail(why);
  if (c.in[0]->dtype != DType::kUndefined && !IsFloat(c.in[0]->dtype)) return c.Fail("x must be a float tensor");
  c.set_output(0, DType::kI8, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

// A scale operand (deq_scale, req_scale): uint64 words or fp16 values, one or one per channel of x.
Status CheckScaleOperand(InferContext& c, bool fp16_allowed) {
  const Value& s = *c.in[1];
  if (s.dtype != DType::kU64 && !(fp16_allowed && s.dtype == DType::kF16) && s.dtype != DType::kUndefined)
    return c.Fail(std::string("the scale operand is ") + std::string(DTypeName(s.dtype)) + "; it must be uint64" + (fp16_allowed ? " or float16" : ""));
  if (!s.has_shape || !c.in[0]->has_shape) return Status::Ok();
  const int64_t n = NumElements(s.shape), channels = QuantChannels(c.in[0]->shape);
  if (n != 1 && n != channels)
    return c.Fail("the scale operand has " + std::to_string(n) + " values; x " + ShapeToString(c.in[0]->shape) + " has " + std::to_string(channels) +
                  " channels (give one value, or one per channel)");
  return Status::Ok();
}

Status InferDequant(InferContext& c) {
  if (c.in[0]->dtype != DType::kI32 && c.in[0]->dtype != DType::kUndefined) return c.Fail("x must be int32");
  NPU_RETURN_IF_ERROR(CheckScaleOperand(c, true));
  auto out = GeEnumFloat(c.node.attr_int("dtype", 0));
  if (!out) return c.Fail("dtype " + std::to_string(c.node.attr_int("dtype", 0)) + " is neither 0 (float32) nor 1 (float16)");
  c.set_output(0, *out, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

Status InferRequant(InferContext& c) {
  if (c.in[0]->dtype != DType::kI32 && c.in[0]->dtype != DType::kUndefined) return c.Fail("x must be int32");
  NPU_RETURN_IF_ERROR(CheckScaleOperand(c, false));
  c.set_output(0, DType::kI8, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

Status InferAntiQuant(InferContext& c) {
  if (std::string why = QuantAttrProblem(c.node); !why.empty()) return c.Fail(why);
  if (c.in[0]->dtype != DType::kI8 && c.in[0]->dtype != DType::kUndefined) return c.Fail("x must be int8");
  auto out = GeEnumFloat(c.node.attr_int("dtype", 0));
  if (!out) return c.Fail("dtype " + std::to_string(c.node.attr_int("dtype", 0)) + " is neither 0 (float32) nor 1 (float16)");
  c.set_output(0, *out, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

// ONNX's QuantizeLinear / DequantizeLinear (msame's reference path runs them; atc rewrites them, passes/qdq.h).
Status InferQuantizeLinear(InferContext& c) {
  DType out = c.has_input(2) ? c.in[2]->dtype : DType::kU8;
  if (out != DType::kI8 && out != DType::kU8) return c.Fail("the zero point must be int8 or uint8");
  c.set_output(0, out, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

Status InferDequantizeLinear(InferContext& c) {
  c.set_output(0, DType::kF32, c.in[0]->shape, c.in[0]->has_shape);
  return Status::Ok();
}

}  // namespace

Result<DType> CubeOutputDtype(InferContext& c, size_t bias_input) {
  const Value &x = *c.in[0], &w = *c.in[1];
  const bool int8_x = x.dtype == DType::kI8, int8_w = w.dtype == DType::kI8;
  if (!int8_x && !int8_w) return x.dtype;
  if (x.dtype == DType::kUndefined || w.dtype == DType::kUndefined) return DType::kUndefined;  // judged once both are known
  if (int8_x != int8_w)
    return c.Fail(std::string("x is ") + std::string(DTypeName(x.dtype)) + " and the weights " + std::string(DTypeName(w.dtype)) +
                  ": a quantized op takes int8 for both (quantize x with AscendQuant)");
  if (c.has_input(bias_input) && c.in[bias_input]->dtype != DType::kI32)
    return c.Fail(std::string("int8 weights with a ") + std::string(DTypeName(c.in[bias_input]->dtype)) +
                  " bias: the bias of a quantized op is int32 (bias / (scale_d * scale_w))");
  // Quant fusion (ir/node_attrs.h): the absorbed requant's int8, or the absorbed dequant's dtype.
  if (c.node.has_attr(std::string(kRequantPrefix) + "scale") && !c.node.has_attr(kDualQuantOutput)) return DType::kI8;
  if (c.node.has_attr(std::string(kDequantPrefix) + "scale")) {
    auto out = GeEnumFloat(c.node.attr_int(std::string(kDequantPrefix) + "dtype", 0));
    if (!out) return c.Fail("the fused dequant's dtype is neither 0 (float32) nor 1 (float16)");
    return *out;
  }
  return DType::kI32;
}

int64_t QuantChannels(const Shape& x) {
  if (x.empty()) return 1;
  return x.size() == 4 ? x[1] : x.back();
}

std::string QuantAttrProblem(const Node& n) {
  const float scale = n.attr_float("scale", 0.0f);
  if (!(std::abs(scale) > 0.0f) || !std::isfinite(scale)) return "scale " + std::to_string(scale) + " is not a finite non-zero number";
  if (!std::isfinite(n.attr_float("offset", 0.0f))) return "offset is not finite";
  const std::string dst = n.attr_string("dst_type", "INT8");
  if (dst != "INT8" && dst != "2") return "dst_type " + dst + ": npukit quantizes to INT8 only";
  const std::string mode = n.attr_string("round_mode", "Round");
  if (!RoundModeOf(mode)) return "round_mode " + mode + " is not Round, Floor, Ceil or Trunc";
  return {};
}

std::optional<QuantRound> RoundModeOf(std::string_view s) {
  static constexpr std::pair<std::string_view, QuantRound> kModes[] = {
      {"Round", QuantRound::kHalfEven}, {"Floor", QuantRound::kFloor}, {"Ceil", QuantRound::kCeil}, {"Trunc", QuantRound::kTrunc}};
  for (const auto& [name, mode] : kModes)
    if (name == s) return mode;
  return std::nullopt;
}

void RegisterQuantSchemas() {
  RegisterSchema({"AscendQuant", 1, 1, 1, 1, Engine::kVector, InferQuant});
  OpSchema dequant{"AscendDequant", 2, 2, 1, 1, Engine::kVector, InferDequant, false, {1}};
  dequant.output_dtype_from_attrs = true;
  RegisterSchema(std::move(dequant));
  RegisterSchema({"AscendRequant", 2, 2, 1, 1, Engine::kVector, InferRequant, false, {1}});
  OpSchema anti{"AscendAntiQuant", 1, 1, 1, 1, Engine::kVector, InferAntiQuant};
  anti.output_dtype_from_attrs = true;
  RegisterSchema(std::move(anti));
  RegisterSchema({"QuantizeLinear", 2, 3, 1, 1, Engine::kVector, InferQuantizeLinear, false, {1}});
  RegisterSchema({"DequantizeLinear", 2, 3, 1, 1, Engine::kVector, InferDequantizeLinear, false, {1}});
}

}  // namespace npu
