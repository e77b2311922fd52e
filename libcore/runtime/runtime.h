// The runtime: executes a model's task list on the host. Observers are called around every task
// (dumps, overflow checks and profiling attach there); the runtime knows nothing about file formats.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "kernels/numerics.h"
#include "om/om_model.h"

namespace npu {

struct TaskEvent {
  const Task& task;
  const Node& node;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;  // empty before the task runs
  const FloatStatus* status = nullptr;  // after the task: its float status word
  bool overflow = false;  // the AI Core flags overflow: a result left its dtype's range, or finite inputs gave Inf/NaN
};

class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void BeforeTask(const TaskEvent&) {}
  virtual void AfterTask(const TaskEvent&) {}
};

class Session {
 public:
  // From an .om (weights alias the file) or from an already-built graph (the fp32 reference path).
  static Result<Session> FromOm(const std::string& path);
  static Result<Session> FromGraph(Graph g);

  const OmModel& model() const { return model_; }
  const Graph& graph() const { return model_.graph; }
  const ExecContext& exec() const { return exec_; }
  void AddObserver(TaskObserver* o) { observers_.push_back(o); }
  // Overflow detection on: fp32 results are scanned for Inf/NaN too (fp16/bf16 ones always are).
  void TrackFloatStatus(bool on) { exec_.track_status = on; }

  // Checks the inputs against the model's (count, dtype, static dims) and runs every task in order.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

 private:
  OmModel model_;
  std::vector<TaskObserver*> observers_;
  ExecContext exec_;  // the .om's SoC; the reference path has none
  std::vector<int> last_use_;  // per value: index of the last task reading it (to free early)
  std::vector<Tensor> widened_;  // per value: fp16/bf16 constants widened to fp32 once, for the kernels
  void PlanLifetimes();
  void WidenConstants();
  Status RunTask(size_t k, std::vector<Tensor>& vals);
};

}  // namespace npu
