// Runtime observers behind msame --acl_json_path: op dumps in the CANN layout, golden .npy files on the
// fp32 reference path, and overflow records. Files go to
//   {dump_path}/{time}/{device_id}/{model_name}/{model_id}/{step}/
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dump/dump_names.h"
#include "debug/dump_config.h"
#include "runtime/runtime.h"

namespace npu::debug {

class DumpObserver : public TaskObserver {
 public:
  enum Mode { kOpDump, kGolden, kOverflow, kException };
  // root: the {model_id} folder; nothing is written until a selected step begins. kException: the folder the
  // exception dump of a faulting task goes to (made when a task faults).
  DumpObserver(const DumpConfig& c, const Graph& g, std::string root, std::string model_name, Mode mode);
  // Selects the step and, in golden mode, writes the graph inputs.
  void BeginStep(uint64_t step, const std::vector<Tensor>& inputs);
  void AfterTask(const TaskEvent& e) override;
  // kException: the faulting task's inputs, and its outputs as the device memory held them (zeros: the task wrote
  // none), in the op dump format msaccucmp convert reads.
  void OnTaskFault(const TaskEvent& e, const Status& fault) override;
  // The first write error, if any (later tasks are skipped once one happened).
  const Status& status() const { return status_; }
  size_t files_written() const { return files_; }
  size_t overflows() const { return overflows_; }
  std::vector<std::string> unknown_layers;  // dump_list layers that name no op of the model

 private:
  bool Selected(const Node& n) const;
  uint64_t Timestamp();
  void WriteOpDump(const TaskEvent& e, bool inputs, bool outputs);
  void WriteGolden(const std::string& op_name, size_t index, const Tensor& t);
  static Tensor InFrameworkLayout(const Node& n, const Tensor& t);
  void CheckOverflow(const TaskEvent& e);

  const DumpConfig& cfg_;
  const Graph& graph_;
  std::string root_, model_name_, dir_;
  Mode mode_;
  const DumpConfig::Entry* entry_;
  std::set<std::string> layers_;
  std::unique_ptr<LongNameMap> names_;
  bool active_ = false;
  uint64_t last_ts_ = 0;
  size_t files_ = 0, overflows_ = 0;
  Status status_;
};

// "{dump_path}/{YYYYmmddHHMMSS}/{device}/{model}/{model_id}" (msame's one model has id 1; AscendCL's are numbered
// by aclmdlLoad*).
std::string DumpRoot(const std::string& dump_path, const std::string& device, const std::string& model_name, uint32_t model_id = 1);

}  // namespace npu::debug
