// The quantization arithmetic kernels/quant.cc defines, for the cube kernels that took a dequant (and a
// requant) in by quant fusion (ir/node_attrs.h kDequantPrefix / kRequantPrefix).
#pragma once
#include "kernels/registry.h"

namespace npu {

// Applies the fused dequant (and requant) of c.node to c.outputs[0], the op's int32 result; nothing when the
// node has none. Gives the same values the separate AscendDequant (Relu) AscendQuant tasks give.
// With the dual-output form (kDualQuantOutput) it dequantizes only: output 1 comes from QuantizeDualOutput.
Status ApplyFusedQuantization(KernelContext& c);
// The dual-output form's output 1: outputs[0] (the float result after the fused residual and activation)
// rounded to `stored`, its dtype in the graph, as the separate AscendQuant would read it, then requantized.
Status QuantizeDualOutput(const Node& n, std::vector<Tensor>& outputs, DType stored, ThreadPool& pool, const ExecContext& exec,
                          FloatStatus* status);

}  // namespace npu
