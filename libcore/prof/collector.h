// Profiling collection: an observer of the runtime that writes PROF_*/ as msprof does, in msprof's raw record
// layouts (msprof_raw.h), for every task the simulated clock runs. Switched on by acl.json's "profiler" section or, as GE reads them,
// PROFILING_MODE=true with PROFILING_OPTIONS (JSON).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "prof/msprof_raw.h"
#include "prof/pmu_events.h"
#include "prof/slices.h"
#include "runtime/runtime.h"

namespace npu::prof {

// npukit's simulated device clock: info.json's hwts_frequency, so one tick is one simulated nanosecond.
constexpr double kHwtsFrequencyMhz = 1000;
// The runtime's PROFILING_ENABLE runs this long before the first iteration, PROFILING_DISABLE after the last.
constexpr uint64_t kControlLeadNs = 1000;

// The aic_metrics groups profparse can export (op_summary's metric columns).
constexpr std::string_view kAicMetrics[] = {"PipeUtilization", "ArithmeticUtilization", "Memory"};

struct ProfilerConfig {
  bool enabled = false;
  std::string output;                         // parent of PROF_*/ (default: the working directory)
  std::string aic_metrics = "PipeUtilization";
  bool aicpu = true, task_time = true;
  uint64_t slice_bytes = 64ull << 20;         // PROFILING_SLICE_BYTES overrides (tests use small slices)
  std::vector<std::string> warnings;
};

// acl.json's "profiler": {"switch": "on", "output": DIR, "aic_metrics": ..., "aicpu": "on", "task_time": "on"}.
// An acl.json without it leaves profiling off (unless the environment turns it on).
Result<ProfilerConfig> ParseProfilerConfig(const std::string& acl_json_path);
// PROFILING_MODE=true + PROFILING_OPTIONS={"output": ..., "aic_metrics": ..., "task_trace": "on", ...}.
Result<ProfilerConfig> ProfilerConfigFromEnv();

class Collector : public TaskObserver {
 public:
  // Creates the PROF_* directory under config.output and writes the static parts (info.json, sample.json,
  // start_info; the model's nodes, tensors and tasks as GE and the runtime report them when a model loads) and
  // the device's PROFILING_ENABLE task. `app` is the command line recorded in sample.json.
  static Result<std::unique_ptr<Collector>> Start(const ProfilerConfig& config, const Session& session, const std::string& app);
  void AfterTask(const TaskEvent& e) override;
  void AfterIteration(uint64_t iteration, double start_ns, double end_ns) override;
  // Writes the PROFILING_DISABLE task, the dictionaries, end_info and every .done marker. The first write error.
  Status Finish();
  const std::string& dir() const { return dir_; }

 private:
  Collector() = default;
  uint64_t Hash(const std::string& s);
  uint32_t TypeId(raw::Level level, const std::string& name, uint32_t base);  // type_info_dic's code
  uint64_t HostTick() { return host_clock_++; }  // host records of the load: one ns apart from the wall clock
  Status WriteStatic(const Session& session, const std::string& app);
  Status WriteNode(const Session& session, const Task& t);
  Status Launch(uint16_t stream, uint16_t task, const std::string& task_type, uint64_t kernel);
  void ControlTask(const std::string& type, uint64_t ticks);
  void DeviceTask(uint16_t stream, uint16_t task, uint8_t sqe, uint64_t start, uint64_t end);
  void Pmu(uint16_t stream, uint16_t task, const TaskCost& cost, DType dtype, uint8_t task_type);
  void Api(raw::Level level, uint32_t type, uint64_t begin, uint64_t end, uint64_t item);
  void Keep(const Status& s) {
    if (!s.ok() && error_.ok()) error_ = s;
  }
  ProfilerConfig config_;
  const SocSpec* soc_ = nullptr;  // the session's chip (outlives the collector): which cores its tasks run on
  bool stars_ = false, split_cores_ = false;
  std::string dir_, host_root_, device_root_, host_dir_, device_dir_;  // the roots hold info.json & co., data/ the records
  uint64_t epoch_ns_ = 0;    // device tick 0 of the session on the wall clock
  uint64_t host_clock_ = 0;  // the next host timestamp of a load record
  uint64_t last_end_ns_ = 0;  // the last iteration's end (device ticks)
  uint32_t thread_id_ = 0;
  uint8_t log_counter_ = 0, pmu_counter_ = 0;  // the records' 4-bit sequence counters
  uint16_t control_stream_ = 0, control_task_ = 0;  // where PROFILING_ENABLE / DISABLE run
  std::vector<uint16_t> aic_events_, aiv_events_;   // the PMU slots (aiv_: the 910B's vector cores)
  std::map<std::pair<uint32_t, uint32_t>, uint8_t> task_types_;  // (stream, task) -> GeTaskType, from the load
  std::unique_ptr<SliceWriter> device_log_, pmu_, steps_, api_, node_info_, task_track_, tensor_info_, attr_info_;
  std::map<uint64_t, std::string> strings_;  // hash_dic
  std::map<std::pair<uint16_t, std::string>, uint32_t> types_;  // type_info_dic: (level, name) -> type id
  Status error_;
};

}  // namespace npu::prof
