// One PROF_* directory as profparse reads it, in msprof's raw record layouts (libcore/prof/msprof_raw.h): the
// host side (dictionaries, API calls, the nodes and tasks each launch reported) and the iterations loaded up
// front, the device's task logs and PMU records streamed slice by slice.
#pragma once
#include <array>
#include <deque>
#include <unordered_map>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "prof/hwts_log.h"
#include "prof/msprof_raw.h"
#include "prof/slices.h"

namespace npu::profparse {

struct NodeInfo {
  std::string op_name, op_type, input_shapes, input_dtypes, input_formats, output_shapes, output_dtypes, output_formats, tiling;
  prof::TaskType task_type = prof::TaskType::kAiCore;
  uint32_t block_dim = 1, mix_block_dim = 0;
  double flops = 0, bytes = 0;   // npukit's work attribute (the roofline); 0 when the profile has none
  std::vector<std::string> csv;  // CsvCell of op_name, op_type, the six shape/dtype/format strings (in that order)
};

struct DeviceInfo {
  std::string platform;     // e.g. Ascend310P3
  bool stars = false;       // task logs from STARS (stars_soc / ffts_profile) instead of the HWTS
  int ai_cores = 1, aiv_cores = 1;
  double hwts_mhz = 1000, aic_mhz = 1000;
  double cube_peak_flops = 0, memory_bandwidth = 0;  // for the roofline column (0 = unknown)
  std::string aic_metrics = "PipeUtilization";
  std::vector<uint16_t> aic_events, aiv_events;  // the PMU records' slots (sample.json)
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

// One host API call (api_event), named through type_info_dic.
struct ApiCall {
  uint16_t level = 0;
  std::string name;
  uint32_t thread = 0;
  uint64_t begin = 0, end = 0;  // ns
};

// The AscendCL call that launched an iteration's device tasks (aclmdlExecute or its async form): where the
// timeline's HostToDevice arrow and the db's connection id start. Other calls (aclrtMemcpy, ...) launch none.
inline bool LaunchesTheModel(const ApiCall& a) {
  return a.level == static_cast<uint16_t>(prof::raw::Level::kAcl) && a.name.starts_with("aclmdlExecute");
}

struct IterationSpan {
  uint32_t index = 0;  // 0-based
  uint64_t start = 0, end = 0;  // device ticks: the model's start and the iteration's end
};

constexpr uint32_t kNoIteration = UINT32_MAX;  // a task outside every iteration (PROFILING_ENABLE, ...)

struct RawProfile {
  std::string dir, device_dir, host_dir;
  DeviceInfo device;
  std::map<std::pair<uint32_t, uint32_t>, NodeInfo> nodes;  // (stream, task) -> node
  std::map<std::pair<uint32_t, uint32_t>, std::string> runtime_types;  // (stream, task) -> the runtime's task type
  std::vector<ApiCall> apis;             // by begin
  std::vector<IterationSpan> iterations;  // by start
  std::vector<std::string> warnings;      // incomplete slices, garbage, ...
  const NodeInfo* Node(uint32_t stream, uint32_t task) const {
    auto it = nodes.find({stream, task});
    return it == nodes.end() ? nullptr : &it->second;
  }
  // The task type task_time prints: GE's for a node's task, else the runtime's (PROFILING_ENABLE, ...).
  std::string_view KernelType(uint32_t stream, uint32_t task) const;
  // The 0-based iteration whose span holds a device tick, or kNoIteration.
  uint32_t IterationOf(uint64_t ticks) const;
};

// One executed device task: its start/end pair from the device's task log.
struct DeviceTask {
  uint32_t iteration = kNoIteration;
  uint16_t stream_id = 0, task_id = 0;
  uint8_t sqe = 0;  // what kind of task the device ran (StarsSqeType / the HWTS log's task type)
  uint64_t start_ticks = 0, end_ticks = 0;
};

// The PMU counters of one task: the AIC part (or the only core kind's) and, on split-core chips, the AIV part;
// events in the slots of DeviceInfo's aic_events / aiv_events.
struct PmuSample {
  bool aic = false, aiv = false;
  uint64_t aic_cycles = 0, aiv_cycles = 0;
  std::array<uint64_t, 8> aic_events{}, aiv_events{};
};

// The executed tasks in the order their ends were logged, each with its PMU record(s) when asked for (AI Core
// tasks; records are matched first in, first out by stream and task). Streams the files slice by slice.
// Adds a warning to p for each slice file without its .done marker (read as far as its records are whole).
void NoteIncomplete(RawProfile& p, const std::vector<std::string>& files);

class TaskStream {
 public:
  // Reads p and writes nothing to it, so that two streams can run on two threads: the slices without a .done
  // marker are in incomplete(), for NoteIncomplete on one thread.
  static Result<TaskStream> Open(const RawProfile& p, bool with_pmu);
  const std::vector<std::string>& incomplete() const { return incomplete_; }
  // The next task; `pmu` is null for tasks without PMU records (AI CPU, control tasks, a lost record).
  bool Next(DeviceTask& t, const PmuSample*& pmu);
  Status status() const;
  uint64_t raw_bytes() const { return raw_bytes_; }
  uint64_t unmatched_pmu() const { return unmatched_pmu_; }
  uint64_t unpaired() const { return unpaired_ends_; }
  uint64_t garbage_records() const { return garbage_; }
  uint64_t trailing_bytes() const { return log_->trailing_bytes(); }

