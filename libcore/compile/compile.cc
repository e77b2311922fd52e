#include "compile/compile.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "base/file_io.h"
#include "base/log.h"
#include "base/version.h"
#include "frontend/aipp/aipp.h"
#include "frontend/import_fusion.h"
#include "ir/ascend_types.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "lower/lower.h"
#include "passes/formats.h"
#include "passes/fusion.h"
#include "passes/pass_manager.h"
#include "passes/precision.h"
#include "passes/qdq.h"
#include "tune/apply.h"
#include "tune/bank.h"
#include "tune/subgraph.h"

namespace npu {
namespace {

// ---- the passes ---------------------------------------------------------------------------------------

// --input_format names the layout of the graph inputs; it is recorded in the .om (and shown by --mode=1 and
// --mode=6). Where the importer says so (ONNX) an image layout must fit every input, else an input of another
// rank is an error, not a silent relabel; TensorFlow graphs mix NHWC images with 2-D inputs, and there an image
// layout applies to the inputs of its rank.
Status ApplyInputFormat(Graph& g, const std::string& format, bool other_ranks_ok) {
  if (format.empty()) return Status::Ok();
  size_t rank = format == "NCHW" || format == "NHWC" ? 4 : format == "NCDHW" || format == "NDHWC" ? 5 : 0;
  for (int i : g.inputs) {
    Value& v = g.values[i];
    if (rank && v.has_shape && v.shape.size() != rank) {
      if (other_ranks_ok) continue;
      return Status::Error("E10001", "--input_format", format,
                           "input '" + v.name + "' is " + std::to_string(v.shape.size()) + "-D (" + ShapeToString(v.shape) + "), but " + format +
                               " describes " + std::to_string(rank) + "-D tensors",
                           "Use ND for inputs that are not images, or fix --input_shape.");
    }
    v.layout = format;
  }
  return Status::Ok();
}

// --input_fp16_nodes: those float inputs take fp16 data (the precision pass casts where the model computes
// in another dtype); with --is_input_adjust_hw_layout also in NC1HWC0.
Status ApplyFp16Inputs(Graph& g, const CompileConfig& c) {
  for (size_t k = 0; k < c.fp16_inputs.size(); ++k) {
    const std::string& name = c.fp16_inputs[k];
    int v = g.FindValue(name);
    if (v < 0 || std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end())
      return Status::Error("E10016", "--input_fp16_nodes", name, "input '" + name + "' is not found in the model");
    Value& x = g.values[v];
    if (!IsFloat(x.dtype))
      return Status::Error("E10001", "--input_fp16_nodes", name, "input '" + name + "' is " + std::string(DTypeName(x.dtype)) + ", not a float");
    x.dtype = DType::kF16;
    if (!c.fp16_inputs_nc1hwc0[k]) continue;
    if (!x.has_shape || x.shape.size() != 4 || NumElements(x.shape) < 0)
      return Status::Error("E10001", "--is_input_adjust_hw_layout", "true", "input '" + name + "' is not a static 4-D tensor, so it has no NC1HWC0 layout");
    x.device_format = Format::kNC1HWC0;  // the caller hands the data in the device layout
  }
  return Status::Ok();
}

// What an import leaves to the passes after it: the input format and fp16 inputs the user gave, and AIPP.
Status ApplyUserInputs(const CompileConfig& c, CompileState& s) {
  NPU_RETURN_IF_ERROR(ApplyInputFormat(s.graph, c.input_format, !c.importer->input_format_fits_all()));
  NPU_RETURN_IF_ERROR(ApplyFp16Inputs(s.graph, c));
  for (const AippConfig& a : c.aipp) NPU_RETURN_IF_ERROR(InsertAipp(s.graph, a));
  return Status::Ok();
}

Status FoldConstants(const CompileConfig&, CompileState& s) { return FoldConstantsPass(s.graph); }
Status InferShapes(const CompileConfig&, CompileState& s) { return InferGraph(s.graph); }

Status AscendIRMapping(const CompileConfig&, CompileState& s) {
  MapAscendOpTypes(s.graph);
  return Status::Ok();
}

// aoe's subgraph decisions (fusion, L2, streams, core split) for the subgraphs the bank knows.
Status ApplySubgraphBankPass(const CompileConfig& c, CompileState& s) {
  NPU_ASSIGN_OR_RETURN(SubgraphBank bank, SubgraphBank::Open(c.tune_bank_path + "/subgraph.json"));
  if (bank.size() == 0) return Status::Ok();
  auto subgraphs = PartitionSubgraphs(s.graph, SubgraphContext(*c.soc, c.precision.mode_name));  // the mode is part of the key
  int n = ApplySubgraphBank(s.graph, subgraphs, bank);
  s.model.attrs["subgraph_bank"] = bank.path() + " (" + std::to_string(n) + " of " + std::to_string(subgraphs.size()) + " subgraphs)";
  return Status::Ok();
}

Status Precision(const CompileConfig& c, CompileState& s) { return AssignPrecision(s.graph, c.precision, s.warnings); }

Status Formats(const CompileConfig& c, CompileState& s) {
  int c04_convs = 0;
  NPU_RETURN_IF_ERROR(AssignDeviceFormats(s.graph, *c.soc, c.nc1hwc0_outputs, c.small_channel, &c04_convs));
  if (c.small_channel && c04_convs == 0)  // CANN: the option only works with static AIPP before a conv of C <= 4
    s.warnings.push_back("--enable_small_channel=1 changed nothing: no conv of 4 or fewer input channels reads a static "
                         "AIPP's output (--insert_op_conf)");
  return Status::Ok();
}

// Independent branches on parallel streams, as GE allocates them (not with --enable_single_stream=true).
Status StreamAllocation(const CompileConfig&, CompileState& s) {
  AllocateParallelStreams(s.graph);
  return Status::Ok();
}

// ONNX QDQ as CANN's quantization ops (passes/qdq.h), before folding could turn the DQ'd weights into floats;
// then every AscendQuant (AMCT's or the rewrite's) must feed int8 layers. Not on the reference path, which
// keeps ONNX's QuantizeLinear / DequantizeLinear semantics.
Status QdqToAscend(const CompileConfig& c, CompileState& s) {
  NPU_RETURN_IF_ERROR(QdqToAscendQuant(s.graph, c.qdq, s.warnings));
  return CheckQuantizedConsumers(s.graph);
}

// The model around the finished graph: its tasks for the SoC and what the .om records about the conversion.
Status Lowering(const CompileConfig& c, CompileState& s) {
  NPU_RETURN_IF_ERROR(s.graph.Verify());
  OmModel& m = s.model;
  m.graph = std::move(s.graph);
  s.lowered = true;
  m.tasks = LowerToTasks(m.graph, c.soc.get());
  m.input_ranges = c.input_ranges;
  if (!c.soc) return Status::Ok();
  m.attrs.insert({{"atc_cmdline", c.cmdline},
                  {"atc_version", NPUKIT_TOOL_VERSION("atc")},
                  {"soc_version", c.soc->name},
                  {"framework_type", c.framework},
                  {"overflow_mode", std::string(OverflowModeName(c.soc->default_overflow))}});
  if (c.framework == kSingleOpFramework) return Status::Ok();  // no framework model, no precision pass
  m.attrs.insert({{"onnx_opset", std::to_string(s.info.opset)},
                  {"producer", s.info.producer},
                  {"precision_mode", c.precision.mode_name}});
  // A user's chip travels inside the .om, so msame simulates the chip the model was tiled for.
  if (!c.soc_spec_text.empty()) m.attrs["soc_spec_ini"] = c.soc_spec_text;
  return Status::Ok();
}

// aoe's tilings for the tasks whose work the operator bank knows.
Status ApplyOperatorBank(const CompileConfig& c, CompileState& s) {
  NPU_ASSIGN_OR_RETURN(TuneBank bank, TuneBank::Open(c.tune_bank_path, *c.soc));
  int n = ApplyTuneBank(s.model.graph, s.model.tasks, *c.soc, bank);
  s.model.attrs["tune_bank"] = bank.dir() + " (" + std::to_string(n) + " tilings)";
  return Status::Ok();
}

// ---- the list --------------------------------------------------------------------------------------------

struct CompileContext;
using PassFn = Status (*)(const CompileConfig&, CompileState&, CompileContext&);

// After-pass hooks shared by the pipeline's passes and the fusion passes inside GraphFusion / UBFusion.
struct CompileContext {
  const CompileConfig& config;
  int dumped = 0;

