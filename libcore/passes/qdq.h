// ONNX QDQ models (QuantizeLinear / DequantizeLinear around the layers, what TensorRT and ONNX Runtime take) as
// CANN's quantization ops, the rewrite AMCT's convert_qat_model does (reference/int8.md §1.3):
// - a Conv, 2-D Gemm or MatMul (2-D weights) whose input is Q -> DQ of an activation (per tensor, zero point 0) and whose weights are
//   DQ of an int8 constant (per tensor or per output channel, zero point 0) becomes
//   <layer>.quant (AscendQuant) -> the layer on int8 with an int32 bias (round(bias / (s_x * s_w))) ->
//   <layer>.dequant (AscendDequant, deq_scale = s_x * s_w per channel, float32 out);
// - any other Q -> DQ pair of an activation (an Add's inputs) becomes AscendQuant -> AscendAntiQuant;
// - DQ of a constant elsewhere becomes the float constant it stands for.
// Errors name the node: a scale of 0 or not finite, a Q/DQ pair with different factors, a non-zero weight zero
// point, uint8 activations with a zero point, a quantized layer npukit has no int8 kernel for (ConvTranspose). Runs right after import, before constants are folded (atc only: msame's reference path keeps
// ONNX's QuantizeLinear/DequantizeLinear semantics).
#pragma once
#include "base/status.h"
#include "ir/graph.h"

namespace npu {

Status QdqToAscendQuant(Graph& g);

}  // namespace npu
