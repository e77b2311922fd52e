#include "ir/graph_edit.h"

#include <algorithm>
#include <queue>
#include <unordered_set>

namespace npu {

std::vector<int> Consumers(const Graph& g, int v) {
  std::vector<int> out;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (std::find(g.nodes[k].inputs.begin(), g.nodes[k].inputs.end(), v) != g.nodes[k].inputs.end())
      out.push_back(static_cast<int>(k));
  return out;
}

bool IsGraphOutput(const Graph& g, int v) { return std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end(); }

int SoleConsumer(const Graph& g, int v) {
  if (IsGraphOutput(g, v)) return -1;
  auto c = Consumers(g, v);
  return c.size() == 1 ? c[0] : -1;
}

void ReplaceAllUses(Graph& g, int from, int to) {
  for (auto& n : g.nodes)
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
  std::replace(g.outputs.begin(), g.outputs.end(), from, to);
}

void ReplaceUse(Graph& g, int consumer, int from, int to) {
  auto& in = g.nodes[consumer].inputs;
  std::replace(in.begin(), in.end(), from, to);
}

std::string UniqueValueName(const Graph& g, const std::string& base) {
  if (g.FindValue(base) < 0) return base;
  for (int i = 1;; ++i)
    if (std::string s = base + "_" + std::to_string(i); g.FindValue(s) < 0) return s;
}

std::string UniqueNodeName(const Graph& g, const std::string& base) {
  std::unordered_set<std::string> names;
  for (const auto& n : g.nodes) names.insert(n.name);
  if (!names.count(base)) return base;
  for (int i = 1;; ++i)
    if (std::string s = base + "_" + std::to_string(i); !names.count(s)) return s;
}

int AddConstant(Graph& g, const std::string& name, Tensor t) {
  int v = g.AddValue(UniqueValueName(g, name));
  Value& val = g.values[v];
  val.dtype = t.dtype();
  val.shape = t.shape();
  val.has_shape = true;
  val.constant = std::move(t);
  return v;
}

int AppendNode(Graph& g, Node n) {
  int id = static_cast<int>(g.nodes.size());
  for (int o : n.outputs) g.values[o].producer = id;
  g.nodes.push_back(std::move(n));
  return id;
}

void EraseNodes(Graph& g, const std::vector<bool>& dead) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!dead[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  for (auto& v : g.values) v.producer = -1;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs) g.values[o].producer = static_cast<int>(i);
}

Status SortTopologically(Graph& g) {
  size_t n = g.nodes.size();
  std::vector<int> producer(g.values.size(), -1);
  for (size_t k = 0; k < n; ++k)
    for (int o : g.nodes[k].outputs) producer[o] = static_cast<int>(k);
  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> readers(n);
  for (size_t k = 0; k < n; ++k)
    for (int i : g.nodes[k].inputs)
      if (i >= 0 && producer[i] >= 0) {
        ++pending[k];
        readers[producer[i]].push_back(static_cast<int>(k));
      }
  // Smallest original index first: the order changes only where a dependency demands it.
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (size_t k = 0; k < n; ++k)
    if (!pending[k]) ready.push(static_cast<int>(k));
  std::vector<int> order;
  while (!ready.empty()) {
    int k = ready.top();
    ready.pop();
    order.push_back(k);
    for (int r : readers[k])
      if (--pending[r] == 0) ready.push(r);
  }
  if (order.size() != n) return Status::Error("E19999", "graph", g.name, "a pass left a cycle in the graph");
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (int k : order) sorted.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(sorted);
  for (auto& v : g.values) v.producer = -1;
  for (size_t i = 0; i < n; ++i)
    for (int o : g.nodes[i].outputs) g.values[o].producer = static_cast<int>(i);
  return Status::Ok();
}

std::optional<double> ScalarConst(const Graph& g, int v) {
  const Tensor* t = ConstantOf(g, v);
  if (!t || t->numel() != 1 || !IsFloat(t->dtype())) return std::nullopt;
  return t->ToDoubleVector()[0];
}

std::optional<Node> ClipWithBoundAttributes(const Graph& g, const Node& clip) {
  if (clip.op_type != "Clip" || clip.opset < 11) return clip;
  Node n = clip;
  for (size_t j = 1; j < clip.inputs.size(); ++j) {
    if (clip.inputs[j] < 0) continue;
    const std::optional<double> bound = ScalarConst(g, clip.inputs[j]);
    if (!bound) return std::nullopt;
    n.attrs[j == 1 ? "min" : "max"] = static_cast<float>(*bound);
  }
  n.opset = 6;
  n.inputs.resize(1);
  return n;
}

}  // namespace npu
