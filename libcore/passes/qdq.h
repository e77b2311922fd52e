// ONNX QDQ models (QuantizeLinear / DequantizeLinear around the layers, what TensorRT and ONNX Runtime take) as
// CANN's quantization ops, the rewrite AMCT's convert_qat_model does (reference/int8.md §1.3):
// - a Conv, ConvTranspose, 2-D Gemm or MatMul (2-D weights) whose input is Q -> DQ of an activation (per tensor, zero point 0) and whose weights are
//   DQ of an int8 constant (per tensor or per output channel, zero point 0) becomes
//   <layer>.quant (AscendQuant) -> the layer on int8 with an int32 bias (round(bias / (s_x * s_w))) ->
//   <layer>.dequant (AscendDequant, deq_scale = s_x * s_w per channel, float32 out);
// - any other Q -> DQ pair of an activation (an Add's inputs) becomes AscendQuant -> AscendAntiQuant;
// - DQ of a constant elsewhere becomes the float constant it stands for.
// Errors name the node: a scale of 0 or not finite, a Q/DQ pair with different factors, a non-zero weight zero
// point, uint8 or per-channel activations. A layer that cannot be quantized (per-channel or uint8 activations,
// uint8 weights, a transposed-A Gemm, a MatMul on 3-D weights) stays float with a warning when `keep_float`
// (atc --qdq_fallback=float). Runs right after import, before constants are folded (atc only: msame's reference
// path keeps ONNX's QuantizeLinear/DequantizeLinear semantics).
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct QdqOptions {
  bool keep_float = false;  // an unquantizable layer stays float (a warning) instead of an error
};

Status QdqToAscendQuant(Graph& g, const QdqOptions& options, std::vector<std::string>& warnings);

// Every AscendQuant's int8 result must reach a layer that computes on int8 (Conv, ConvTranspose, Gemm, MatMul),
// an AscendAntiQuant or the graph's outputs, possibly through ops that only move bytes (Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Identity). Otherwise a coded error naming both nodes: the device has no int8
// form of that op, and on the host it would compute on the integers as if they were the values.
Status CheckQuantizedConsumers(const Graph& g);

}  // namespace npu
