// One PROF_* directory as profparse reads it: the static part (info.json, sample.json, the hash dictionary
// and each task's node record) loaded up front, the per-task records streamed slice by slice.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "prof/prof_format.h"
#include "prof/slices.h"

namespace npu::profparse {

struct NodeInfo {
  std::string op_name, op_type, input_shapes, input_dtypes, input_formats, output_shapes, output_dtypes, output_formats, tiling;
  prof::TaskType task_type = prof::TaskType::kAiCore;
  uint32_t block_dim = 1;
  std::vector<std::string> csv;  // CsvCell of op_name, op_type, the six shape/dtype/format strings (in that order)
};

struct DeviceInfo {
  std::string platform;     // e.g. Ascend310P3
  int ai_cores = 1;
  double hwts_mhz = 1000, aic_mhz = 1000;
  double cube_peak_flops = 0, memory_bandwidth = 0;  // for the roofline column (0 = unknown)
  std::string aic_metrics = "PipeUtilization";
  uint64_t collection_begin_us = 0, collection_end_us = 0;
  std::string host_uid, host_name;
  uint32_t pid = 0;  // the collecting process (the timeline's pid encoding)
  int rank_id = 0;
  // Device ticks as ns, saturating: a garbage tick count must not overflow the conversion.
  uint64_t NsOf(uint64_t ticks) const {
    if (hwts_mhz == 1000) return ticks;
    const double ns = static_cast<double>(ticks) * 1000 / hwts_mhz;
    return ns >= 1.8e19 ? UINT64_MAX : static_cast<uint64_t>(ns);
  }
};

struct RawProfile {
  std::string dir, device_dir, host_dir;
  DeviceInfo device;
  std::map<std::pair<uint32_t, uint32_t>, NodeInfo> nodes;  // (stream, task) -> node
  std::vector<std::string> warnings;                        // incomplete slices, garbage, ...
  const NodeInfo* Node(uint32_t stream, uint32_t task) const {
    auto it = nodes.find({stream, task});
    return it == nodes.end() ? nullptr : &it->second;
  }
};

// The executed tasks in the order they were recorded, each with its PMU record (AI Core tasks; the records are
// matched first in, first out by stream, task and iteration). Streams both files slice by slice.
class TaskStream {
 public:
  static Result<TaskStream> Open(RawProfile& p);
  // The next task; `pmu` is null for AI CPU tasks and for an AI Core task whose PMU record is missing.
  bool Next(prof::HwtsRecord& h, const prof::PmuRecord*& pmu);
  Status status() const;
  uint64_t raw_bytes() const { return raw_bytes_; }
  uint64_t unmatched_pmu() const { return unmatched_pmu_; }
  uint64_t garbage_bytes() const { return hwts_->garbage_bytes() + pmus_->garbage_bytes(); }
  uint64_t trailing_bytes() const { return hwts_->trailing_bytes(); }

 private:
  std::unique_ptr<prof::SliceReader> hwts_reader_, pmu_reader_;  // the streams below read them: stable addresses
  std::unique_ptr<prof::RecordStream<prof::HwtsRecord>> hwts_;
  std::unique_ptr<prof::RecordStream<prof::PmuRecord>> pmus_;
  std::optional<prof::PmuRecord> pending_;
  prof::PmuRecord current_{};
  uint64_t raw_bytes_ = 0, unmatched_pmu_ = 0;
};

// A clock rate a device could have, in MHz (100 GHz is far past any).
constexpr bool IsClockRateMhz(double mhz) { return mhz >= 1 && mhz <= 1e5; }
// info.json's DeviceInfo[0].hwts_frequency (MHz) at `path`; nullopt when the file, the field or a clock rate is not there.
std::optional<double> HwtsMhzOfInfo(const std::string& path);
// Loads the static part. A missing or unreadable info.json is an error naming the file.
Result<RawProfile> LoadProfile(const std::string& prof_dir);
// The PROF_* directories under `output` (or `output` itself when it is one), sorted.
// `param` names where the folder came from in errors (--output, or diff's A or B).
Result<std::vector<std::string>> FindProfDirs(const std::string& output, const std::string& param = "--output");
// Opens a data file's slices and records what is wrong with them in `p.warnings`.
Result<prof::SliceReader> OpenSlices(RawProfile& p, const std::string& dir, const std::string& name);

}  // namespace npu::profparse
