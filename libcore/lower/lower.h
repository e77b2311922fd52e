// Lowering: graph -> task list. Each node becomes one task with its engine, the work it asks of the hardware,
// a stream (0, unless a stream decision moved it) and a tiling (the built-in heuristic for the target SoC or
// the cores a core-split decision leaves it, or a tuned one from the tune bank).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cost/tiling.h"
#include "cost/work.h"
#include "ir/graph.h"
#include "ir/node_attrs.h"
#include "ir/op_schema.h"
#include "soc/soc_spec.h"

namespace npu {

struct Task {
  uint32_t task_id = 0, stream_id = 0, op_index = 0, block_dim = 1;
  std::string kernel_name;
  Engine engine = Engine::kVector;
  WorkKind kind = WorkKind::kVector;  // kView tasks run on the host only: no device time, not profiled
  Tiling tiling;
  std::string tiling_source = "builtin";  // "builtin" or "tune_bank"
  int32_t core_cap = 0;                   // > 0: tiled for this many cores (a core-split decision; not in the .om)
  bool on_device() const { return kind != WorkKind::kView; }
};

// Per-node stream decisions (aoe's subgraph tuning sets them, the .om keeps them):
// - kStreamPolicyAttr = kParallelBranches on the ops that read a value several ops read: the chains of ops that
//   start there (each following sole readers up to the next op with two computed inputs) run on streams 0, 1,
//   2, ... (up to kMaxStreams - 1), so independent branches overlap; the join waits on an event.
// - kCoreSplitAttr = K (int) on those ops as well: the side chains are tiled for K cores and the chain on
//   stream 0 for the rest, so the branches share the chip instead of queueing for all of it.
// [U] CANN's GE assigns a handful of streams per model; more buys nothing when branches are a few wide.
constexpr uint32_t kMaxStreams = 4;

// GE's default stream allocation: every op that starts a branch (its one computed input is a value several ops
// read) asks for parallel branches, unless a decision (aoe's) already set its stream policy. atc runs it unless
// --enable_single_stream=true.
void AllocateParallelStreams(Graph& g);

// `soc` may be null (the fp32 reference path): tasks then carry no tiling.
std::vector<Task> LowerToTasks(const Graph& g, const SocSpec* soc);
// For each value, the index of the task that writes it (-1: a graph input or constant).
std::vector<int> ProducerTasks(const Graph& g, std::span<const Task> tasks);
// Streams the tasks use (highest stream id + 1), and the events that order them: one per (producer task,
// consumer stream) pair where a task reads what another stream's task wrote.
uint32_t StreamCount(std::span<const Task> tasks);
uint32_t EventCount(const Graph& g, std::span<const Task> tasks);
// The bytes GE reserves for a tensor of `bytes`: 32 more, rounded up to 32. Source: the descs of the real A3C .om
// (tests/data/om): 7056 B of fp32 input -> size 7104, 3528 B of fp16 -> 3584, 56448 B of NC1HWC0 -> 56480.
int64_t GeTensorSize(int64_t bytes);
// The feature-map memory a model needs (the .om's memory_size): the largest sum of live activations over the
// task order, each sized as GE sizes a tensor, the total rounded up to GE's 512-byte memory blocks. npukit
// reuses a dead tensor's memory as soon as its last reader ran; GE's planner also shares blocks between
// tensors of different sizes, so this is an estimate of its figure, not a replay of its algorithm.
uint64_t FeatureMapBytes(const Graph& g, std::span<const Task> tasks);
// The engine an op runs on: its schema's, unless precision assignment moved it to AI CPU (_op_engine).
Engine NodeEngine(const Node& n);
std::string_view EngineName(Engine e);  // "AiCore" or "AiCpu"
// The work of the op behind a task, on the engine lowering chose (a cube op whose dtype the SoC's cube
// lacks runs on AI CPU).
Work TaskWork(const Graph& g, const Task& t, const SocSpec* soc);

}  // namespace npu