  Status AfterPass(std::string_view name, const Graph& g) {
    if (config.verify_passes)
      if (Status v = g.Verify(); !v.ok()) return Status(v).with_context("after pass " + std::string(name));
    NPU_LOG(kDebug, "PASS", "graph after " << name << ":\n" << g.ToText());
    if (!config.dump_after.count(std::string(name)) && !config.dump_after.count("all")) return Status::Ok();
    const char* dir = std::getenv("DUMP_GRAPH_PATH");
    char seq[8];
    std::snprintf(seq, sizeof seq, "%03d", dumped++);
    std::string path = std::string(dir && *dir ? dir : ".") + "/ge_graph_" + seq + "_" + std::string(name) + ".txt";
    std::string text = g.ToText();
    Status w = WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
    return w.ok() ? w : Status(w).with_param("--dump_after");
  }
};

Status RunFusion(const CompileConfig& c, CompileState& s, CompileContext& ctx, FusionKind kind) {
  PassManager pm;
  AddFusionPasses(pm, kind, c.fusion_off);
  pm.SetAfterPass([&](std::string_view name, Graph& g) { return ctx.AfterPass(name, g); });
  return pm.Run(s.graph);
}

// The framework model as an ir::Graph: the importer's translation, then the import fusions (frontend/
// import_fusion.h), on every path, then what the user said about the inputs.
Status Import(const CompileConfig& c, CompileState& s, CompileContext& ctx) {
  NPU_ASSIGN_OR_RETURN(s.graph, c.importer->Import(c.model, c.import, &s.info));
  s.warnings.insert(s.warnings.end(), s.info.warnings.begin(), s.info.warnings.end());
  PassManager pm;
  for (const ImportPass& p : ImportPasses()) pm.Add({std::string(p.name), p.run});
  pm.SetAfterPass([&](std::string_view name, Graph& g) { return ctx.AfterPass(name, g); });
  NPU_RETURN_IF_ERROR(pm.Run(s.graph));
  return ApplyUserInputs(c, s);
}

template <Status (*F)(const CompileConfig&, CompileState&)>
Status Plain(const CompileConfig& c, CompileState& s, CompileContext&) {
  return F(c, s);
}
Status GraphFusion(const CompileConfig& c, CompileState& s, CompileContext& ctx) { return RunFusion(c, s, ctx, FusionKind::kGraph); }
Status UBFusion(const CompileConfig& c, CompileState& s, CompileContext& ctx) { return RunFusion(c, s, ctx, FusionKind::kUB); }

// When a pass runs, from the config alone: the pass bodies hold no early returns.
bool Always(const CompileConfig&) { return true; }
bool NotReference(const CompileConfig& c) { return c.goal != CompileGoal::kReference; }
bool SubgraphBankOn(const CompileConfig& c) { return !c.tune_bank_path.empty() && c.subgraph_bank; }
bool OperatorBankOn(const CompileConfig& c) { return !c.tune_bank_path.empty() && c.operator_bank; }
bool ParallelStreams(const CompileConfig& c) { return !c.single_stream; }

struct CompilePass {
  std::string_view name;
  PassFn run;
  bool needs_soc;  // the SoC-free goal (the reference path) stops at the framework graph
  bool (*enabled)(const CompileConfig&);
};

// THE pass list. Names are what --dump_after and the logs use.
const CompilePass kPasses[] = {
    {pass::kImport, Import, false, Always},
    {pass::kQdqToAscendQuant, Plain<QdqToAscend>, false, NotReference},
    {pass::kFoldConstants, Plain<FoldConstants>, false, Always},
    {pass::kInferShapes, Plain<InferShapes>, false, Always},
    {pass::kAscendIRMapping, Plain<AscendIRMapping>, true, Always},
    {pass::kSubgraphBank, Plain<ApplySubgraphBankPass>, true, SubgraphBankOn},
    {pass::kGraphFusion, GraphFusion, true, Always},
    {pass::kPrecision, Plain<Precision>, true, Always},
    {pass::kUBFusion, UBFusion, true, Always},
    {pass::kFormats, Plain<Formats>, true, Always},
    {pass::kStreamAllocation, Plain<StreamAllocation>, true, ParallelStreams},
    {pass::kLowering, Plain<Lowering>, true, Always},
    {pass::kOperatorBank, Plain<ApplyOperatorBank>, true, OperatorBankOn},
};

int PassIndex(std::string_view name) {
  for (size_t i = 0; i < std::size(kPasses); ++i)
    if (kPasses[i].name == name) return static_cast<int>(i);
  return -1;
}

}  // namespace

const std::vector<std::string_view>& CompilePassNames() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> v;
    for (const CompilePass& p : kPasses) v.push_back(p.name);
    return v;
  }();
  return names;
}

