#include "atc.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/text.h"
#include "frontend/aipp/aipp.h"
#include "frontend/input_shape.h"
#include "frontend/onnx/onnx_importer.h"
#include "kernels/registry.h"
#include "om/model_json.h"
#include "om/om_model.h"
#include "ir/ascend_types.h"
#include "lower/lower.h"
#include "passes/formats.h"
#include "passes/fusion.h"
#include "passes/pass_manager.h"
#include "passes/precision.h"
#include "runtime/runtime.h"
#include "tune/apply.h"
#include "tune/subgraph.h"
#include "soc/soc_spec.h"

namespace npu::atc {
namespace {

using json = nlohmann::ordered_json;

Status WriteJson(const std::string& path, const json& j) {
  std::string text = j.dump(2) + "\n";
  return WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

int Fail(std::ostream& out, const std::vector<Status>& errors) {
  out << "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n";
  for (const auto& e : errors) out << e.message() << "\n";
  return 1;
}

// ---- mode 0: convert ------------------------------------------------------------------------------

// --input_format names the layout of every graph input; it is recorded in the .om (and shown by --mode=1
// and --mode=6). A layout whose rank does not fit an input is an error, not a silent relabel.
Status ApplyInputFormat(Graph& g, const std::string& format) {
  if (format.empty()) return Status::Ok();
  size_t rank = format == "NCHW" ? 4 : format == "NCDHW" ? 5 : 0;
  for (int i : g.inputs) {
    Value& v = g.values[i];
    if (rank && v.has_shape && v.shape.size() != rank)
      return Status::Error("E10001", "--input_format", format,
                           "input '" + v.name + "' is " + std::to_string(v.shape.size()) + "-D (" + ShapeToString(v.shape) +
                               "), but " + format + " describes " + std::to_string(rank) + "-D tensors",
                           "Use ND for inputs that are not images, or fix --input_shape.");
    v.layout = format;
  }
  return Status::Ok();
}

// "true,false" -> {1, 0}; E10005 for anything else, E10001 when the count differs from `expected`.
Result<std::vector<bool>> ParseAdjustLayout(const std::string& flag, const std::string& spec, size_t expected, const std::string& of) {
  std::vector<bool> out;
  for (const std::string& v : SplitFields(spec, ',')) {
    if (v != "true" && v != "false") return Status::Error("E10005", flag, spec, "'" + v + "' is not true or false");
    out.push_back(v == "true");
  }
  if (out.size() != expected)
    return Status::Error("E10001", flag, spec, std::to_string(out.size()) + " value(s) for " + std::to_string(expected) + " entr(ies) of " + of,
                         "Give one true/false per entry of " + of + ", in its order.");
  return out;
}

// --input_fp16_nodes="in1;in2": those float inputs take fp16 data (the precision pass casts where the
// model computes in another dtype). AIPP writes its own input, so it cannot feed an fp16 one (E10034).
Status ApplyInputFp16Nodes(Graph& g, const AtcOptions& o) {
  const std::string& spec = o.input_fp16_nodes;
  bool aipp = !o.insert_op_conf.empty();
  if (spec.empty()) return Status::Ok();
  std::vector<std::string> names;
  for (const std::string& name : SplitFields(spec, ';'))
    if (!name.empty()) names.push_back(name);
  std::vector<bool> nc1hwc0(names.size(), false);
  if (!o.is_input_adjust_hw_layout.empty()) {
    NPU_ASSIGN_OR_RETURN(nc1hwc0, ParseAdjustLayout("--is_input_adjust_hw_layout", o.is_input_adjust_hw_layout, names.size(), "--input_fp16_nodes"));
  }
  for (size_t k = 0; k < names.size(); ++k) {
    const std::string& name = names[k];
    int v = g.FindValue(name);
    if (v < 0 || std::find(g.inputs.begin(), g.inputs.end(), v) == g.inputs.end())
      return Status::Error("E10016", "--input_fp16_nodes", name, "input '" + name + "' is not found in the model");
    if (!IsFloat(g.values[v].dtype))
      return Status::Error("E10001", "--input_fp16_nodes", name, "input '" + name + "' is " + std::string(DTypeName(g.values[v].dtype)) + ", not a float");
    if (aipp) return Status::Error("E10034", "--input_fp16_nodes", name, "the input is fed by AIPP (--insert_op_conf), which writes it itself");
    g.values[v].dtype = DType::kF16;
    if (!nc1hwc0[k]) continue;
    if (!g.values[v].has_shape || g.values[v].shape.size() != 4 || NumElements(g.values[v].shape) < 0)
      return Status::Error("E10001", "--is_input_adjust_hw_layout", "true", "input '" + name + "' is not a static 4-D tensor, so it has no NC1HWC0 layout");
    g.values[v].device_format = Format::kNC1HWC0;  // the caller hands the data in the device layout
  }
  return Status::Ok();
}


Result<Graph> Import(const AtcOptions& o, OnnxModelInfo* info) {
  OnnxImportOptions io;
  if (!o.input_shape.empty()) {
    NPU_ASSIGN_OR_RETURN(io.input_shapes, ParseInputShape(o.input_shape));
  }
  if (!o.out_nodes.empty()) {
    NPU_ASSIGN_OR_RETURN(io.out_nodes, ParseOutNodes(o.out_nodes));
  }
  NPU_ASSIGN_OR_RETURN(Graph g, ImportOnnx(o.model, io, info));
  NPU_RETURN_IF_ERROR(ApplyInputFormat(g, o.input_format));
  NPU_RETURN_IF_ERROR(ApplyInputFp16Nodes(g, o));
  if (!o.insert_op_conf.empty()) {
    NPU_ASSIGN_OR_RETURN(auto aipps, LoadAippConfig(o.insert_op_conf));
    for (const AippConfig& c : aipps) NPU_RETURN_IF_ERROR(InsertAipp(g, c));
  }
  return g;
}

// Each op's final dtypes, formats, engine and the rules that decided them (--explain-precision).
json ExplainPrecision(const Graph& g) {
  json ops = json::array();
  auto tensors = [&](const std::vector<int>& ids) {
    json a = json::array();
    for (int v : ids)
      if (v >= 0) a.push_back({{"name", g.values[v].name}, {"dtype", DTypeName(g.values[v].dtype)}, {"format", FormatName(DeviceFormat(g.values[v]))},
                   {"origin_format", LayoutOf(g.values[v])}});
    return a;
  };
  for (const Node& n : g.nodes)
    ops.push_back({{"name", n.name}, {"type", ShownType(n)}, {"engine", EngineName(NodeEngine(n))},
                   {"impl_mode", n.attr_string("_op_impl_mode")}, {"inputs", tensors(n.inputs)}, {"outputs", tensors(n.outputs)},
                   {"original_op_names", n.original_names}, {"rules", n.attr_string("_precision_reason", "not a float op: dtypes unchanged")}});
  return {{"op", ops}};
}

// The chip atc tiles for: --soc_spec's file, or the built-in spec of --soc_version.
Result<SocSpec> TargetSoc(const AtcOptions& o) {
  if (o.soc_spec.empty()) return *FindSoc(o.soc_version);
  NPU_ASSIGN_OR_RETURN(SocSpec soc, LoadSocSpecFile(o.soc_spec));
  if (!o.soc_version.empty() && o.soc_version != soc.name)
    return Status::Error("E10001", "--soc_version", o.soc_version, "--soc_spec " + o.soc_spec + " describes " + soc.name,
                         "Drop --soc_version or make it match the file's SoC_version.");
  return soc;
}

json TaskJson(const OmModel& m) {
  json tasks = json::array();
  for (const Task& t : m.tasks) {
    Work w = TaskWork(m.graph, t, nullptr);
    const Tiling& x = t.tiling;
    json tiling = {{"block_dim", x.block_dim}};
    if (t.kind == WorkKind::kCube)
      tiling.update({{"block_batch", x.block_batch}, {"block_m", x.block_m}, {"block_n", x.block_n}, {"base_m", x.base_m},
                     {"base_n", x.base_n}, {"base_k", x.base_k}, {"step_m", x.step_m}, {"step_n", x.step_n},
                     {"step_k", x.step_k}, {"db_l1", x.db_l1}, {"db_l0", x.db_l0}, {"order", x.n_inner ? "n_inner" : "m_inner"}});
    else if (t.kind == WorkKind::kVector)
      tiling.update({{"ub_tile", x.ub_tile}, {"db", x.db_l1}});
    tasks.push_back({{"task_id", t.task_id}, {"stream_id", t.stream_id}, {"op", m.graph.nodes[t.op_index].name},
                     {"type", t.kernel_name}, {"kind", WorkKindName(t.kind)}, {"engine", EngineName(t.engine)},
                     {"block_dim", t.block_dim}, {"tiling", tiling}, {"tiling_source", t.tiling_source},
                     {"tiling_key", TilingKey(w)}});
  }
  return tasks;
}

// The model around a finished graph: its tasks for `soc`, and the --input_shape ranges the runtime holds
// inputs to.
Result<OmModel> Lowered(Graph g, const SocSpec& soc, const AtcOptions& o) {
  OmModel m;
  m.graph = std::move(g);
  m.tasks = LowerToTasks(m.graph, &soc);
  if (!o.input_shape.empty()) {
    NPU_ASSIGN_OR_RETURN(auto ranges, ParseInputShapeRanges(o.input_shape));
    for (auto& r : ranges)
      if (r.min != r.max) m.input_ranges.push_back(std::move(r));
  }
  return m;
}

}  // namespace

Result<Graph> ImportGraph(const AtcOptions& o, OnnxModelInfo& info) {
  NPU_ASSIGN_OR_RETURN(Graph g, Import(o, &info));
  PassManager pm = DefaultPipeline();
  NPU_RETURN_IF_ERROR(pm.Run(g));
  MapAscendOpTypes(g);
  return g;
}

Result<std::string> PrecisionModeOf(const AtcOptions& o, const SocSpec& soc) {
  std::vector<Status> errors;
  PrecisionConfig precision = LoadPrecisionConfig(o.precision, soc, errors);
  if (!errors.empty()) return errors.front();
  return precision.mode_name;
}

Result<OmModel> CompileGraph(Graph g, const AtcOptions& o, const OnnxModelInfo& info, std::vector<std::string>& warnings) {
  NPU_ASSIGN_OR_RETURN(SocSpec soc, TargetSoc(o));
  std::vector<Status> errors;
  PrecisionConfig precision = LoadPrecisionConfig(o.precision, soc, errors);
  if (!errors.empty()) return errors.front();
  std::set<std::string> fusion_off;
  if (!o.fusion_switch_file.empty()) {
    NPU_ASSIGN_OR_RETURN(fusion_off, LoadFusionSwitchFile(o.fusion_switch_file, warnings));
  }
  PassManager fusion;
  AddFusionPasses(fusion, fusion_off);
  NPU_RETURN_IF_ERROR(fusion.Run(g));
  std::vector<bool> nc1hwc0_outputs;  // --is_output_adjust_hw_layout: those outputs leave as fp16 NC1HWC0
  if (!o.is_output_adjust_hw_layout.empty()) {
    NPU_ASSIGN_OR_RETURN(auto out_nodes, ParseOutNodes(o.out_nodes));
    NPU_ASSIGN_OR_RETURN(nc1hwc0_outputs, ParseAdjustLayout("--is_output_adjust_hw_layout", o.is_output_adjust_hw_layout, out_nodes.size(), "--out_nodes"));
    for (size_t k = 0; k < out_nodes.size(); ++k)
      if (nc1hwc0_outputs[k]) precision.output_type_by_node[{out_nodes[k].first, out_nodes[k].second}] = DType::kF16;
  }
  NPU_RETURN_IF_ERROR(AssignPrecision(g, precision, warnings));
  PassManager layout;
  layout.Add({"TransDataInsertPass", [&](Graph& x) { return AssignDeviceFormats(x, soc, nc1hwc0_outputs); }});
  NPU_RETURN_IF_ERROR(layout.Run(g));
  NPU_RETURN_IF_ERROR(g.Verify());
  NPU_ASSIGN_OR_RETURN(OmModel m, Lowered(std::move(g), soc, o));
  m.attrs = {{"atc_cmdline", o.cmdline},
             {"atc_version", kVersion},
             {"soc_version", soc.name},
             {"framework_type", o.framework},
             {"onnx_opset", std::to_string(info.opset)},
             {"producer", info.producer},
             {"precision_mode", precision.mode_name},
             {"overflow_mode", std::string(OverflowModeName(soc.default_overflow))}};
  // A user's chip travels inside the .om, so msame simulates the chip the model was tiled for.
  if (!o.soc_spec.empty()) {
    NPU_ASSIGN_OR_RETURN(m.attrs["soc_spec_ini"], ReadFileToString(o.soc_spec));
  }
  return m;
}

namespace {

// ONNX -> Ascend IR graph: fold and infer, map op types, [subgraph bank], fuse, assign precision, lower to
// tasks, [operator bank]. The banks are aoe's (TUNE_BANK_PATH: ATC reads only that variable, as CANN's does).
enum class Banks { kSubgraphOnly, kBoth };

Result<OmModel> Build(const AtcOptions& o, OnnxModelInfo& info, std::vector<std::string>& warnings, Banks banks) {
  NPU_ASSIGN_OR_RETURN(SocSpec soc, TargetSoc(o));
  NPU_ASSIGN_OR_RETURN(Graph g, ImportGraph(o, info));
  const char* bank_path = std::getenv("TUNE_BANK_PATH");
  bool use_bank = bank_path && *bank_path;
  std::string subgraph_note;
  // CANN applies subgraph decisions only with buffer optimization on.
  if (use_bank && o.buffer_optimize != "off_optimize") {
    NPU_ASSIGN_OR_RETURN(SubgraphBank sgb, SubgraphBank::Open(std::string(bank_path) + "/subgraph.json"));
    if (sgb.size() > 0) {
      NPU_ASSIGN_OR_RETURN(std::string precision_mode, PrecisionModeOf(o, soc));  // part of the records' keys
      auto subgraphs = PartitionSubgraphs(g, SubgraphContext(soc, precision_mode));
      int n = ApplySubgraphBank(g, subgraphs, sgb);
      subgraph_note = sgb.path() + " (" + std::to_string(n) + " of " + std::to_string(subgraphs.size()) + " subgraphs)";
    }
  }
  NPU_ASSIGN_OR_RETURN(OmModel m, CompileGraph(std::move(g), o, info, warnings));
  if (!subgraph_note.empty()) m.attrs["subgraph_bank"] = subgraph_note;
  if (use_bank && banks == Banks::kBoth) {
    NPU_ASSIGN_OR_RETURN(TuneBank bank, TuneBank::Open(bank_path, soc));
    int n = ApplyTuneBank(m.graph, m.tasks, soc, bank);
    m.attrs["tune_bank"] = bank.dir() + " (" + std::to_string(n) + " tilings)";
  }
  return m;
}

// --save_original_model: the framework's model as imported (folded, shapes inferred, Ascend IR types), before
// AIPP, fusion, precision and formats, as <output>_original.om.
Status SaveOriginalModel(const AtcOptions& o) {
  OnnxModelInfo info;
  NPU_ASSIGN_OR_RETURN(SocSpec soc, TargetSoc(o));
  AtcOptions as_framework = o;  // the framework's model: no AIPP, no fp16 inputs
  as_framework.insert_op_conf.clear();
  as_framework.input_fp16_nodes.clear();
  NPU_ASSIGN_OR_RETURN(Graph g, Import(as_framework, &info));
  PassManager pm = DefaultPipeline();
  NPU_RETURN_IF_ERROR(pm.Run(g));
  MapAscendOpTypes(g);
  NPU_ASSIGN_OR_RETURN(OmModel m, Lowered(std::move(g), soc, o));
  m.attrs = {{"atc_cmdline", o.cmdline}, {"atc_version", kVersion}, {"soc_version", soc.name}, {"framework_type", o.framework},
             {"original_model", "true"}};
  m.header.name = std::filesystem::path(o.output).filename().string() + "_original";
  m.header.platform_version = soc.name;
  Status s = SaveOm(o.output + "_original.om", m);
  return s.param() == "output" ? s.with_param("--output") : s;
}

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
Result<OmModel> BuildProfiles(const AtcOptions& o, const ShapeProfiles& p, OnnxModelInfo& info, std::vector<std::string>& warnings) {
  OmModel m;
  for (size_t k = 0; k < p.values.size(); ++k) {
    AtcOptions one = o;
    one.input_shape = InputShapeSpec(p.ShapesAt(k));
    std::vector<std::string> w;
    auto built = Build(one, info, w, Banks::kBoth);
    for (auto& x : w)
      if (std::find(warnings.begin(), warnings.end(), x) == warnings.end()) warnings.push_back(x);
    if (!built.ok()) return built.status().with_context("shape profile " + p.Describe(k));
    OmModel& b = built.value();
    AddShapeDataInput(b.graph, p.values[k].size());
    if (k == 0) m = std::move(b);
    else m.other_profiles.push_back({std::move(b.graph), std::move(b.tasks)});
  }
  m.profiles = p;
  return m;
}

// Bytes of the constants graph `g` stores (in their device layouts).
uint64_t WeightBytes(const Graph& g) {
  uint64_t n = 0;
  for (const Value& v : g.values)
    if (v.constant) n += static_cast<uint64_t>(NumElements(DeviceShapeOf(v))) * DTypeSize(v.dtype);
  return n;
}

int Display(const AtcOptions& o, std::ostream& out);  // mode 6, below
Status WriteCheckReport(const AtcOptions& o, const OnnxModelInfo& info, const Status& import_status, std::ostream& out);  // mode 3, below

int Convert(const AtcOptions& o, std::ostream& out) {
  auto t0 = std::chrono::steady_clock::now();
  OnnxModelInfo info;
  std::vector<std::string> warnings;
  auto profiles = ParseShapeProfiles(o);
  if (!profiles.ok()) return Fail(out, {profiles.status()});
  auto built = profiles.value().empty() ? Build(o, info, warnings, Banks::kBoth) : BuildProfiles(o, profiles.value(), info, warnings);
  for (const auto& w : warnings) out << "[WARNING] " << w << "\n";
  if (!built.ok()) {
    // As CANN's ATC does when parsing fails on unsupported ops: the per-op report, then the error.
    if (!info.unsupported.empty())
      if (Status s = WriteCheckReport(o, info, built.status(), out); !s.ok()) return Fail(out, {built.status(), s});
    return Fail(out, {built.status()});
  }
  OmModel& m = built.value();
  if (auto bank = m.attrs.find("tune_bank"); bank != m.attrs.end() && log::ShowInfo()) out << "[INFO] tune bank: " << bank->second << "\n";
  m.header.name = std::filesystem::path(o.output).filename().string();
  m.header.platform_version = m.attrs["soc_version"];
  for (int i : m.graph.inputs) m.header.dynamic |= NumElements(m.graph.values[i].shape) < 0;
  if (!o.explain_precision.empty())
    if (Status s = WriteJson(o.explain_precision, ExplainPrecision(m.graph)); !s.ok()) return Fail(out, {s});
  std::string path = o.output + ".om";
  m.external_weight = std::stoi(o.external_weight);
  m.attrs["external_weight"] = o.external_weight;
  auto save_start = std::chrono::steady_clock::now();
  if (Status s = SaveOm(path, m); !s.ok()) return Fail(out, {s.param() == "output" ? s.with_param("--output") : s});
  NPU_LOG(kDebug, "ATC", "saved " << path << " in " << log::MsSince(save_start) << " ms");
  if (o.save_original_model == "true")
    if (Status s = SaveOriginalModel(o); !s.ok()) return Fail(out, {s});
  if (!m.profiles.empty()) {
    std::error_code ec;
    double mb = static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6, one = static_cast<double>(WeightBytes(m.graph)) / 1e6;
    size_t n = m.profiles.values.size();
    if (log::ShowInfo()) out << "[INFO] " << n << " shape profiles (" << m.profiles.DescribeAll() << "), .om " << mb << " MB\n";
    // Profiles normally share every weight; when folding made them differ, each profile adds its own copy.
    if (mb > 1.5 * one + 1)
      out << "[WARNING] the " << n << " shape profiles share little: the .om is " << mb << " MB for " << one
          << " MB of weights per profile (each profile stores its own)\n";
  }
  if (o.display_model_info == "1") {
    AtcOptions show = o;
    show.om = path;
    Display(show, out);
  }
  double ms = log::MsSince(t0);
  NPU_LOG(kInfo, "ATC", "wrote " << path << " (" << m.graph.nodes.size() << " ops) in " << ms << " ms");
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

// ---- mode 3: pre-check ------------------------------------------------------------------------------

// The pre-check report's path: --check_report, else $ASCEND_WORK_PATH/check_result.json, else ./check_result.json.
std::string CheckReportPath(const AtcOptions& o) {
  if (!o.check_report.empty()) return o.check_report;
  const char* work = std::getenv("ASCEND_WORK_PATH");
  return work && *work ? std::string(work) + "/check_result.json" : "check_result.json";
}

// Writes the per-op report (mode 3 always; mode 0 when ops are unsupported) and says where it went.
Status WriteCheckReport(const AtcOptions& o, const OnnxModelInfo& info, const Status& import_status, std::ostream& out) {
  json ops = json::array();
  std::map<std::string, const UnsupportedNode*> bad;
  for (const auto& u : info.unsupported) bad[u.name] = &u;
  for (const auto& [name, type] : info.nodes) {
    json op = {{"name", name}, {"type", type}, {"result", bad.count(name) ? "failed" : "success"}, {"cause", json::array()}};
    if (bad.count(name)) op["cause"].push_back({{"code", "E16002"}, {"message", bad[name]->reason}});
    ops.push_back(op);
  }
  json report = {{"name", o.model},
                 {"result", import_status.ok() ? "success" : "failed"},
                 {"total", info.nodes.size()},
                 {"pass", info.nodes.size() - info.unsupported.size()},
                 {"fail", info.unsupported.size()},
                 {"op", ops}};
  if (!import_status.ok() && info.unsupported.empty()) report["error"] = import_status.message();
  std::string path = CheckReportPath(o);
  NPU_RETURN_IF_ERROR(WriteJson(path, report));
  out << "Pre-check report written to " << path << ": " << info.unsupported.size() << " of " << info.nodes.size() << " op(s) unsupported.\n";
  return Status::Ok();
}

int PreCheck(const AtcOptions& o, std::ostream& out) {
  OnnxModelInfo info;
  auto g = Import(o, &info);
  if (Status s = WriteCheckReport(o, info, g.status(), out); !s.ok()) return Fail(out, {s});
  if (!g.ok()) return Fail(out, {g.status()});
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

// ---- mode 1: .om / .onnx -> JSON -------------------------------------------------------------------

int ToJson(const AtcOptions& o, std::ostream& out) {
  json j;
  if (o.framework == "5") {
    OnnxModelInfo info;
    AtcOptions tmp = o;
    tmp.model = o.om;
    auto g = Import(tmp, &info);
    if (!g.ok()) return Fail(out, {g.status()});
    if (Status s = InferGraph(g.value()); !s.ok()) return Fail(out, {s});
    j = ModelToJson(g.value(), {{"framework_type", "5"}});
  } else {
    auto m = LoadOm(o.om);
    if (!m.ok()) return Fail(out, {m.status()});
    j = ModelToJson(m.value().graph, m.value().attrs);
    j["task"] = TaskJson(m.value());
  }
  if (Status s = WriteJson(o.json, j); !s.ok()) return Fail(out, {s});
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

// ---- mode 6: display model info --------------------------------------------------------------------

// The layout a net input or output is exchanged in: its device format where atc set one, else its own.
std::string ShownLayout(const Value& v) { return v.device_format ? std::string(FormatName(*v.device_format)) : LayoutOf(v); }

int Display(const AtcOptions& o, std::ostream& out) {
  auto m = LoadOm(o.om);
  if (!m.ok()) return Fail(out, {m.status()});
  const OmModel& om = m.value();
  auto attr = [&](const char* k) { auto it = om.attrs.find(k); return it == om.attrs.end() ? std::string("unknown") : it->second; };
  out << "============ Display Model Info start ============\n"
      << "Original Atc command line: " << attr("atc_cmdline") << "\n"
      << "system   info: atc_version[" << attr("atc_version") << "], soc_version[" << attr("soc_version")
      << "], framework_type[" << attr("framework_type") << "].\n"
      << "resource info: memory_size[0 B], weight_size[" << om.weight_size << " B], stream_num[" << StreamCount(om.tasks) << "], event_num[" << EventCount(om.graph, om.tasks) << "].\n"
      << "om       info: modeldef_size[" << om.model_def_size << " B], weight_data_size[" << om.weight_size
      << " B], tbe_kernels_size[0 B], cust_aicpu_kernel_store_size[0 B], task_info_size[" << om.task_info_size << " B].\n"
      << "graph    info: ops[" << om.graph.nodes.size() << "], inputs[" << om.graph.inputs.size() << "], outputs["
      << om.graph.outputs.size() << "].\n";
  if (!om.profiles.empty()) {
    out << "dynamic  info: " << om.profiles.kind << " profiles[" << om.profiles.values.size() << "]: " << om.profiles.DescribeAll()
        << " (shown: profile " << om.profile << ")\n";
    for (const auto& [name, shape] : om.profiles.inputs) out << "  dynamic input " << name << ": " << ShapeToString(shape) << "\n";
  }
  for (const InputRange& r : om.input_ranges) {
    out << "  input range " << r.name << ": [";
    for (size_t d = 0; d < r.min.size(); ++d)
      out << (d ? "," : "") << (r.min[d] == r.max[d] ? std::to_string(r.min[d]) : std::to_string(r.min[d]) + "~" + std::to_string(r.max[d]));
    out << "]\n";
  }
  for (int i : om.graph.inputs)
    out << "  input  " << om.graph.values[i].name << ": " << DTypeName(om.graph.values[i].dtype)
        << ShapeToString(DeviceShapeOf(om.graph.values[i])) << " " << ShownLayout(om.graph.values[i]) << "\n";
  for (int i : om.graph.outputs)
    out << "  output " << om.graph.values[i].name << ": " << DTypeName(om.graph.values[i].dtype) << ShapeToString(DeviceShapeOf(om.graph.values[i]))
        << (om.graph.values[i].device_format ? " " + ShownLayout(om.graph.values[i]) : std::string()) << "\n";
  out << "task     info: tasks[" << om.tasks.size() << "]\n";
  for (const Task& t : om.tasks)
    if (t.on_device())
      out << "  task " << t.task_id << " " << t.kernel_name << " " << om.graph.nodes[t.op_index].name << ": " << WorkKindName(t.kind)
          << " " << TilingToString(TaskWork(om.graph, t, nullptr), t.tiling) << " (" << t.tiling_source << ")\n";
  if (auto soc = ModelSoc(om); soc.ok() && soc.value()) {
    IterationTiming it = ScheduleIteration(om.graph, om.tasks, *soc.value());
    out << FormatSimulatedTime(it.total_ns, BatchOf(om.graph), *soc.value()) << "\n";
  }
  out << "============ Display Model Info end   ============\n";
  return 0;
}

}  // namespace

Result<OmModel> BuildModel(const AtcOptions& o, std::vector<std::string>& warnings) {
  OnnxModelInfo info;
  return Build(o, info, warnings, Banks::kSubgraphOnly);
}

Result<std::vector<std::pair<std::string, int>>> ParseOutNodes(std::string_view spec) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& item : SplitFields(spec, ';')) {
    if (item.empty()) continue;
    auto colon = item.rfind(':');
    std::string name = colon == std::string::npos ? item : item.substr(0, colon);
    int idx = 0;
    if (colon != std::string::npos) {
      char* end = nullptr;
      idx = static_cast<int>(std::strtol(item.c_str() + colon + 1, &end, 10));
      if (*end != '\0' || colon + 1 == item.size() || idx < 0)
        return Status::Error("E10001", "--out_nodes", std::string(spec), "entry '" + item + "' is not of the form node:index");
    }
    out.emplace_back(name, idx);
  }
  return out;
}

std::vector<std::string> InspectedFiles(const AtcOptions& o) {
  std::vector<std::string> files;
  if (!o.om.empty()) files.push_back(o.om);
  for (const auto& f : o.unknown_flags)
    if (!f.starts_with("-")) files.push_back(f);
  return files;
}

std::vector<Status> ValidateOptions(const AtcOptions& o) {
  std::vector<Status> errs;
  bool inspect = o.mode == "diff" || o.mode == "verify";
  for (const auto& f : o.unknown_flags)
    if (!inspect || f.starts_with("-")) errs.push_back(cli::UnknownFlag(f, "atc"));
  if (inspect) {
    auto files = InspectedFiles(o);
    size_t want = o.mode == "diff" ? 2 : 1;
    if (files.size() != want)
      errs.push_back(Status::Error("E10001", "--mode", o.mode, "needs " + std::to_string(want) + " .om file(s), got " + std::to_string(files.size()),
                                   o.mode == "diff" ? "Use atc --mode=diff a.om b.om." : "Use atc --mode=verify --om=model.om."));
    for (const auto& f : files)
      if (!FileExists(f)) errs.push_back(Status::Error("E13001", "--om", f, "the file does not exist"));
    return errs;
  }
  if (!o.log.empty() && !log::ParseLevel(o.log))
    errs.push_back(Status::Error("E10010", "--log", o.log, "the log level must be one of debug, info, warning, error, null"));
  if (o.mode != "0" && o.mode != "1" && o.mode != "3" && o.mode != "6" && o.mode != "diff" && o.mode != "verify") {
    errs.push_back(Status::Error("E10001", "--mode", o.mode,
                                 "only support 0(model to framework model), 1(framework model to json), 3(only pre-check), 6(display model info), "
                                 "diff (two .om files), verify (one .om)"));
    return errs;
  }
  if (!o.singleop.empty()) {  // --singleop: a JSON of ops instead of a model
    if (!FileExists(o.singleop)) errs.push_back(Status::Error("E10023", "--singleop", o.singleop, "the file does not exist"));
    if (o.output.empty()) errs.push_back(Status::Error("E10004", "--output", "", "Value for --output (the folder for the .om files) is empty"));
    if (o.soc_version.empty()) errs.push_back(Status::Error("E10007", "--soc_version", "", "--soc_version is required with --singleop"));
    else if (!FindSoc(o.soc_version)) errs.push_back(Status::Error("E10001", "--soc_version", o.soc_version, "supported SoCs are " + SocNames()));
    if (!o.model.empty()) errs.push_back(Status::Error("E10047", "--singleop", o.singleop, "--singleop and --model are mutually exclusive"));
    return errs;
  }
  bool build = o.mode == "0" || o.mode == "3";
  if (build || (o.mode == "1" && !o.framework.empty())) {
    if (o.framework.empty()) errs.push_back(Status::Error("E10007", "--framework", "", "--framework is required. The value must be 5 (ONNX)"));
    else if (o.framework != "5")
      errs.push_back(Status::Error("E10001", "--framework", o.framework, "this build supports 5 (ONNX) only; 0 Caffe, 1 MindSpore and 3 TensorFlow are not available"));
  }
  if (build) {
    if (o.model.empty()) errs.push_back(Status::Error("E10004", "--model", "", "Value for --model is empty"));
    else if (!FileExists(o.model)) errs.push_back(Status::Error("E13001", "--model", o.model, "the model file does not exist"));
    if (!o.soc_spec.empty()) {
      if (auto soc = TargetSoc(o); !soc.ok()) errs.push_back(soc.status());
      else LoadPrecisionConfig(o.precision, soc.value(), errs);
    } else if (o.soc_version.empty())
      errs.push_back(Status::Error("E10007", "--soc_version", "", "--soc_version is required in mode " + o.mode + ". The value must be one of the supported SoCs (e.g. Ascend310P3) or --soc_spec a platform .ini"));
    else if (!FindSoc(o.soc_version))
      errs.push_back(Status::Error("E10001", "--soc_version", o.soc_version, "supported SoCs are " + SocNames()));
    else
      LoadPrecisionConfig(o.precision, *FindSoc(o.soc_version), errs);
    std::vector<std::string> ignored;
    if (!o.fusion_switch_file.empty())
      if (auto r = LoadFusionSwitchFile(o.fusion_switch_file, ignored); !r.ok()) errs.push_back(r.status());
    if (o.buffer_optimize != "l2_optimize" && o.buffer_optimize != "l1_optimize" && o.buffer_optimize != "off_optimize")
      errs.push_back(Status::Error("E10001", "--buffer_optimize", o.buffer_optimize, "the value must be l2_optimize, l1_optimize or off_optimize"));
    if (o.mode == "0" && o.output.empty()) errs.push_back(Status::Error("E10004", "--output", "", "Value for --output is empty"));
    auto shapes = o.input_shape.empty() ? Result<std::map<std::string, Shape>>(std::map<std::string, Shape>{}) : ParseInputShape(o.input_shape);
    if (!shapes.ok()) errs.push_back(shapes.status());
    else if (auto p = ParseShapeProfiles(o); !p.ok()) errs.push_back(p.status());
    if (!o.is_input_adjust_hw_layout.empty() && o.input_fp16_nodes.empty())
      errs.push_back(Status::Error("E10057", "--is_input_adjust_hw_layout", o.is_input_adjust_hw_layout, "it needs --input_fp16_nodes"));
    if (!o.is_output_adjust_hw_layout.empty() && o.out_nodes.empty())
      errs.push_back(Status::Error("E10057", "--is_output_adjust_hw_layout", o.is_output_adjust_hw_layout, "it needs --out_nodes"));
    if (o.display_model_info != "0" && o.display_model_info != "1")
      errs.push_back(Status::Error("E10006", "--display_model_info", o.display_model_info, "the value must be 1 or 0"));
    if (o.save_original_model != "true" && o.save_original_model != "false")
      errs.push_back(Status::Error("E10005", "--save_original_model", o.save_original_model, "the value must be true or false"));
    if (o.external_weight != "0" && o.external_weight != "1" && o.external_weight != "2")
      errs.push_back(Status::Error("E10001", "--external_weight", o.external_weight, "the value must be 0, 1 or 2"));
    if (!o.insert_op_conf.empty()) {
      if (!o.dynamic_dims.empty())
        errs.push_back(Status::Error("E10047", "--insert_op_conf", o.insert_op_conf, "--insert_op_conf and --dynamic_dims are mutually exclusive"));
      else if (auto a = LoadAippConfig(o.insert_op_conf); !a.ok()) errs.push_back(a.status());
    }
    if (!o.out_nodes.empty())
      if (auto r = ParseOutNodes(o.out_nodes); !r.ok()) errs.push_back(r.status());
    if (!o.input_format.empty() && o.input_format != "NCHW" && o.input_format != "ND" && o.input_format != "NCDHW")
      errs.push_back(Status::Error("E10001", "--input_format", o.input_format, "for ONNX models the input format must be NCHW, ND or NCDHW"));
  }
  if (o.mode == "1" || o.mode == "6") {
    if (o.om.empty()) errs.push_back(Status::Error("E10004", "--om", "", "Value for --om is empty; mode " + o.mode + " reads the model given by --om"));
    else if (!FileExists(o.om)) errs.push_back(Status::Error("E13001", "--om", o.om, "the file does not exist"));
  }
  if (o.mode == "1" && o.json.empty()) errs.push_back(Status::Error("E10004", "--json", "", "Value for --json is empty"));
  return errs;
}

int RunAtc(const AtcOptions& o, std::ostream& out, std::ostream& err) {
  (void)err;
  if (!o.log.empty())
    if (auto l = log::ParseLevel(o.log)) log::SetLevel(*l);
  out << "ATC start working now, please wait for a moment.\n";
  std::vector<Status> errs = ValidateOptions(o);
  if (!errs.empty()) {
    Fail(out, errs);
    return o.mode == "diff" || o.mode == "verify" ? cli::kUsage : cli::ExitCodeFor(errs);
  }
  RegisterBuiltinOps();
  if (!o.singleop.empty()) return ConvertSingleOps(o, out);
  if (o.mode == "diff") return DiffModels(InspectedFiles(o)[0], InspectedFiles(o)[1], out);
  if (o.mode == "verify") return VerifyModel(InspectedFiles(o)[0], out);
  if (o.mode == "0") return Convert(o, out);
  if (o.mode == "3") return PreCheck(o, out);
  if (o.mode == "1") return ToJson(o, out);
  return Display(o, out);
}

}  // namespace npu::atc
