#include "raw_profile.h"
#include "base/json.h"

#include <algorithm>
#include <filesystem>
#include <span>
#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/file_io.h"
#include "prof/platform.h"

namespace npu::profparse {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

Status Malformed(const std::string& path, const std::string& why) {
  return Status::Error("EP0001", "--output", path, why, "The PROF directory is damaged; re-run the collection (msame with profiling on).");
}

Result<json> ReadJson(const std::string& path) {
  if (!FileExists(path)) return Malformed(path, "the file is missing");
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  json j = npu::ParseJson(text);
  if (j.is_discarded() || !j.is_object()) return Malformed(path, "not a JSON object");
  return j;
}

double NumberOr(const json& j, const char* key, double def) {
  if (!j.contains(key)) return def;
  const json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (...) {
    }
  }
  return def;
}

// An integer field in [0, max]; `def` when it is absent, not a number, or outside (a cast would be undefined).
uint64_t CountOr(const json& j, const char* key, uint64_t def, double max) {
  double v = NumberOr(j, key, static_cast<double>(def));
  return v >= 0 && v <= max ? static_cast<uint64_t>(v) : def;
}

Result<std::map<uint32_t, std::string>> LoadHashDictionary(RawProfile& p) {
  NPU_ASSIGN_OR_RETURN(auto reader, OpenSlices(p, p.host_dir, "unaging.additional.hash_dic"));
  // The dictionary is text kept whole, so it is read in one go (its slices' sizes are known) with no staging buffer.
  std::string text(static_cast<size_t>(reader.total_bytes()), '\0');
  NPU_ASSIGN_OR_RETURN(size_t got, reader.Read(std::as_writable_bytes(std::span(text))));
  text.resize(got);
  std::map<uint32_t, std::string> dict;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) break;  // a cut-off last line
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    size_t colon = line.find(':');
    if (colon == std::string::npos || colon == 0 || colon > 10) continue;
    try {
      dict[static_cast<uint32_t>(std::stoul(line.substr(0, colon)))] = line.substr(colon + 1);
    } catch (...) {
    }
  }
  return dict;
}

}  // namespace

Result<prof::SliceReader> OpenSlices(RawProfile& p, const std::string& dir, const std::string& name) {
  NPU_ASSIGN_OR_RETURN(prof::SliceReader r, prof::SliceReader::Open(dir, name));
  for (const auto& f : r.incomplete()) p.warnings.push_back(f + " is incomplete (no matching .done marker): its records are read as far as they are whole");
  return r;
}

std::optional<double> HwtsMhzOfInfo(const std::string& path) {
  auto info = ReadJson(path);
  if (!info.ok() || !info.value().contains("DeviceInfo") || !info.value()["DeviceInfo"].is_array() || info.value()["DeviceInfo"].empty() ||
      !info.value()["DeviceInfo"][0].is_object())
    return std::nullopt;
  const double mhz = NumberOr(info.value()["DeviceInfo"][0], "hwts_frequency", 0);
  return IsClockRateMhz(mhz) ? std::optional(mhz) : std::nullopt;
}

