#include "profparse.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <ostream>

#include "base/cli.h"
#include "base/log.h"
#include "hwts_export.h"
#include "msprof_db.h"
#include "msprof_tables.h"
#include "raw_profile.h"

namespace npu::profparse {
namespace {

bool IsOnOff(const std::string& v) { return v == "on" || v == "off"; }
bool IsCount(const std::string& v) {
  return !v.empty() && v.size() < 10 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int Query(const std::vector<std::string>& dirs, std::ostream& out) {
  out << "Job Info\tDevice ID\tDir Name\tCollection Time\tModel ID\tIteration Number\tTop Time Iteration\tRank ID\n";
  int rc = 0;
  for (const auto& dir : dirs) {
    auto p = LoadProfile(dir);
    if (!p.ok()) {
      cli::PrintError(out, p.status());
      rc = 1;
      continue;
    }
    std::vector<IterationSpan> v = p.value().iterations;
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.end - a.start > b.end - b.start; });
    std::string top;
    for (size_t i = 0; i < v.size() && i < 5; ++i) top += (i ? "," : "") + std::to_string(v[i].index + 1);
    std::string name = dir.substr(dir.find_last_of('/') + 1);
    out << "NA\t0\t" << name << "\t" << p.value().device.collection_begin_us << "\t0\t" << v.size() << "\t" << (top.empty() ? "N/A" : top) << "\tN/A\n";
  }
  return rc;
}

}  // namespace

std::vector<Status> ValidateOptions(const Options& o) {
  std::vector<Status> errs;
  // A flag error explains the rest (a flag taken as another's value leaves both looking empty): it alone is told.
  for (const Status& e : o.flag_errors) {
    const bool on_off = e.param() == "--export" || e.param() == "--parse" || e.param() == "--query" ||
                        e.param() == "--timeline-per-iteration";
    errs.push_back(on_off && e.reason().find("was given no value") != std::string::npos
                       ? Status::Error(e.code(), e.param(), "", e.param() + " takes on or off; it " + e.reason().substr(e.param().size() + 1),
                                       "Write " + e.param() + "=on.")
                       : e);
  }
  if (!errs.empty()) return errs;
  if (o.diff_mode) {
    if (o.diff.size() != 2) errs.push_back(Status::Error("E10001", "diff", std::to_string(o.diff.size()) + " argument(s)", "diff takes two profiles: profparse diff A B"));
    return errs;
  }
  for (auto [flag, v] : {std::pair{"--export", &o.exp}, {"--parse", &o.parse}, {"--query", &o.query}, {"--timeline-per-iteration", &o.timeline_per_iteration}})
    if (!IsOnOff(*v)) errs.push_back(Status::Error("E10001", flag, *v, "the value must be on or off"));
  if (o.exp != "on" && o.parse != "on" && o.query != "on")
    errs.push_back(Status::Error("E10004", "--export", "", "nothing to do", "Give --export=on, --parse=on or --query=on (or: profparse diff A B)."));
  if (o.output.empty()) errs.push_back(Status::Error("E10004", "--output", "", "Value for --output is empty", "Point it at a PROF_* directory or the folder holding them."));
  if (o.type != "text" && o.type != "db")
    errs.push_back(Status::Error("E10001", "--type", o.type, "the export type must be text or db"));
  if (!ParseCannVersion(o.cann_version))
    errs.push_back(Status::Error("E10001", "--cann_version", o.cann_version, "the tables follow msprof of CANN " + std::string(kCannVersions)));
  if (o.summary_format != "csv" && o.summary_format != "json")
    errs.push_back(Status::Error("E10001", "--summary-format", o.summary_format, "the format must be csv or json"));
  if (o.model_id.empty() != o.iteration_id.empty())
    errs.push_back(Status::Error("E10057", o.model_id.empty() ? "--iteration-id" : "--model-id", o.model_id.empty() ? o.iteration_id : o.model_id,
                                 "--model-id and --iteration-id must be given together"));
  if (!o.model_id.empty() && (!IsCount(o.model_id) || o.model_id != "0"))
    errs.push_back(Status::Error("E10001", "--model-id", o.model_id, "msame profiles one model, whose id is 0"));
  if (!o.iteration_id.empty() && (!IsCount(o.iteration_id) || o.iteration_id == "0"))
    errs.push_back(Status::Error("E10001", "--iteration-id", o.iteration_id, "iterations are numbered from 1"));
  if (!o.log.empty() && !log::ParseLevel(o.log))
    errs.push_back(Status::Error("E10010", "--log", o.log, "the log level must be one of debug, info, warning, error, null"));
  return errs;
}

