// A folder of CANN's own raw device data with an HWTS task log (a real Ascend 310/910A collection: msprof's
// hwts.data.<dev>.slice_<n>, or the 2020 layout hwts.log.data.<n>.dev.profiler_default_tag.<dev>.slice_<n>):
// task_time from its start/end pairs, named by the GE task descriptions that sit beside it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "base/progress.h"
#include "hwts_export.h"
#include "prof/hwts_log.h"
#include "raw_profile.h"
#include "table_writer.h"

namespace npu::profparse {
namespace fs = std::filesystem;

namespace {

// The log's file names, msprof's and the 2020 layout's; group 1 is the device id.
const std::regex kHwtsFiles[] = {std::regex(R"(^hwts\.data\.(\d+)\.slice_\d+$)"),
                                 std::regex(R"(^hwts\.log\.data\.\d+\.dev\.profiler_default_tag\.(\d+)\.slice_\d+$)")};
// GE's task descriptions of the 2020 layout: "op_name block_dim task_id stream_id" per line.
const std::regex kTaskDescFiles(R"(^Framework\.host\.vm\.task_desc_info\.(\d+)\.slice_\d+$)");

// The Ascend 910's HWTS clock: info.json's DeviceInfo[].hwts_frequency on a real 910 is "100" (MHz)
// (tests/data/prof_raw/ascend910_prof2023/device_0/info.json.0). Used when the folder has no info.json.
constexpr double kAscend910HwtsMhz = 100;

struct LogFile {
  std::string dir, base;  // base: the name without ".slice_<n>"
  int device = 0;
};

// Every HWTS log in `dir` or its data/ folder, one entry per sliced file.
std::vector<LogFile> FindLogs(const std::string& dir) {
  std::set<std::pair<std::string, std::string>> seen;
  std::vector<LogFile> logs;
  for (const std::string& d : {dir, dir + "/data"}) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec)) {
      const std::string name = e.path().filename().string();
      std::smatch m;
      for (const std::regex& re : kHwtsFiles)
        if (std::regex_match(name, m, re)) {
          std::string base = name.substr(0, name.rfind(".slice_"));
          if (seen.insert({d, base}).second) logs.push_back({d, base, std::stoi(m[1].str())});
        }
    }
  }
  std::sort(logs.begin(), logs.end(), [](const LogFile& a, const LogFile& b) { return std::tie(a.dir, a.base) < std::tie(b.dir, b.base); });
  return logs;
}

// info.json.<dev> (or info.json) beside the log or one or two folders up: the HWTS clock rate.
std::optional<double> HwtsMhzFromInfo(const std::string& dir, int device) {
  for (const std::string& d : {dir, dir + "/..", dir + "/../.."})
    for (const std::string& name : {"info.json." + std::to_string(device), std::string("info.json")})
      if (auto mhz = HwtsMhzOfInfo(d + "/" + name)) return mhz;
  return std::nullopt;
}

// task id -> (op name, block dim) from the task descriptions (lines that do not parse are skipped).
std::map<uint32_t, std::pair<std::string, std::string>> TaskNames(const std::string& dir, int device) {
  std::map<uint32_t, std::pair<std::string, std::string>> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string file = e.path().filename().string();
    if (!std::regex_match(file, m, kTaskDescFiles) || std::stoi(m[1].str()) != device) continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string op, block_dim;
      uint32_t task = 0, stream = 0;
      if (fields >> op >> block_dim >> task >> stream) names[task] = {op, block_dim};
    }
  }
  return names;
}

uint64_t TicksToNs(uint64_t ticks, double mhz) {
  return static_cast<uint64_t>(static_cast<long double>(ticks) * 1000.0L / static_cast<long double>(mhz) + 0.5L);
}

}  // namespace

bool HoldsHwtsLog(const std::string& dir) { return !FindLogs(dir).empty(); }

Result<ExportResult> ExportHwtsLog(const std::string& dir, const Options& o) {
  ExportResult r;
  const std::string out_dir = dir + "/mindstudio_profiler_output";
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Error("E13004", "--output", out_dir, "cannot create the folder: " + ec.message());
  const TableFormat format = o.summary_format == "json" ? TableFormat::kJson : TableFormat::kCsv;
  TableWriter table(out_dir, "task_time", o.stamp.empty() ? Timestamp14() : o.stamp,
                    {"Device_id", "kernel_name", "kernel_type", "stream_id", "task_id", "task_time(us)", "task_start(us)", "task_stop(us)"},
                    format);
  for (const LogFile& log : FindLogs(dir)) {
    double mhz = kAscend910HwtsMhz;
    if (auto from_info = HwtsMhzFromInfo(log.dir, log.device)) {
      mhz = *from_info;
    } else {
      r.warnings.push_back(log.base + ": no info.json gives the HWTS clock; its ticks are taken at " + std::to_string(static_cast<int>(kAscend910HwtsMhz)) +
                           " MHz, the Ascend 910's");
    }
    const auto names = TaskNames(dir, log.device);
    NPU_ASSIGN_OR_RETURN(prof::SliceReader reader, prof::SliceReader::Open(log.dir, log.base));
    r.raw_bytes += reader.total_bytes();
    prof::HwtsPairer pairer;
    uint64_t lost = 0;
    std::vector<std::byte> buf(prof::kHwtsLogRecordBytes * 16384);
    size_t held = 0;
    for (;;) {
      NPU_ASSIGN_OR_RETURN(size_t got, reader.Read(std::span(buf).subspan(held)));
      held += got;
      const size_t whole = held / prof::kHwtsLogRecordBytes * prof::kHwtsLogRecordBytes;
      for (const prof::HwtsLogEntry& e : prof::DecodeHwtsLog(std::span(buf).first(whole), &lost)) pairer.Add(e);
      for (const prof::HwtsTaskTime& t : pairer.pairs()) {
        auto name = names.find(t.task_id);
        const uint64_t start = TicksToNs(t.start, mhz), stop = TicksToNs(t.end, mhz);
        table.Integer(static_cast<uint64_t>(log.device));
        table.Text(name == names.end() ? "N/A" : name->second.first);
        table.Text(prof::GeTaskTypeName(t.task_type));
        table.Integer(t.stream_id);
        table.Integer(t.task_id);
        table.Micros(stop >= start ? stop - start : 0);
        table.Timestamp(start);
        table.Timestamp(stop);
        NPU_RETURN_IF_ERROR(table.EndRow());
        ++r.tasks;
      }
      pairer.pairs().clear();
      std::copy(buf.begin() + static_cast<std::ptrdiff_t>(whole), buf.begin() + static_cast<std::ptrdiff_t>(held), buf.begin());
      held -= whole;
      if (got == 0) break;
    }
    if (held) r.warnings.push_back(log.base + ": " + std::to_string(held) + " trailing byte(s) are not a whole record (the log was cut short)");
    if (lost) r.warnings.push_back(log.base + ": the record counter skips " + std::to_string(lost) + " time(s): the hardware dropped records there");
    if (pairer.unmatched_ends() || pairer.open_starts())
      r.warnings.push_back(log.base + ": " + std::to_string(pairer.unmatched_ends()) + " end(s) without a start and " +
                           std::to_string(pairer.open_starts()) + " start(s) without an end make no task");
    for (const auto& f : reader.incomplete()) r.warnings.push_back(f + " is incomplete (no matching .done marker)");
  }
  NPU_RETURN_IF_ERROR(table.Finish());
  for (const auto& f : table.files()) r.files.push_back(f);
  return r;
}

}  // namespace npu::profparse