Result<RawProfile> LoadProfile(const std::string& prof_dir) {
  RawProfile p;
  p.dir = prof_dir;
  p.device_dir = prof_dir + "/device_0/data";
  p.host_dir = prof_dir + "/host/data";
  // info.json & co. sit beside data/, as msprof lays the folder out; npukit before 0.2 put them inside data/.
  const std::string root = FileExists(prof_dir + "/device_0/info.json.0") || !FileExists(p.device_dir + "/info.json.0")
                               ? prof_dir + "/device_0" : p.device_dir;
  NPU_ASSIGN_OR_RETURN(json info, ReadJson(root + "/info.json.0"));
  // The SoC: npukit's own field, else the chip family of msprof's platform_version code (older npukit wrote the name there).
  std::string code = info.contains("platform_version") && info["platform_version"].is_string() ? info["platform_version"].get<std::string>() : "";
  p.device.platform = info.contains("npukit") && info["npukit"].is_object() ? info["npukit"].value("soc_version", "") : "";
  if (p.device.platform.empty()) p.device.platform = prof::SocOfPlatformVersion(code).empty() ? code : std::string(prof::SocOfPlatformVersion(code));
  p.device.pid = static_cast<uint32_t>(CountOr(info, "pid", 0, UINT32_MAX)) & 0x3FFFFF;
  p.device.rank_id = static_cast<int>(CountOr(info, "rank_id", 0, 1 << 20));
  if (!info.contains("DeviceInfo") || !info["DeviceInfo"].is_array() || info["DeviceInfo"].empty() || !info["DeviceInfo"][0].is_object())
    return Malformed(root + "/info.json.0", "DeviceInfo is missing");
  const json& d = info["DeviceInfo"][0];
  constexpr double kMaxCores = 4096;  // far past any Ascend chip
  p.device.ai_cores = std::max<int>(1, static_cast<int>(CountOr(d, "ai_core_num", 1, kMaxCores)));
  p.device.hwts_mhz = NumberOr(d, "hwts_frequency", 1000);
  p.device.aic_mhz = NumberOr(d, "aic_frequency", 1000);
  for (double mhz : {p.device.hwts_mhz, p.device.aic_mhz})
    if (!IsClockRateMhz(mhz))
      return Malformed(root + "/info.json.0", "a frequency (" + std::to_string(mhz) + " MHz) is not a clock rate between 1 MHz and 100 GHz");
  if (info.contains("npukit") && info["npukit"].is_object()) {
    p.device.cube_peak_flops = NumberOr(info["npukit"], "cube_peak_flops", 0);
    p.device.memory_bandwidth = NumberOr(info["npukit"], "memory_bandwidth_bytes_per_s", 0);
  }
  if (auto sample = ReadJson(root + "/sample.json"); sample.ok())
    p.device.aic_metrics = sample.value().value("ai_core_metrics", "PipeUtilization");
  else
    p.warnings.push_back(sample.status().message() + "; using the PipeUtilization metrics");
  if (auto start = ReadJson(root + "/start_info.0"); start.ok())
    p.device.collection_begin_us = CountOr(start.value(), "collectionTimeBegin", 0, 1.8e19);
  if (auto end = ReadJson(root + "/end_info.0"); end.ok()) p.device.collection_end_us = CountOr(end.value(), "collectionTimeEnd", 0, 1.8e19);
  if (info.contains("hostUid") && info["hostUid"].is_string()) p.device.host_uid = info["hostUid"].get<std::string>();
  if (info.contains("hostname") && info["hostname"].is_string()) p.device.host_name = info["hostname"].get<std::string>();
  NPU_ASSIGN_OR_RETURN(auto dict, LoadHashDictionary(p));
  auto str = [&](uint32_t id) {
    auto it = dict.find(id);
    return it == dict.end() ? std::string("N/A") : it->second;
  };
  NPU_ASSIGN_OR_RETURN(auto reader, OpenSlices(p, p.host_dir, "unaging.compact.node_basic_info"));
  prof::RecordStream<prof::NodeRecord> nodes(reader, prof::kNodeMagic);
  for (prof::NodeRecord r; nodes.Next(r);) {
    NodeInfo n{str(r.op_name), str(r.op_type), str(r.input_shapes), str(r.input_dtypes), str(r.input_formats),
               str(r.output_shapes), str(r.output_dtypes), str(r.output_formats), str(r.tiling),
               r.task_type == 1 ? prof::TaskType::kAiCpu : prof::TaskType::kAiCore, r.block_dim, {}};
    n.csv = {CsvCell(n.op_name), CsvCell(n.op_type)};
    // Shapes, dtypes and formats as msprof writes them: inside literal quotes (msprof-analyze strips the first and
    // last character of the field), N/A bare.
    for (const std::string* f : {&n.input_shapes, &n.input_dtypes, &n.input_formats, &n.output_shapes, &n.output_dtypes, &n.output_formats})
      n.csv.push_back(*f == "N/A" ? *f : CsvCell("\"" + *f + "\""));
    p.nodes[{r.stream_id, r.task_id}] = std::move(n);
  }
  NPU_RETURN_IF_ERROR(nodes.status());
  if (nodes.garbage_bytes()) p.warnings.push_back(std::to_string(nodes.garbage_bytes()) + " bytes of garbage skipped in the node records");
  return p;
}

Result<TaskStream> TaskStream::Open(RawProfile& p) {
  TaskStream t;
  NPU_ASSIGN_OR_RETURN(auto hwts, OpenSlices(p, p.device_dir, "hwts.data.0"));
  NPU_ASSIGN_OR_RETURN(auto pmu, OpenSlices(p, p.device_dir, "aicore.data.0"));
  if (hwts.empty())
    return Status::Error("EP0001", "--output", p.device_dir + "/hwts.data.0.slice_0", "no task records", "Re-run the collection with task_time on.");
  t.raw_bytes_ = hwts.total_bytes() + pmu.total_bytes();
  t.hwts_reader_ = std::make_unique<prof::SliceReader>(std::move(hwts));
  t.pmu_reader_ = std::make_unique<prof::SliceReader>(std::move(pmu));
  t.hwts_ = std::make_unique<prof::RecordStream<prof::HwtsRecord>>(*t.hwts_reader_, prof::kHwtsMagic);
  t.pmus_ = std::make_unique<prof::RecordStream<prof::PmuRecord>>(*t.pmu_reader_, prof::kPmuMagic);
  return t;
}

bool TaskStream::Next(prof::HwtsRecord& h, const prof::PmuRecord*& pmu) {
  pmu = nullptr;
  if (!hwts_->Next(h)) return false;
  if (h.task_type == static_cast<uint8_t>(prof::TaskType::kAiCpu)) return true;
  if (!pending_) {
    prof::PmuRecord r;
    if (pmus_->Next(r)) pending_ = r;
  }
  if (pending_ && pending_->stream_id == h.stream_id && pending_->task_id == h.task_id && pending_->iteration == h.iteration) {
    current_ = *pending_;
    pending_.reset();
    pmu = &current_;
  } else {
    ++unmatched_pmu_;
  }
  return true;
}

Status TaskStream::status() const {
  NPU_RETURN_IF_ERROR(hwts_->status());
  return pmus_->status();
}

Result<std::vector<std::string>> FindProfDirs(const std::string& output, const std::string& param) {
  std::error_code ec;
  if (!fs::is_directory(output, ec))
    return Status::Error("E13001", param, output, "not a directory", "Point " + param + " at a PROF_* directory or the folder holding them.");
  fs::path path(output);
  std::string name = path.filename().string();
  if (name.empty()) name = path.parent_path().filename().string();
  if (name.rfind("PROF_", 0) == 0) return std::vector<std::string>{output};
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(output, ec))
    if (e.is_directory() && e.path().filename().string().rfind("PROF_", 0) == 0) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) return Status::Error("E13001", param, output, "holds no PROF_* directory", "Collect a profile first: msame with acl.json's profiler switch on.");
  return dirs;
}

}  // namespace npu::profparse
