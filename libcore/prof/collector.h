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
  bool acl_api = true;  // the AscendCL calls a program makes (aclprofCreateConfig's ACL_PROF_ACL_API)
  uint64_t slice_bytes = 64ull << 20;         // PROFILING_SLICE_BYTES overrides (tests use small slices)
  std::vector<std::string> warnings;
};

// acl.json's "profiler": {"switch": "on", "output": DIR, "aic_metrics": ..., "aicpu": "on", "task_time": "on"}.
// An acl.json without it leaves profiling off (unless the environment turns it on).
Result<ProfilerConfig> ParseProfilerConfig(const std::string& acl_json_path);
// PROFILING_MODE=true + PROFILING_OPTIONS={"output": ..., "aic_metrics": ..., "task_trace": "on", ...}.
Result<ProfilerConfig> ProfilerConfigFromEnv();

// One collection: a PROF_* folder for a process's run. Models join it as they are loaded (msame's one model;
// every model an AscendCL program loads), each through an observer of its Session; the AscendCL calls the
// program makes are recorded beside them. All models share the simulated device's timeline: each iteration
// starts when the device is free.
class Collector {
 public:
  // Creates the PROF_* directory under config.output. `app` is the command line sample.json records.
  static Result<std::unique_ptr<Collector>> Start(const ProfilerConfig& config, const std::string& app);
  // msame's collection: Start, then the session's model (id 0) with its observer added to the session.
  static Result<std::unique_ptr<Collector>> Start(const ProfilerConfig& config, Session& session, const std::string& app);
  // A loaded model: its nodes, tensors and tasks as GE and the runtime report them at load; returns the observer
  // to add to its session. The first model's SoC is the device's (info.json); a model of another SoC is refused.
  Result<TaskObserver*> AddModel(const Session& session, uint32_t model_id);
  // An AscendCL call the program made (api_statistic's acl level): its name and host times (ns).
  void RecordApi(std::string_view name, uint64_t begin_ns, uint64_t end_ns);
  // Writes the PROFILING_DISABLE task, the dictionaries, end_info and every .done marker. The first write error.
  Status Finish();
  const std::string& dir() const { return dir_; }
  ~Collector();

 private:
  class ModelObserver;
  Collector();
  uint64_t Hash(const std::string& s);
  uint32_t TypeId(raw::Level level, const std::string& name, uint32_t base);  // type_info_dic's code
  uint64_t HostTick() { return host_clock_++; }  // host records of a load: one ns apart from the wall clock
  Status StartDevice(const Session& session);    // the first model: the device's files, info.json, PROFILING_ENABLE
  Status WriteNode(const Session& session, const Task& t, ModelObserver& m);
  Status Launch(uint16_t stream, uint16_t task, const std::string& task_type, uint64_t kernel);
  void ControlTask(const std::string& type, uint64_t ticks);
  void DeviceTask(uint16_t stream, uint16_t task, uint8_t sqe, uint64_t start, uint64_t end);
  void Pmu(uint16_t stream, uint16_t task, const TaskCost& cost, DType dtype, uint8_t task_type);
  void Api(raw::Level level, uint32_t type, uint64_t begin, uint64_t end, uint64_t item);
  void OnTask(ModelObserver& m, const TaskEvent& e);
  void OnIteration(ModelObserver& m, uint64_t iteration, double start_ns, double end_ns);
  void Keep(const Status& s) {
    if (!s.ok() && error_.ok()) error_ = s;
  }
  ProfilerConfig config_;
  std::string app_;
  const SocSpec* soc_ = nullptr;  // the first model's chip (its session outlives the collection's use of it)
  bool stars_ = false, split_cores_ = false;
  std::string dir_, host_root_, device_root_, host_dir_, device_dir_;  // the roots hold info.json & co., data/ the records
  uint64_t epoch_ns_ = 0;       // device tick 0 on the wall clock (the first model's load)
  uint64_t host_clock_ = 0;     // the next host timestamp of a load record
  double device_free_ns_ = 0;   // the simulated device's clock past the last iteration of any model
  uint32_t thread_id_ = 0;
  uint8_t log_counter_ = 0, pmu_counter_ = 0;  // the records' 4-bit sequence counters
  uint16_t next_stream_ = 0;                   // models' streams are numbered on from here, one range each
  uint16_t control_stream_ = 0, control_task_ = 0;  // where PROFILING_ENABLE / DISABLE run
  std::vector<uint16_t> aic_events_, aiv_events_;   // the PMU slots (aiv_: the 910B's vector cores)
  std::vector<std::unique_ptr<ModelObserver>> models_;
  std::unique_ptr<SliceWriter> device_log_, pmu_, steps_, api_, node_info_, task_track_, tensor_info_, attr_info_;
  std::map<uint64_t, std::string> strings_;  // hash_dic
  std::map<std::pair<uint16_t, std::string>, uint32_t> types_;  // type_info_dic: (level, name) -> type id
  bool finished_ = false;
  Status error_;
};

}  // namespace npu::prof
