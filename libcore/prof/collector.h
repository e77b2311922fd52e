// Profiling collection: an observer of the runtime that writes PROF_*/ raw data (see prof_format.h) for
// every task the simulated clock runs. Switched on by acl.json's "profiler" section or, as GE reads them,
// PROFILING_MODE=true with PROFILING_OPTIONS (JSON).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "prof/prof_format.h"
#include "prof/slices.h"
#include "runtime/runtime.h"

namespace npu::prof {

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
  // Creates the PROF_* directory under config.output and writes the static parts (node info, info.json,
  // sample.json, start_info). `app` is the command line recorded in sample.json.
  static Result<std::unique_ptr<Collector>> Start(const ProfilerConfig& config, const Session& session, const std::string& app);
  void AfterTask(const TaskEvent& e) override;
  void AfterIteration(uint64_t iteration, double start_ns, double end_ns) override;
  // Writes the hash dictionary, end_info and every .done marker. The first write error, if any.
  Status Finish();
  const std::string& dir() const { return dir_; }

 private:
  Collector() = default;
  uint32_t Intern(const std::string& s);
  Status WriteStatic(const Session& session, const std::string& app);
  ProfilerConfig config_;
  const SocSpec* soc_ = nullptr;  // the session's chip (outlives the collector): which cores its tasks run on
  std::string dir_, host_root_, device_root_, host_dir_, device_dir_;  // the roots hold info.json & co., data/ the records
  uint64_t epoch_ns_ = 0;  // device tick 0 of the session on the wall clock
  std::unique_ptr<SliceWriter> hwts_, pmu_, steps_, nodes_, api_;
  std::map<std::string, uint32_t> strings_;
  Status error_;
};

}  // namespace npu::prof
