// Lowering: graph -> task list. Each node becomes one task on stream 0 with its engine, the work it asks of
// the hardware and a tiling (the built-in heuristic for the target SoC, or a tuned one from the tune bank).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cost/tiling.h"
#include "cost/work.h"
#include "ir/graph.h"
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
  bool on_device() const { return kind != WorkKind::kView; }
};

// `soc` may be null (the fp32 reference path): tasks then carry no tiling.
std::vector<Task> LowerToTasks(const Graph& g, const SocSpec* soc);
// The engine an op runs on: its schema's, unless precision assignment moved it to AI CPU (_op_engine).
Engine NodeEngine(const Node& n);
std::string_view EngineName(Engine e);  // "AiCore" or "AiCpu"
// The work of the op behind a task, on the engine lowering chose (a cube op whose dtype the SoC's cube
// lacks runs on AI CPU).
Work TaskWork(const Graph& g, const Task& t, const SocSpec* soc);

}  // namespace npu
