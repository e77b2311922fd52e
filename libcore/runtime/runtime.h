// The runtime: executes a model's task list on the host. Observers are called around every task
// (dumps, overflow checks and profiling attach there); the runtime knows nothing about file formats.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "om/om_model.h"

namespace npu {

struct TaskEvent {
  const Task& task;
  const Node& node;
  std::span<const Tensor> inputs;
  std::span<const Tensor> outputs;  // empty before the task runs
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
  void AddObserver(TaskObserver* o) { observers_.push_back(o); }

  // Checks the inputs against the model's (count, dtype, static dims) and runs every task in order.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);

 private:
  OmModel model_;
  std::vector<TaskObserver*> observers_;
  std::vector<int> last_use_;  // per value: index of the last task reading it (to free early)
  void PlanLifetimes();
};

}  // namespace npu
