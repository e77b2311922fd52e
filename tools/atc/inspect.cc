// atc --mode=diff A.om B.om and --mode=verify --om=X.om: what changed between two conversions (header,
// options, profiles, ops with their dtypes/formats/shapes/attrs, tilings, weights by content hash), and
// whether one .om is whole (every partition bounds-checked and checksummed by the reader, every profile's
// graph verified, every op with a kernel, every tiling within the SoC). Exit codes a CI can use: diff 0
// identical / 1 different, verify 0 sound / 1 broken, 2 when the files cannot be compared or read.
#include <xxhash.h>

#include <map>
#include <sstream>

#include "atc.h"
#include "kernels/registry.h"
#include "lower/lower.h"
#include "runtime/runtime.h"

namespace npu::atc {
namespace {

std::string Hash(const Tensor& t) {
  XXH128_hash_t h = XXH3_128bits(t.raw(), t.nbytes());
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64), static_cast<unsigned long long>(h.low64));
  return hex;
}

std::string Desc(const Value& v) {
  return std::string(DTypeName(v.dtype)) + ShapeToString(v.shape) + " " + std::string(FormatName(DeviceFormat(v)));
}

// Everything about one op a user could care about, as "key -> text" lines (stable order).
std::map<std::string, std::string> OpFacts(const Graph& g, const Node& n, const Task* t) {
  std::map<std::string, std::string> f;
  f["type"] = ShownType(n);
  f["engine"] = std::string(EngineName(NodeEngine(n)));
  for (size_t i = 0; i < n.inputs.size(); ++i)
    if (n.inputs[i] >= 0) f["input " + std::to_string(i)] = g.values[n.inputs[i]].name + " " + Desc(g.values[n.inputs[i]]);
  for (size_t j = 0; j < n.outputs.size(); ++j) f["output " + std::to_string(j)] = Desc(g.values[n.outputs[j]]);
  for (const auto& [k, a] : n.attrs) f["attr " + k] = std::holds_alternative<Tensor>(a) ? "tensor " + Hash(std::get<Tensor>(a)) : AttrToString(a);
  if (t && t->on_device()) f["tiling"] = TilingToString(TaskWork(g, *t, nullptr), t->tiling) + " (" + t->tiling_source + ")";
  return f;
}

void DiffMaps(const std::string& what, const std::map<std::string, std::string>& a, const std::map<std::string, std::string>& b,
              std::vector<std::string>& out) {
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end()) out.push_back(what + k + ": " + v + " -> (none)");
    else if (it->second != v) out.push_back(what + k + ": " + v + " -> " + it->second);
  }
  for (const auto& [k, v] : b)
    if (!a.count(k)) out.push_back(what + k + ": (none) -> " + v);
}

std::vector<std::string> DiffGraphs(const OmModel& a, const OmModel& b, const std::string& prefix) {
  std::vector<std::string> out;
  auto ops = [](const OmModel& m) {
    std::map<std::string, std::map<std::string, std::string>> by_name;
    std::map<uint32_t, const Task*> task_of;
    for (const Task& t : m.tasks) task_of[t.op_index] = &t;
    for (size_t k = 0; k < m.graph.nodes.size(); ++k)
      by_name[m.graph.nodes[k].name] = OpFacts(m.graph, m.graph.nodes[k], task_of.count(k) ? task_of[k] : nullptr);
    return by_name;
  };
  auto oa = ops(a), ob = ops(b);
  for (const auto& [name, facts] : oa)
    if (!ob.count(name)) out.push_back(prefix + "op - " + name + " (" + facts.at("type") + ")");
  for (const auto& [name, facts] : ob)
    if (!oa.count(name)) out.push_back(prefix + "op + " + name + " (" + facts.at("type") + ")");
  for (const auto& [name, facts] : oa)
    if (ob.count(name)) DiffMaps(prefix + "op " + name + ": ", facts, ob[name], out);
  auto io = [](const Graph& g) {
    std::map<std::string, std::string> m;
    for (int i : g.inputs) m["input " + g.values[i].name] = Desc(g.values[i]);
    for (int o : g.outputs) m["output " + g.values[o].name] = Desc(g.values[o]);
    return m;
  };
  DiffMaps(prefix, io(a.graph), io(b.graph), out);
  auto weights = [](const Graph& g) {
    std::map<std::string, std::string> m;
    for (const Value& v : g.values)
      if (v.constant) m["weight " + v.name] = Desc(v) + " " + Hash(*v.constant);
    return m;
  };
  DiffMaps(prefix, weights(a.graph), weights(b.graph), out);
  return out;
}

}  // namespace