Status RunPasses(const CompileConfig& c, CompileState& s, std::string_view first, std::string_view last) {
  RegisterBuiltinOps();  // importers check nodes against the schemas; folding runs kernels
  int from = PassIndex(first), to = PassIndex(last);
  if (from < 0 || to < 0 || from > to) return Status::Error("E19999", "pass", std::string(first) + ".." + std::string(last), "not a range of the compile pipeline");
  CompileContext ctx{c};
  for (int i = from; i <= to; ++i) {
    const CompilePass& p = kPasses[i];
    if (!c.soc && p.needs_soc) return Status::Error("E19999", "pass", std::string(p.name), "this pass needs a target SoC (--soc_version)");
    if (!p.enabled(c)) {
      NPU_LOG(kInfo, "PASS", p.name << ": off for this conversion");
      continue;
    }
    size_t before = s.current().nodes.size();
    auto t0 = std::chrono::steady_clock::now();
    NPU_RETURN_IF_ERROR(p.run(c, s, ctx));
    NPU_LOG(kInfo, "PASS", p.name << ": " << log::MsSince(t0) << " ms, nodes " << before << " -> " << s.current().nodes.size());
    NPU_RETURN_IF_ERROR(ctx.AfterPass(p.name, s.current()));
  }
  return Status::Ok();
}

