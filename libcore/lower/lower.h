// Lowering: graph -> task list. Each node becomes one task on stream 0 with its engine and kernel;
// tiling and block_dim come with the cost model in a later step (block_dim is 1 until then).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op_schema.h"

namespace npu {

struct Task {
  uint32_t task_id = 0, stream_id = 0, op_index = 0, block_dim = 1;
  std::string kernel_name;
  Engine engine = Engine::kVector;
};

std::vector<Task> LowerToTasks(const Graph& g);
// The engine an op runs on: its schema's, unless precision assignment moved it to AI CPU (_op_engine).
Engine NodeEngine(const Node& n);
std::string_view EngineName(Engine e);  // "AiCore" or "AiCpu"

}  // namespace npu