// A folder of CANN's own raw device data with an HWTS log: its task_time (the only table that log makes).
static int ExportRawHwts(const Options& o, std::ostream& out) {
  if (o.exp != "on") {
    cli::PrintError(out, Status::Error("E10001", o.query == "on" ? "--query" : "--parse", "on", o.output + " is CANN's raw device data (an HWTS log), which profparse exports but does not query",
                                       "Use --export=on."));
    return cli::kUsage;
  }
  auto r = ExportHwtsLog(o.output, o);
  if (!r.ok()) {
    cli::PrintError(out, r.status());
    return cli::kFailed;
  }
  for (const auto& w : r.value().warnings) out << "[WARNING] " << w << "\n";
  if (log::ShowInfo()) {
    out << "[INFO] " << o.output << ": HWTS log, " << r.value().tasks << " task(s), " << r.value().raw_bytes << " raw bytes -> "
        << o.output << "/mindstudio_profiler_output\n";
    for (const auto& f : r.value().files) out << "[INFO]   " << f << "\n";
    out << "[INFO] profparse finished\n";
  }
  return cli::kOk;
}

int RunProfparse(const Options& o, std::ostream& out) {
  auto errs = ValidateOptions(o);
  if (!errs.empty()) {
    for (const auto& e : errs) cli::PrintError(out, e);
    return cli::ExitCodeFor(errs);
  }
  if (!o.log.empty())
    if (auto l = log::ParseLevel(o.log)) log::SetLevel(*l);
  if (o.diff_mode) return DiffProfiles(o.diff[0], o.diff[1], out);
  if (HoldsHwtsLog(o.output)) return ExportRawHwts(o, out);
  auto dirs = FindProfDirs(o.output);
  if (!dirs.ok()) {  // a folder without PROF_* data is nothing to do; a missing one is an error
    cli::PrintError(out, dirs.status());
    return std::filesystem::is_directory(o.output) ? cli::kUsage : cli::kFailed;
  }
  if (o.query == "on") return Query(dirs.value(), out);
  int rc = 0;
  for (const auto& dir : dirs.value()) {
    if (o.exp != "on") {  // --parse=on: check the data, print what an export would cover
      auto p = LoadProfile(dir);
      if (!p.ok()) {
        cli::PrintError(out, p.status());
        rc = 1;
        continue;
      }
      for (const auto& w : p.value().warnings) out << "[WARNING] " << w << "\n";
      if (log::ShowInfo()) out << "[INFO] " << dir << ": Model ID 0, " << p.value().iterations.size() << " iteration(s), " << p.value().nodes.size() << " task(s) per iteration\n";
      continue;
    }
    auto r = o.type == "db" ? ExportDb(dir, o) : ExportProfile(dir, o);
    if (!r.ok()) {
      cli::PrintError(out, r.status());
      rc = 1;
      continue;
    }
    for (const auto& w : r.value().warnings) out << "[WARNING] " << w << "\n";
    if (log::ShowInfo()) out << "[INFO] " << dir << ": " << r.value().tasks << " task(s), " << r.value().iterations << " iteration(s), "
        << r.value().raw_bytes << " raw bytes -> " << dir << "/mindstudio_profiler_output\n";
    if (log::ShowInfo())
      for (const auto& f : r.value().files) out << "[INFO]   " << f << "\n";
  }
  if (rc == 0 && log::ShowInfo()) out << "[INFO] profparse finished\n";
  return rc;
}

}  // namespace npu::profparse