 private:
  using Record64 = std::array<std::byte, 64>;
  using Record128 = std::array<std::byte, 128>;
  bool FindPmu(PmuSample& out, uint32_t key);
  bool ReadPmu();
  bool Decode(const Record64& r, bool& start, DeviceTask& t);
  const RawProfile* p_ = nullptr;
  std::unique_ptr<prof::SliceReader> log_reader_, pmu_reader_;  // the streams below read them: stable addresses
  std::unique_ptr<prof::RecordStream<Record64>> log_;
  std::unique_ptr<prof::RecordStream<Record128>> pmus_;
  // PMU records read ahead, per (stream << 16 | task), oldest first: the k-th record of a task goes with its
  // k-th run, as msprof joins them. A lost record leaves a task without; the look-ahead is bounded.
  std::unordered_map<uint32_t, std::deque<PmuSample>> ahead_;
  size_t ahead_count_ = 0;
  PmuSample current_;
  std::map<uint32_t, DeviceTask> open_;  // (stream << 16 | task) -> the start not yet ended
  uint64_t raw_bytes_ = 0, unmatched_pmu_ = 0, unpaired_ends_ = 0, garbage_ = 0;
  std::vector<std::string> incomplete_;
};

// A clock rate a device could have, in MHz (100 GHz is far past any).
constexpr bool IsClockRateMhz(double mhz) { return mhz >= 1 && mhz <= 1e5; }
// info.json's DeviceInfo[0].hwts_frequency (MHz) at `path`; nullopt when the file, the field or a clock rate is not there.
std::optional<double> HwtsMhzOfInfo(const std::string& path);
// Loads the host side and the iterations. A missing or unreadable info.json is an error naming the file; so is a
// folder of npukit's own record layout (npukit 0.3 and before), which this profparse does not read.
Result<RawProfile> LoadProfile(const std::string& prof_dir);
// The PROF_* directories under `output` (or `output` itself when it is one), sorted.
// `param` names where the folder came from in errors (--output, or diff's A or B).
Result<std::vector<std::string>> FindProfDirs(const std::string& output, const std::string& param = "--output");
// Opens a data file's slices and records what is wrong with them in `p.warnings`.
Result<prof::SliceReader> OpenSlices(RawProfile& p, const std::string& dir, const std::string& name);

}  // namespace npu::profparse
