// Fusion passes, registered by CANN's pass names: graph fusion (rewrites the graph: BN folding, bias folding,
// LayerNorm/Gelu/Softmax pattern fusion) and UB fusion (an elementwise op runs inside the producing cube op).
// Each is switchable with --fusion_switch_file, timed by the PassManager, and keeps every absorbed op's
// name in the fused op's original names (_datadump_original_op_names).
#pragma once
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/node_attrs.h"
#include "passes/pass_manager.h"

namespace npu {

enum class FusionKind { kGraph, kUB };

// Per-node fusion decisions: kFusionOffAttr and kFusionPassesAttr (ir/node_attrs.h).


struct FusionPassInfo {
  const char* name;
  FusionKind kind;
  Status (*run)(Graph&);
};

// Every built-in fusion pass in the order atc runs them.
const std::vector<FusionPassInfo>& FusionPasses();
// Adds the fusion passes of one kind to `pm` in their order, minus those in `disabled`.
void AddFusionPasses(PassManager& pm, FusionKind kind, const std::set<std::string>& disabled);

// Reads a --fusion_switch_file in either CANN form: `PassName:off` lines, or
// {"Switch":{"GraphFusion":{"Name":"off","ALL":"off"},"UBFusion":{...}}}. Returns the passes turned off;
// unknown names become warnings that list the known ones.
Result<std::set<std::string>> LoadFusionSwitchFile(const std::string& path, std::vector<std::string>& warnings);

// The passes themselves (exposed for unit tests).
Status ConvBatchnormFusionPass(Graph& g);
Status BatchNormBnInferFusionPass(Graph& g);
Status ConvBiasAddFusionPass(Graph& g);
Status MatMulBiasAddFusionPass(Graph& g);
Status GeluONNXFusionPass(Graph& g);
Status HardSwishFusionPass(Graph& g);
Status PadWindowFusionPass(Graph& g);
Status ShuffleChannelFusionPass(Graph& g);  // Reshape -> Transpose(1, 2) -> Reshape back -> ShuffleChannel  // a zero spatial Pad into the Conv / AveragePool reading it
Status LayerNormONNXFusionPass(Graph& g);
Status SoftmaxFusionPass(Graph& g);
Status ConfusionTransposeFusionPass(Graph& g);  // ReshapeTransposeFusionPass: -> ConfusionTransposeD
Status ConvDequantQuantUbFusionPass(Graph& g);
Status ConvElemwiseUbFusionPass(Graph& g);
Status MatMulElemwiseUbFusionPass(Graph& g);           // TbeBatchMatmulElementWiseFusionPass: a product + Relu
Status FullyconnectionElemwiseUbFusionPass(Graph& g);  // TbeFullyconnectionElemwiseFusionPass: + Gelu, Sigmoid, ...
Status EltwiseUbFusionPass(Graph& g);  // TbeEltwiseFusionPass: Add/Sub/Mul + activation in one vector task
Status ConvConcatFusionPass(Graph& g);  // convs write their C slices of a ConcatD (StridedWrite): no concat task

}  // namespace npu
