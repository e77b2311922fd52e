// atc --mode=3: import only, and the per-op report CANN's pre-check writes (check_result.json). Mode 0 writes
// the same report when a model has unsupported ops.
#include <map>
#include <nlohmann/json.hpp>

#include "atc.h"
#include "base/json.h"
#include "compile/compile.h"

namespace npu::atc {
namespace {

using json = nlohmann::ordered_json;

// --check_report, else $ASCEND_WORK_PATH/check_result.json, else ./check_result.json.
std::string CheckReportPath(const AtcOptions& o) {
  if (!o.check_report.empty()) return o.check_report;
  const char* work = std::getenv("ASCEND_WORK_PATH");
  return work && *work ? std::string(work) + "/check_result.json" : "check_result.json";
}

}  // namespace

Status WriteCheckReport(const AtcOptions& o, const ModelInfo& info, const Status& import_status, std::ostream& out) {
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
  NPU_RETURN_IF_ERROR(WriteJsonFile(path, DumpJson(report, 2) + "\n"));
  out << "Pre-check report written to " << path << ": " << info.unsupported.size() << " of " << info.nodes.size() << " op(s) unsupported.\n";
  return Status::Ok();
}

int PreCheck(const AtcOptions& o, const CompileConfig& config, std::ostream& out) {
  CompileState state;
  Status imported = RunPasses(config, state, pass::kImport, pass::kImport);
  if (Status s = WriteCheckReport(o, state.info, imported, out); !s.ok()) return Fail(out, {s});
  if (!imported.ok()) return Fail(out, {imported});
  out << "ATC run success, welcome to the next use.\n";
  return 0;
}

}  // namespace npu::atc