namespace {

// The input CANN adds to a profile model: the profile's values (filled by msame from --dymBatch & co.).
void AddShapeDataInput(Graph& g, size_t values) {
  int v = g.AddValue(kShapeDataInput);
  g.values[v].dtype = DType::kI64;
  g.values[v].shape = {static_cast<int64_t>(values)};
  g.values[v].has_shape = true;
  g.values[v].layout = "ND";
  g.inputs.push_back(v);
}

// Every shape profile built as its own static graph, kept in one model (profile 0 in graph/tasks). Weights
// the profiles share are stored once (SaveOm).
Result<OmModel> CompileProfiles(const CompileConfig& c, CompileState& s) {
  OmModel m;
  const ShapeProfiles& p = c.profiles;
  for (size_t k = 0; k < p.values.size(); ++k) {
    CompileConfig one = c;
    one.profiles = {};
    for (const auto& [name, shape] : p.ShapesAt(k)) one.import.input_shapes[name] = shape;
    CompileState part;
    Status st = RunPasses(one, part, kFirstPass, kLastPass);
    for (auto& w : part.warnings)
      if (std::find(s.warnings.begin(), s.warnings.end(), w) == s.warnings.end()) s.warnings.push_back(w);
    if (k == 0) s.info = part.info;
    if (!st.ok()) return st.with_context("shape profile " + p.Describe(k));
    OmModel& b = part.model;
    AddShapeDataInput(b.graph, p.values[k].size());
    if (k == 0) m = std::move(b);
    else m.other_profiles.push_back({std::move(b.graph), std::move(b.tasks)});
  }
  m.profiles = p;
  return m;
}

}  // namespace

Result<OmModel> Compile(const CompileConfig& c, CompileState* state) {
  CompileState local;
  CompileState& s = state ? *state : local;
  if (!c.profiles.empty()) return CompileProfiles(c, s);
  NPU_RETURN_IF_ERROR(RunPasses(c, s, kFirstPass, kLastPass));
  return std::move(s.model);
}

Result<OmModel> CompileOriginal(const CompileConfig& c) {
  CompileConfig as_framework = c;  // the framework's model: no AIPP, no fp16 inputs, no banks
  as_framework.aipp.clear();
  as_framework.fp16_inputs.clear();
  as_framework.fp16_inputs_nc1hwc0.clear();
  CompileState s;
  NPU_RETURN_IF_ERROR(RunPasses(as_framework, s, kFirstPass, pass::kAscendIRMapping));
  NPU_RETURN_IF_ERROR(RunPasses(as_framework, s, pass::kLowering, pass::kLowering));
  s.model.attrs = {{"atc_cmdline", c.cmdline},
                   {"atc_version", NPUKIT_TOOL_VERSION("atc")},
                   {"soc_version", c.soc->name},
                   {"framework_type", c.framework},
                   {"original_model", "true"}};
  return std::move(s.model);
}

Result<OmModel> CompileSingleOp(const CompileConfig& c, Graph g) {
  CompileState s;
  s.graph = std::move(g);
  NPU_RETURN_IF_ERROR(RunPasses(c, s, pass::kFormats, kLastPass));
  return std::move(s.model);
}

uint64_t WeightBytes(const Graph& g) {
  uint64_t n = 0;
  for (const Value& v : g.values)
    if (v.constant) n += static_cast<uint64_t>(NumElements(DeviceShapeOf(v))) * DTypeSize(v.dtype);
  return n;
}

}  // namespace npu
