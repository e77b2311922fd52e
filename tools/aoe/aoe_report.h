// What operator and subgraph tuning share: the result file (aoe_result_{opat|sgat}_{timestamp}_pid{pid}.json,
// rewritten atomically after every tuned unit), CANN's improvement figure and the REPEAT_TUNE switch.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "aoe.h"

namespace npu::aoe {

struct Report {
  std::string path;
  nlohmann::json root;
  std::string report_key;
  std::string section;  // "OPAT" or "SGAT"
  Status Write() const;
  // {"report_<ts>_<tid>": [{"basic": {...}}, {"OPAT"|"SGAT": {...}}]}
  nlohmann::json& Section() { return root[report_key][1][section]; }
  void SetTime(double seconds) { root[report_key][0]["basic"]["tuning_time(s)"] = seconds; }
};

// CANN's improvement: before/after - 1, as "12.34%".
std::string Percent(double before, double after);
void Count(nlohmann::json& summary, const char* counter);
// REPEAT_TUNE=True: tune again what the bank already holds.
bool RepeatTune();

// The subgraph tuning job --reload resumes: --reload=DIR, or the newest unfinished job of the model in
// aoe_workspace/ (sgat.cc). Asked before anything is written, so a first run with --reload writes nothing.
Result<std::filesystem::path> FindJob(const std::string& reload, const std::string& model_stem);
// --job_type=1 on one model (sgat.cc).
Status TuneSubgraphs(const AoeOptions& o, const AoeModelOptions& mo, Report& report, std::ostream& out);

}  // namespace npu::aoe
