// The runtime: executes a model's task list on the host. Observers are called around every task
// (dumps, overflow checks and profiling attach there); the runtime knows nothing about file formats.
#pragma once
#include "kernels/registry.h"
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "ir/buffer_pool.h"
#include "sim/schedule.h"
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
  const TaskTiming* timing = nullptr;  // on a simulated SoC: the task's cost and place in the iteration
  double sim_start_ns = 0;             // simulated clock at the task's start (since the session began)
  uint64_t iteration = 0;              // 0-based count of Run/RunTiming calls
};

class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void BeforeTask(const TaskEvent&) {}
  virtual void AfterTask(const TaskEvent&) {}
  // A task that faulted on its data (kernels' kTaskFaultCode: the device's AI Core or AI CPU exception), with its
  // inputs; it produced no outputs. The iteration ends there with the fault's status.
  virtual void OnTaskFault(const TaskEvent& /*e*/, const Status& /*fault*/) {}
  // After each iteration, with its simulated start and end (ns since the session began).
  virtual void AfterIteration(uint64_t /*iteration*/, double /*start_ns*/, double /*end_ns*/) {}
};

// The chip an .om is simulated on: the spec atc embedded (--soc_spec), else the built-in one its soc_version
// names; null when it names none (the reference path).
Result<std::shared_ptr<const SocSpec>> ModelSoc(const OmModel& m);

class Session {
 public:
  // From an .om (weights alias the file) or from an already-built graph (the fp32 reference path).
  static Result<Session> FromOm(const std::string& path, size_t profile = 0);  // profile: see OmModel
  static Result<Session> FromGraph(Graph g);

  const OmModel& model() const { return model_; }
  const Graph& graph() const { return model_.graph; }
  const ExecContext& exec() const { return exec_; }
  void AddObserver(TaskObserver* o) { observers_.push_back(o); }
  void RemoveObserver(TaskObserver* o) { std::erase(observers_, o); }
  // Overflow detection on: fp32 results are scanned for Inf/NaN too (fp16/bf16 ones always are).
  void TrackFloatStatus(bool on) { exec_.track_status = on; }

  // Input k as a caller gives it (in its device layout when atc adjusted it): the model's dtype, its static dims
  // and the ranges it was converted with; a profile selector must select the loaded profile. EH0001 naming it.
  Status CheckInput(size_t k, const Tensor& t) const;
  // Checks the inputs (their count, and each with CheckInput) and runs every task in order.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs);
  // Advances the simulated clock through one iteration without computing anything (observers see every
  // task with empty tensors): the timing of a model whose numbers are not needed.
  Status RunTiming();

  // Simulate on another chip than the .om names (--soc_spec): timing and overflow mode follow it.
  void SetSoc(std::shared_ptr<const SocSpec> soc);
  // The simulated SoC, or null on the fp32 reference path (which has no clock).
  const SocSpec* soc() const { return exec_.soc; }
  const IterationTiming* timing() const { return timing_ ? &*timing_ : nullptr; }
  // The task that faulted in the last Run (kTaskFaultCode), or null.
  const Task* faulted_task() const { return faulted_ ? &model_.tasks[*faulted_] : nullptr; }
  double simulated_ns() const { return clock_ns_; }  // simulated time since the session began
  // Tasks whose stored tiling the simulated chip cannot hold, re-tiled with the built-in heuristic.
  int retiled() const { return retiled_; }
  // Concat tasks of the last Run that their reader read as pieces instead (PlanConcatPairs).
  int concats_read_in_place() const { return concats_read_in_place_; }
  // Slices of the last Run that their reader read where they lie instead (PlanStridedViews).
  int views_read_in_place() const { return views_read_in_place_; }
  // Activation tasks of the last Run computed inside the task before them instead (PlanActivationsInProducers).
  int activations_in_producers() const { return activations_in_producers_; }
  // Tasks of the last Run whose kernel wrote its result over an input the task read last (kernel_util.h ResultOver).
  int results_over_inputs() const { return results_over_inputs_; }

