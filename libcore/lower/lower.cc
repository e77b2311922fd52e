#include "lower/lower.h"

namespace npu {

std::string_view EngineName(Engine e) { return e == Engine::kAiCpu ? "AiCpu" : "AiCore"; }

Engine NodeEngine(const Node& n) {
  if (n.attr_string("_op_engine") == "AiCpu") return Engine::kAiCpu;
  const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
  return s ? s->engine : Engine::kVector;
}

Work TaskWork(const Graph& g, const Task& t, const SocSpec* soc) {
  Work w = DescribeWork(g, g.nodes[t.op_index], t.engine);
  if (w.kind == WorkKind::kCube && soc && soc->CubeK(w.dtype) == 0) w.kind = WorkKind::kAiCpu;
  return w;
}

std::vector<Task> LowerToTasks(const Graph& g, const SocSpec* soc) {
  std::vector<Task> tasks;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    Task t;
    t.task_id = static_cast<uint32_t>(i);
    t.op_index = static_cast<uint32_t>(i);
    t.engine = NodeEngine(n);
    t.kernel_name = ShownType(n);
    Work w = TaskWork(g, t, soc);
    t.kind = w.kind;
    if (w.kind == WorkKind::kAiCpu) t.engine = Engine::kAiCpu;
    if (soc) t.tiling = DefaultTiling(w, *soc);
    t.block_dim = static_cast<uint32_t>(t.tiling.block_dim);
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace npu
