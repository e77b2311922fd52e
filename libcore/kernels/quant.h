// The quantization arithmetic kernels/quant.cc defines, for the cube kernels that took a dequant (and a
// requant) in by quant fusion (ir/node_attrs.h kDequantPrefix / kRequantPrefix).
#pragma once
#include "kernels/registry.h"

namespace npu {

// Applies the fused dequant (and requant) of c.node to c.outputs[0], the op's int32 result; nothing when the
// node has none. Gives the same values the separate AscendDequant (Relu) AscendQuant tasks give.
Status ApplyFusedQuantization(KernelContext& c);

}  // namespace npu
