// One iteration of a model on the simulated SoC: each device task's cost (with the L2 residency the tasks
// before it leave behind) and its place on its stream's clock. Computed once per loaded model; the runtime,
// msame's timing line and profiling all read it.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "lower/lower.h"

namespace npu {

struct TaskTiming {
  double start_ns = 0;  // from the start of the iteration, on the task's stream
  double duration_ns = 0;
  Work work;
  TaskCost cost;
  L2State l2;
};

struct IterationTiming {
  std::vector<TaskTiming> tasks;  // one per task of the model (view tasks take no time)
  double total_ns = 0;            // the latest stream's end
};

// The line scripts read: "Simulated NPU time: <ms> ms per inference (<fps> fps at batch <n>, <soc>)".
std::string FormatSimulatedTime(double ns_per_inference, int64_t batch, const SocSpec& soc);
// The batch of a model: the first dim of its first input (1 when unknown).
int64_t BatchOf(const Graph& g);

// The steady state of repeated inference: one iteration warms L2 (weights that fit stay), the next is timed.
IterationTiming ScheduleIteration(const Graph& g, std::span<const Task> tasks, const SocSpec& soc);

}  // namespace npu