 private:
  OmModel model_;
  std::vector<TaskObserver*> observers_;
  BufferPool pool_;  // the activations' storage, reused most recently freed first (buffer_pool.h says why)
  ExecContext exec_;  // the .om's SoC; the reference path has none
  std::shared_ptr<const SocSpec> own_soc_;  // a --soc_spec chip (exec_.soc points at it)
  std::optional<IterationTiming> timing_;
  double clock_ns_ = 0;
  int retiled_ = 0;
  uint64_t iterations_ = 0;
  std::optional<size_t> faulted_;
  void Schedule();
  TaskEvent EventFor(size_t k, std::span<const Tensor> ins, std::span<const Tensor> outs) const;
  void EndIteration();
  std::vector<int> last_use_;  // per value: index of the last task reading it (to free early)
  std::vector<Tensor> widened_;  // per value: fp16/bf16 constants widened to fp32 once, for the kernels
  // Per value, this run: it may hold an Inf or a NaN (its task's rounding met one, or one of that task's inputs may;
  // never on a saturating SoC).
  std::vector<uint8_t> may_hold_non_finite_;
  std::vector<std::unique_ptr<KernelState>> states_;  // per task: what its kernel keeps between runs
  // Per task, what RunTask would otherwise look up by op type and attribute name on every run.
  struct TaskPlan {
    PreparedKernel kernel;
    bool takes_channels_last = false;  // the kernel reads channels-last inputs (channels_last.h)
    bool channels_last_out = false;    // every reader of its output 0 takes channels-last tensors
    bool moves_bytes = false;          // the op only moves bytes (OpSchema::moves_bytes)
    bool moves_settled_values = false; // ... and only earlier tasks' results (MovesSettledValues): no scan of its own
    bool result_is_rounded = false;    // its 16-bit results are its inputs' values (see PlanTasks)
    // torch's SiLU (PlanSiluPairs): the Sigmoid task runs inside the Mul after it when nothing observes them.
    bool runs_in_next = false;         // on the Sigmoid
    bool pair_sigmoid = false;         // on the Mul: it runs with the Sigmoid before it (SigmoidTimesInput)
    int pair_x = -1;                   // on the Mul: the input position of x
    // A channel Concat whose only reader is the next task, which may read it as its pieces (PlanConcatPairs).
    bool concat_to_next = false;       // on the Concat
    bool reads_concat = false;         // on its reader
    // A strided selection whose only reader copies anyway and may take it in place of a copy (PlanStridedViews).
    bool view_to_reader = false;       // on the Slice
    bool reads_view = false;           // on its reader
    // An activation task run inside this task, the one before it (PlanActivationsInProducers): its in-place form
    // and the rounding of its result (RunTask then skips it: activation_done_by_).
    InPlaceFn then_act;
    DType then_round_to = DType::kUndefined;
    // Set instead of then_act: the SiLU pair of the two tasks after this one runs inside it (SigmoidTimesInputInPlace,
    // made per run: it reads the session's current overflow mode), its Sigmoid's result rounded to this dtype.
    std::optional<DType> then_silu_sigmoid;
    size_t TasksTaken() const { return then_silu_sigmoid ? 2 : then_act ? 1 : 0; }
  };
  std::vector<TaskPlan> plans_;
  void PlanLifetimes();
  void PlanTasks();
  void PlanSiluPairs();
  void PlanConcatPairs();
  void PlanStridedViews();
  void PlanActivationsInProducers();
  void PlanSiluPairsInProducers(const std::vector<int>& readers);
  int activation_done_by_ = -1;  // this run: the task whose producer computed it (RunTask)
  int activations_in_producers_ = 0;
  std::vector<Tensor> concat_pieces_;  // a paired Concat's inputs, handed to the next task (RunTask)
  int concats_read_in_place_ = 0;
  std::unordered_map<int, StridedSource> views_;  // per value: the selection a Slice left to its reader (RunTask)
  int views_read_in_place_ = 0;
  int results_over_inputs_ = 0;
  std::vector<const std::byte*> handed_over_;  // RunTask: the storage of the inputs the task reads last (kept: no allocation per task)
  void WidenConstants();
  // A 16-bit value the runtime holds in fp32 (RunTask rounds compute results so), and that value as stored.
  bool HeldInF32(const std::vector<Tensor>& vals, int v) const;
  Tensor AsStored(Tensor t, int v) const;
  Status RunTask(size_t k, std::vector<Tensor>& vals);
  bool ReadsLast(int value, size_t k) const;  // task k is the last to read the intermediate `value`
  void ReleaseLastUses(const Node& n, size_t k, std::vector<Tensor>& vals) const;
};

}  // namespace npu
