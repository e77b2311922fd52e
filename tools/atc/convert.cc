// atc --mode=0: model -> .om through Compile(), then what atc writes around it (--explain-precision,
// --save_original_model, --display_model_info, external weights).
#include <filesystem>
#include <nlohmann/json.hpp>

#include "atc.h"
#include "base/json.h"
#include "base/log.h"
#include "compile/compile.h"
#include "ir/node_attrs.h"
#include "lower/lower.h"

namespace npu::atc {
namespace {

using json = nlohmann::ordered_json;

// Each op's final dtypes, formats, engine and the rules that decided them (--explain-precision).
json ExplainPrecision(const Graph& g) {
  json ops = json::array();
  auto tensors = [&](const std::vector<int>& ids) {
    json a = json::array();
    for (int v : ids)
      if (v >= 0)
        a.push_back({{"name", g.values[v].name}, {"dtype", DTypeName(g.values[v].dtype)}, {"format", FormatName(DeviceFormat(g.values[v]))},
                     {"origin_format", LayoutOf(g.values[v])}});
    return a;
  };
  for (const Node& n : g.nodes)
    ops.push_back({{"name", n.name}, {"type", ShownType(n)}, {"engine", EngineName(NodeEngine(n))},
                   {"impl_mode", n.attr_string(kOpImplModeAttr)}, {"inputs", tensors(n.inputs)}, {"outputs", tensors(n.outputs)},
                   {"original_op_names", n.original_names}, {"rules", n.attr_string(kPrecisionReasonAttr, "not a float op: dtypes unchanged")}});
  return {{"op", ops}};
}

Status SaveOriginalModel(const AtcOptions& o, const CompileConfig& config) {
  NPU_ASSIGN_OR_RETURN(OmModel m, CompileOriginal(config));
  m.header.name = std::filesystem::path(o.output).filename().string() + "_original";
  m.header.platform_version = config.soc->name;
  Status s = SaveOm(o.output + "_original.om", m);
  return s.param() == "output" ? s.with_param("--output") : s;
}

// Profiles normally share every weight; when folding made them differ, each profile adds its own copy.
void ReportProfiles(const OmModel& m, const std::string& path, std::ostream& out) {
  std::error_code ec;
  double mb = static_cast<double>(std::filesystem::file_size(path, ec)) / 1e6, one = static_cast<double>(WeightBytes(m.graph)) / 1e6;
  size_t n = m.profiles.values.size();
  if (log::ShowInfo()) out << "[INFO] " << n << " shape profiles (" << m.profiles.DescribeAll() << "), .om " << mb << " MB\n";
  if (mb > 1.5 * one + 1)
    out << "[WARNING] the " << n << " shape profiles share little: the .om is " << mb << " MB for " << one
        << " MB of weights per profile (each profile stores its own)\n";
}

}  // namespace

int Convert(const AtcOptions& o, const CompileConfig& config, std::ostream& out) {
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& w : config.notes) out << "[WARNING] " << w << "\n";
  CompileState state;
  auto built = Compile(config, &state);
  for (const auto& w : state.warnings) out << "[WARNING] " << w << "\n";
  if (!built.ok()) {
    // As CANN's ATC does when parsing fails on unsupported ops: the per-op report, then the error.
    if (!state.info.unsupported.empty())
      if (Status s = WriteCheckReport(o, state.info, built.status(), out); !s.ok()) return Fail(out, {built.status(), s});
    return Fail(out, {built.status()});
  }
  OmModel& m = built.value();
  if (auto bank = m.attrs.find("tune_bank"); bank != m.attrs.end() && log::ShowInfo()) out << "[INFO] tune bank: " << bank->second << "\n";
  m.header.name = std::filesystem::path(o.output).filename().string();
  m.header.platform_version = m.attrs["soc_version"];
  for (int i : m.graph.inputs) m.header.dynamic |= NumElements(m.graph.values[i].shape) < 0;
  if (!o.explain_precision.empty())
    if (Status s = WriteJsonFile(o.explain_precision, DumpJson(ExplainPrecision(m.graph), 2) + "\n"); !s.ok()) return Fail(out, {s});
  std::string path = o.output + ".om";
  m.external_weight = std::stoi(o.external_weight);
  m.attrs["external_weight"] = o.external_weight;
  auto save_start = std::chrono::steady_clock::now();
  if (Status s = SaveOm(path, m); !s.ok()) return Fail(out, {s.param() == "output" ? s.with_param("--output") : s});
  NPU_LOG(kDebug, "ATC", "saved " << path << " in " << log::MsSince(save_start) << " ms");
  if (o.save_original_model == "true")
    if (Status s = SaveOriginalModel(o, config); !s.ok()) return Fail(out, {s});
  if (!m.profiles.empty()) ReportProfiles(m, path, out);
  if (o.display_model_info == "1") Display(path, out);
  NPU_LOG(kInfo, "ATC", "wrote " << path << " (" << m.graph.nodes.size() << " ops) in " << log::MsSince(t0) << " ms");
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

}  // namespace npu::atc
