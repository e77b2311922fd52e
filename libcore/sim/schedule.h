// One iteration of a model on the simulated SoC: each device task's cost (with the L2 residency the tasks
// before it leave behind, and the DRAM it shares with other streams' tasks) and its start: after its stream's
// previous task, its inputs (across streams through an event) and the AI cores it needs. Computed once per loaded model; the runtime,
// msame's timing line and profiling all read it.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "cost/cost_model.h"
#include "ir/node_attrs.h"
#include "lower/lower.h"

namespace npu {

// Per-node L2 decisions (kL2PolicyAttr in ir/node_attrs.h): pinned weights stay in L2 in task order while
// the pinned bytes fit kPinnableL2Fraction of L2; the rest of L2 stays an LRU cache.
// Half of L2 may be pinned: the cost model already treats an operand as L2-resident only when it fits half of
// L2 (cost_model.cc), so the other half is what streaming operands keep. [U] an estimate, no published figure.
constexpr double kPinnableL2Fraction = 0.5;

struct TaskTiming {
  double start_ns = 0;  // from the start of the iteration
  double duration_ns = 0;
  Work work;
  TaskCost cost;
  L2State l2;
};

struct IterationTiming {
  std::vector<TaskTiming> tasks;  // one per task of the model (view tasks take no time)
  double total_ns = 0;            // the latest stream's end
  double pinned_l2_bytes = 0;     // L2 reserved by kL2PinWeights decisions
};

// The line scripts read: "Simulated NPU time: <ms> ms per inference (<fps> fps at batch <n>, <soc>)".
std::string FormatSimulatedTime(double ns_per_inference, int64_t batch, const SocSpec& soc);
// The batch of a model: the first dim of its first input (1 when unknown).
int64_t BatchOf(const Graph& g);

// The steady state of repeated inference: one iteration warms L2 (weights that fit stay), the next is timed.
IterationTiming ScheduleIteration(const Graph& g, std::span<const Task> tasks, const SocSpec& soc);

}  // namespace npu
