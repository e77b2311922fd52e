#include "lower/lower.h"

namespace npu {

std::string_view EngineName(Engine e) { return e == Engine::kAiCpu ? "AiCpu" : "AiCore"; }

std::vector<Task> LowerToTasks(const Graph& g) {
  std::vector<Task> tasks;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
    Task t;
    t.task_id = static_cast<uint32_t>(i);
    t.op_index = static_cast<uint32_t>(i);
    t.engine = s ? s->engine : Engine::kVector;
    t.kernel_name = n.op_type;
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace npu
