// Compile(): THE conversion pipeline, one ordered list of named passes from a model file to an OmModel.
// atc, aoe, msame's .onnx reference path, --singleop and the tests all run it (or a range of it):
//
//   Import -> QdqToAscendQuant -> FoldConstants -> InferShapes -> AscendIRMapping -> SubgraphBank -> GraphFusion
//          -> Precision -> UBFusion -> Formats -> StreamAllocation -> Lowering -> OperatorBank
//
// Precision is decided before UB fusion, as CANN decides it: a UB fusion never crosses a dtype change. Every
// pass is timed (--log=info), can be dumped after (CompileConfig::dump_after; --log=debug logs the graph
// after each) and verified after (CompileConfig::verify_passes).
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compile/compile_config.h"
#include "frontend/importer.h"
#include "ir/graph.h"
#include "om/om_model.h"

namespace npu {

// What the pipeline works on. Up to Lowering the graph is `graph`; from Lowering on it is `model.graph`.
struct CompileState {
  Graph graph;
  OmModel model;
  bool lowered = false;
  ModelInfo info;                     // from Import: the framework model's nodes and unsupported ops
  std::vector<std::string> warnings;  // for the user (unused names in precision flags, ...)
  Graph& current() { return lowered ? model.graph : graph; }
};

// The pipeline's pass names in order (what --dump_after takes, with the fusion passes' own names).
const std::vector<std::string_view>& CompilePassNames();
// The passes by name, for callers that run a range of them: a renamed pass is a compile error, not E19999.
namespace pass {
inline constexpr std::string_view kImport = "Import", kQdqToAscendQuant = "QdqToAscendQuant",
                                  kFoldConstants = "FoldConstants", kInferShapes = "InferShapes",
                                  kAscendIRMapping = "AscendIRMapping", kSubgraphBank = "SubgraphBank",
                                  kGraphFusion = "GraphFusion", kPrecision = "Precision", kUBFusion = "UBFusion",
                                  kFormats = "Formats", kStreamAllocation = "StreamAllocation",
                                  kLowering = "Lowering", kOperatorBank = "OperatorBank";
}  // namespace pass
constexpr std::string_view kFirstPass = pass::kImport, kLastPass = pass::kOperatorBank;

// Runs the passes from `first` to `last` (inclusive) on `state`. From Import, the graph comes from the
// config's model file; from a later pass, the caller puts a graph in state.graph (aoe, --singleop).
Status RunPasses(const CompileConfig& c, CompileState& state, std::string_view first = kFirstPass, std::string_view last = kLastPass);

// The whole conversion: one graph per shape profile (profile 0 in model.graph/tasks), the banks as the config
// allows. `state` (optional) receives the import's ModelInfo and the warnings, also on failure.
Result<OmModel> Compile(const CompileConfig& c, CompileState* state = nullptr);

// The framework model as imported: folded, shapes inferred, Ascend IR types, no AIPP and no fp16 inputs,
// lowered as it is (atc --save_original_model).
Result<OmModel> CompileOriginal(const CompileConfig& c);

// One op graph of a single-op JSON (frontend/singleop): formats, lowering and the operator bank (the op's
// dtypes are the JSON's: no precision pass, no fusion).
Result<OmModel> CompileSingleOp(const CompileConfig& c, Graph g);

// Bytes of the constants `g` stores (in their device layouts).
uint64_t WeightBytes(const Graph& g);

}  // namespace npu
