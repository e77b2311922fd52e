#include "lower/lower.h"

#include <algorithm>
#include <set>

namespace npu {

std::string_view EngineName(Engine e) { return e == Engine::kAiCpu ? "AiCpu" : "AiCore"; }

Engine NodeEngine(const Node& n) {
  if (n.attr_string(kOpEngineAttr) == kAiCpuEngine) return Engine::kAiCpu;
  const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type);
  return s ? s->engine : Engine::kVector;
}

Work TaskWork(const Graph& g, const Task& t, const SocSpec* soc) {
  Work w = DescribeWork(g, g.nodes[t.op_index], t.engine);
  if (w.kind == WorkKind::kCube && soc && soc->CubeK(w.dtype) == 0) w.kind = WorkKind::kAiCpu;
  return w;
}

namespace {

int ComputedInputs(const Graph& g, const Node& n) {
  int c = 0;
  for (int i : n.inputs) c += i >= 0 && !g.values[i].constant;
  return c;
}

struct Placement {
  std::vector<uint32_t> stream;
  std::vector<int32_t> core_cap;
};

// The stream decisions: each fork whose readers ask for parallel branches puts its chains on streams.
Placement PlaceBranches(const Graph& g, const SocSpec* soc) {
  size_t n = g.nodes.size();
  Placement p{std::vector<uint32_t>(n, 0), std::vector<int32_t>(n, 0)};
  std::vector<std::vector<int>> readers(g.values.size());
  for (size_t k = 0; k < n; ++k)
    for (int i : g.nodes[k].inputs)
      if (i >= 0 && (readers[i].empty() || readers[i].back() != static_cast<int>(k))) readers[i].push_back(static_cast<int>(k));
  std::vector<bool> placed(n, false);
  for (size_t v = 0; v < g.values.size(); ++v) {
    std::vector<int> heads;
    for (int r : readers[v])
      if (!placed[r] && ComputedInputs(g, g.nodes[r]) == 1 && g.nodes[r].attr_list_has(kStreamPolicyAttr, kParallelBranches)) heads.push_back(r);
    if (heads.size() < 2) continue;
    for (size_t b = 0; b < heads.size(); ++b) {
      uint32_t stream = static_cast<uint32_t>(std::min<size_t>(b, kMaxStreams - 1));
      int32_t split = static_cast<int32_t>(g.nodes[heads[b]].attr_int(kCoreSplitAttr, 0));
      int32_t cap = split <= 0 || !soc || split >= soc->ai_cores ? 0 : b == 0 ? soc->ai_cores - split : split;
      for (int k = heads[b];;) {  // the chain: sole readers with no other computed input
        placed[k] = true;
        p.stream[k] = stream, p.core_cap[k] = cap;
        const Node& node = g.nodes[k];
        if (node.outputs.size() != 1 || readers[node.outputs[0]].size() != 1) break;
        int next = readers[node.outputs[0]][0];
        if (placed[next] || ComputedInputs(g, g.nodes[next]) != 1) break;
        k = next;
      }
    }
  }
  return p;
}

}  // namespace

uint32_t StreamCount(std::span<const Task> tasks) {
  uint32_t n = 1;
  for (const Task& t : tasks) n = std::max(n, t.stream_id + 1);
  return n;
}

std::vector<int> ProducerTasks(const Graph& g, std::span<const Task> tasks) {
  std::vector<int> producer(g.values.size(), -1);
  for (size_t k = 0; k < tasks.size(); ++k)
    for (int o : g.nodes[tasks[k].op_index].outputs) producer[o] = static_cast<int>(k);
  return producer;
}

int64_t GeTensorSize(int64_t bytes) {
  constexpr int64_t kPad = 32, kAlign = 32;
  return (bytes + kPad + kAlign - 1) / kAlign * kAlign;
}

uint64_t FeatureMapBytes(const Graph& g, std::span<const Task> tasks) {
  constexpr uint64_t kBlock = 512;  // GE's memory block alignment (MEM_ALIGN_SIZE)
  const int end = static_cast<int>(tasks.size());
  std::vector<int> born(g.values.size(), 0), dies(g.values.size(), -1);
  std::vector<int> producer = ProducerTasks(g, tasks);
  for (size_t i = 0; i < g.values.size(); ++i) born[i] = producer[i] < 0 ? 0 : producer[i];
  for (int k = 0; k < end; ++k)
    for (int i : g.nodes[tasks[k].op_index].inputs)
      if (i >= 0) dies[i] = std::max(dies[i], k);
  for (int o : g.outputs) dies[o] = end;
  std::vector<int64_t> delta(tasks.size() + 2, 0);
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (v.constant || dies[i] < 0 || !v.has_shape) continue;
    auto bytes = ByteSize(DeviceShapeOf(v), DTypeSize(v.dtype));
    if (!bytes) continue;
    delta[born[i]] += GeTensorSize(static_cast<int64_t>(*bytes));
    delta[dies[i] + 1] -= GeTensorSize(static_cast<int64_t>(*bytes));
  }
  int64_t live = 0, peak = 0;
  for (int64_t d : delta) peak = std::max(peak, live += d);
  return (static_cast<uint64_t>(peak) + kBlock - 1) / kBlock * kBlock;
}

uint32_t EventCount(const Graph& g, std::span<const Task> tasks) {
  std::vector<int> producer = ProducerTasks(g, tasks);
  std::set<std::pair<int, uint32_t>> events;
  for (const Task& t : tasks)
    for (int i : g.nodes[t.op_index].inputs)
      if (int p = i >= 0 ? producer[i] : -1; p >= 0 && tasks[p].stream_id != t.stream_id) events.insert({p, t.stream_id});
  return static_cast<uint32_t>(events.size());
}

void AllocateParallelStreams(Graph& g) {
  std::vector<int> readers(g.values.size(), 0);
  for (const Node& n : g.nodes) {
    std::set<int> distinct(n.inputs.begin(), n.inputs.end());
    for (int i : distinct)
      if (i >= 0) ++readers[i];
  }
  for (Node& n : g.nodes) {
    if (n.has_attr(kStreamPolicyAttr) || ComputedInputs(g, n) != 1) continue;
    auto in = std::find_if(n.inputs.begin(), n.inputs.end(), [&](int i) { return i >= 0 && !g.values[i].constant; });
    if (readers[*in] >= 2) n.attr_list_add(kStreamPolicyAttr, kParallelBranches);
  }
}

std::vector<Task> LowerToTasks(const Graph& g, const SocSpec* soc) {
  std::vector<Task> tasks;
  Placement place = PlaceBranches(g, soc);
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
    t.stream_id = place.stream[i];
    t.core_cap = place.core_cap[i];
    if (soc && t.core_cap > 0) {
      SocSpec share = *soc;  // tiled as if the chip had only its share of the cores
      share.ai_cores = t.core_cap;
      t.tiling = DefaultTiling(w, share);
    } else if (soc) {
      t.tiling = DefaultTiling(w, *soc);
    }
    t.block_dim = static_cast<uint32_t>(t.tiling.block_dim);
    tasks.push_back(std::move(t));
  }
  return tasks;
}

}  // namespace npu
