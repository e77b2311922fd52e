// Every node attribute that passes, lowering, the cost model, the runtime and kernels hand each other: one
// list, so a reader finds who sets what and a typo is a compile error, not a silently missing decision.
// Attributes of the framework ops themselves (strides, axis, ...) keep their framework names and are not here.
#pragma once

namespace npu {

// ---- kept for dumps and accuracy comparison -------------------------------------------------------------
// The framework op names a node stands for (fusion appends to Node::original_names; the .om and the
// --mode=1 JSON carry them under CANN's key).
constexpr const char* kOriginalNamesAttr = "_datadump_original_op_names";

// ---- set by the framework importers (frontend/) --------------------------------------------------------
// ArgMax/ArgMin's index dtype (a DType value) when not ONNX's int64: TF's output_type, CANN's ArgMaxD dtype.
constexpr const char* kArgOutputType = "_output_type";
// "NHWC" or "NDHWC": the node's output 0 is, channels-first, the framework's channels-last tensor (a TF op run
// channels-first inside). Golden dumps and op dumps give that tensor in the framework's layout
// (ir/graph.h FrameworkLayoutPerm), so they compare with dumps a real device makes of the same model.
constexpr const char* kFrameworkLayoutAttr = "_framework_layout";
// A Transpose an importer put in to run a channels-last op channels-first. The Formats pass turns one next to
// a TransData into that TransData (NHWC <-> NC1HWC0 directly, as CANN does), and no fusion takes it.
constexpr const char* kLayoutTransposeAttr = "_layout_transpose";
// A shape-only op the .om does not list (GE removes them; the reader puts a view back where a desc shows one).
constexpr const char* kRemovedViewAttr = "_removed_view";

// ---- precision assignment (passes/precision.cc) ---------------------------------------------------------
constexpr const char* kPrecisionReasonAttr = "_precision_reason";  // the chain of rules that chose the dtype
constexpr const char* kOpEngineAttr = "_op_engine";                // "AiCpu": moved off the AI Core (lowering reads it)
constexpr const char* kAiCpuEngine = "AiCpu";
constexpr const char* kOpImplModeAttr = "_op_impl_mode";           // high_performance | high_precision

// ---- fusion (passes/fusion.cc; aoe's subgraph decisions) --------------------------------------------------
// Comma-separated pass names: a pass listed in kFusionOffAttr does not fuse at a node that anchors it;
// kFusionPassesAttr lists the passes that fused other ops into a node.
constexpr const char* kFusionOffAttr = "_fusion_off";
constexpr const char* kFusionPassesAttr = "_fusion_passes";
// UB fusion: an op carrying these applies one elementwise op (its type, opset and attributes under the
// prefix) to its output 0 before the result is narrowed (kernels/registry.h runs it; the cost model counts it).
constexpr const char* kEpilogueOp = "_epilogue_op";
constexpr const char* kEpilogueOpset = "_epilogue_opset";
constexpr const char* kEpilogueAttrPrefix = "_epilogue.";
// A residual Add absorbed into a cube op: the input at this index is added to the result before the
// activation epilogue; the op's own kernel never sees it.
constexpr const char* kEpilogueResidualInput = "_epilogue_residual_input";

// ---- quant fusion (passes/fusion.cc TbeConvDequantQuantFusionPass; kernels/quant.cc) ---------------------
// A quantized Conv/Gemm that took in its AscendDequant (and a Relu, as relu_flag, and the next AscendQuant): the
// dequant's attributes and constant scale under kDequantPrefix, the quant's under kRequantPrefix. The op's
// int32 result goes through them in the kernel; its output is the last absorbed op's.
constexpr const char* kDequantPrefix = "_dequant.";  // scale (tensor), relu_flag, sqrt_mode, dtype, bias (tensor)
constexpr const char* kRequantPrefix = "_requant.";  // scale, offset, sqrt_mode, round_mode
// The dual-output form (TbeConvDequantVaddReluQuantFusionPass): the float result, after the fused residual and
// activation, stays output 0 for its float readers, and its requant (as stored, in output 0's dtype) is output 1.
constexpr const char* kDualQuantOutput = "_requant.dual_output";  // 1 on such a node

// ---- streams and cores (lower/lower.cc; aoe's subgraph decisions) ---------------------------------------
// kStreamPolicyAttr = kParallelBranches on an op whose output several ops read: the chains that start there
// run on streams 0, 1, 2, ... so independent branches overlap; kCoreSplitAttr = K (int) tiles the side chains
// for K cores and the chain on stream 0 for the rest.
constexpr const char* kStreamPolicyAttr = "_stream_policy";
constexpr const char* kParallelBranches = "parallel_branches";
constexpr const char* kSingleStream = "single_stream";  // aoe's choice: keep these ops off the default branch streams
constexpr const char* kCoreSplitAttr = "_core_split";

// ---- L2 (sim/schedule.cc; aoe's subgraph decisions), comma-separated ------------------------------------
// kL2PinWeights: the node's constant inputs stay in a reserved part of L2 across iterations;
// kL2BypassOutputs: its outputs are written without allocating them in L2.
constexpr const char* kL2PolicyAttr = "_l2_policy";
constexpr const char* kL2PinWeights = "pin_weights";
constexpr const char* kL2BypassOutputs = "bypass_outputs";

}  // namespace npu
