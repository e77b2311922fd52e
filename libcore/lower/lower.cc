#include "lower/lower.h"

namespace npu {

std::string_view EngineName(Engine e) { return e == Engine::kAiCpu ? "AiCpu" : "AiCore"; }

Engine NodeEngine(const Node& n) {
  if (n.attr_string("_op_engine") == "AiCpu") return Engine::kAiCpu;
  const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
  return s ? s->engine : Engine::kVector;
}

std::vector<Task> LowerToTasks(const Graph& g) {
  std::vector<Task> tasks;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    Task t;
    t.task_id = static_cast<uint32_t>(i);
    t.op_index = static_cast<uint32_t>(i);
    t.engine = NodeEngine(n);
    t.kernel_name = ShownType(n);
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace npu