int DiffModels(const std::string& a_path, const std::string& b_path, std::ostream& out) {
  auto a = LoadOm(a_path), b = LoadOm(b_path);
  for (const auto* m : {&a, &b})
    if (!m->ok()) {
      out << m->status().message() << "\n";
      return 2;
    }
  std::vector<std::string> lines;
  if (a.value().header.name != b.value().header.name) lines.push_back("header name: " + a.value().header.name + " -> " + b.value().header.name);
  if (a.value().header.platform_version != b.value().header.platform_version)
    lines.push_back("header soc: " + a.value().header.platform_version + " -> " + b.value().header.platform_version);
  DiffMaps("option ", a.value().attrs, b.value().attrs, lines);
  if (a.value().profiles.DescribeAll() != b.value().profiles.DescribeAll())
    lines.push_back("profiles: " + a.value().profiles.DescribeAll() + " -> " + b.value().profiles.DescribeAll());
  size_t profiles = std::min(std::max<size_t>(a.value().profiles.values.size(), 1), std::max<size_t>(b.value().profiles.values.size(), 1));
  for (size_t k = 0; k < profiles; ++k) {
    if (k > 0) {
      a = LoadOm(a_path, k), b = LoadOm(b_path, k);
      if (!a.ok() || !b.ok()) return 2;
    }
    std::string prefix = profiles > 1 ? "[" + a.value().profiles.Describe(k) + "] " : "";
    auto g = DiffGraphs(a.value(), b.value(), prefix);
    lines.insert(lines.end(), g.begin(), g.end());
  }
  for (const auto& l : lines) out << l << "\n";
  out << (lines.empty() ? "identical" : std::to_string(lines.size()) + " difference(s)") << ": " << a_path << " vs " << b_path << "\n";
  return lines.empty() ? 0 : 1;
}

int VerifyModel(const std::string& path, std::ostream& out) {
  auto first = LoadOm(path);  // the reader checks magic, sizes, partition bounds and the checksum
  if (!first.ok()) {
    out << "broken: " << first.status().message() << "\n";
    return 1;
  }
  size_t profiles = std::max<size_t>(first.value().profiles.values.size(), 1), ops = 0, tasks = 0, weights = 0;
  auto soc = ModelSoc(first.value());
  for (size_t k = 0; k < profiles; ++k) {
    auto m = k == 0 ? std::move(first) : LoadOm(path, k);
    if (!m.ok()) {
      out << "broken: " << m.status().message() << "\n";
      return 1;
    }
    const OmModel& om = m.value();
    std::vector<std::string> problems;
    for (const Node& n : om.graph.nodes)
      if (!KernelRegistry::Get().Find(n.op_type)) problems.push_back("op " + n.name + ": type " + n.op_type + " has no kernel");
    for (const Task& t : om.tasks) {
      if (!soc.ok() || !soc.value() || !t.on_device()) continue;
      if (Status s = CheckTiling(TaskWork(om.graph, t, soc.value().get()), t.tiling, *soc.value()); !s.ok())
        problems.push_back("task " + std::to_string(t.task_id) + " (" + om.graph.nodes[t.op_index].name + "): " + s.message());
    }
    for (const auto& p : problems) out << "broken: " << p << "\n";
    if (!problems.empty()) return 1;
    ops += om.graph.nodes.size(), tasks += om.tasks.size();
    for (const Value& v : om.graph.values) weights += v.constant.has_value();
  }
  out << "sound: " << path << " (" << profiles << " graph(s), " << ops << " ops, " << tasks << " tasks, " << weights
      << " weights; partitions bounds-checked and checksummed)\n";
  return 0;
}

}  // namespace npu::atc
