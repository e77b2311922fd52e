#include "tune/subgraph.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "base/file_io.h"
#include "base/json.h"
#include "cost/cost_model.h"
#include "sim/schedule.h"
#include "lower/lower.h"
#include "passes/fusion.h"

namespace npu {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// A cut may cross this many values: a transformer's attention mask crosses every layer boundary, so one
// value alone would leave an encoder in one piece.
constexpr int kMaxCutValues = 2;

uint64_t Fnv1a64(std::string_view s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string ShapeText(const Value& v) {
  std::string s = std::string(DTypeName(v.dtype)) + "[";
  for (int64_t d : v.shape) s += std::to_string(d) + ",";
  return s + "]";
}

// The structure tuning depends on: types, attributes (not the underscore decisions), dtypes and shapes, and
// which op feeds which (by position in the subgraph). Weights' values do not change costs.
std::string Signature(const Graph& g, const std::vector<int>& nodes) {
  std::unordered_map<int, size_t> local;
  for (size_t i = 0; i < nodes.size(); ++i) local[nodes[i]] = i;
  std::ostringstream os;
  for (int k : nodes) {
    const Node& n = g.nodes[k];
    os << n.op_type << "/" << n.ascend_type << "(";
    for (const auto& [name, a] : n.attrs)
      if (!name.starts_with("_")) os << name << "=" << AttrToString(a) << ";";
    os << ")<";
    for (int i : n.inputs) {
      if (i < 0) {
        os << "-,";
        continue;
      }
      const Value& v = g.values[i];
      auto it = v.producer >= 0 ? local.find(v.producer) : local.end();
      if (it != local.end()) {
        const auto& outs = g.nodes[v.producer].outputs;
        os << "n" << it->second << "." << (std::find(outs.begin(), outs.end(), i) - outs.begin()) << ",";
      } else {
        os << (v.constant ? "c" : "x") << ShapeText(v) << ",";
      }
    }
    os << ">";
    for (int o : n.outputs) os << ShapeText(g.values[o]) << ",";
    os << "\n";
  }
  return os.str();
}

json RecordJson(const SubgraphRecord& r) {
  return {{"key", r.key}, {"context", r.context}, {"version", kCostModelVersion}, {"subgraph", r.description},
          {"decision", r.plan.ToString()}, {"model_performance_before(ms)", r.before_ms}, {"model_performance_after(ms)", r.after_ms}};
}

}  // namespace

std::string Subgraph::Describe(const Graph& g) const {
  if (nodes.empty()) return "(empty)";
  return g.nodes[nodes.front()].name + " .. " + g.nodes[nodes.back()].name + " (" + std::to_string(nodes.size()) + " ops)";
}

std::string SubgraphContext(const SocSpec& soc, const std::string& precision_mode) {
  return soc.name + "_" + std::to_string(soc.ai_cores) + "|" + precision_mode + "|v" + std::to_string(kCostModelVersion);
}

std::vector<Subgraph> PartitionSubgraphs(const Graph& g, const std::string& context) {
  size_t n = g.nodes.size();
  std::vector<size_t> last_use(g.values.size(), 0);
  std::vector<bool> used(g.values.size(), false);
  for (size_t k = 0; k < n; ++k)
    for (int i : g.nodes[k].inputs)
      if (i >= 0 && !g.values[i].constant) last_use[i] = k, used[i] = true;
  // Values live across the cut after node k: produced (or a graph input) at or before k, read after k.
  int live = 0;
  for (int i : g.inputs) live += used[i] ? 1 : 0;
  std::vector<Subgraph> out;
  Subgraph cur;
  for (size_t k = 0; k < n; ++k) {
    const Node& node = g.nodes[k];
    for (int o : node.outputs) live += used[o] && last_use[o] > k ? 1 : 0;
    std::vector<int> ins = node.inputs;
    std::sort(ins.begin(), ins.end());
    ins.erase(std::unique(ins.begin(), ins.end()), ins.end());
    for (int i : ins) live -= i >= 0 && used[i] && last_use[i] == k ? 1 : 0;
    cur.nodes.push_back(static_cast<int>(k));
    if ((cur.nodes.size() >= kMinSubgraphOps && live <= kMaxCutValues) || k + 1 == n) {
      cur.id = static_cast<int>(out.size());
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(Fnv1a64(context + "\n" + Signature(g, cur.nodes))));
      cur.key = hex;
      out.push_back(std::move(cur));
      cur = {};
    }
  }
  return out;
}

std::string SubgraphPlan::ToString() const {
  if (builtin()) return "builtin";
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  if (!fusion_off.empty()) groups.push_back({"fusion_off", {fusion_off.begin(), fusion_off.end()}});
  std::vector<std::string> l2;
  if (pin_weights) l2.push_back(kL2PinWeights);
  if (bypass_outputs) l2.push_back(kL2BypassOutputs);
  if (!l2.empty()) groups.push_back({"l2", l2});
  if (parallel_branches) groups.push_back({"streams", {kParallelBranches}});
  if (single_stream) groups.push_back({"streams", {kSingleStream}});
  if (core_split > 0) groups.push_back({"core_split", {std::to_string(core_split)}});
  std::string s;
  for (const auto& [name, items] : groups) {
    s += (s.empty() ? "" : " ") + name + "=[";
    for (size_t i = 0; i < items.size(); ++i) s += (i ? "," : "") + items[i];
    s += "]";
  }
  return s;
}

Result<SubgraphPlan> SubgraphPlan::Parse(std::string_view text) {
  SubgraphPlan p;
  auto bad = [&] { return Status::Error("EG0012", "subgraph decision", std::string(text), "not a decision aoe writes"); };
  if (text == "builtin") return p;
  while (!text.empty()) {
    size_t open = text.find("=["), close = text.find(']');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return bad();
    std::string_view name = text.substr(0, open), items = text.substr(open + 2, close - open - 2);
    for (size_t at = 0; at <= items.size();) {
      size_t comma = std::min(items.find(',', at), items.size());
      std::string item(items.substr(at, comma - at));
      if (item.empty()) return bad();
      if (name == "fusion_off") p.fusion_off.insert(item);
      else if (name == "l2" && item == kL2PinWeights) p.pin_weights = true;
      else if (name == "l2" && item == kL2BypassOutputs) p.bypass_outputs = true;
      else if (name == "streams" && item == kParallelBranches) p.parallel_branches = true;
      else if (name == "streams" && item == kSingleStream) p.single_stream = true;
      else if (name == "core_split" && item.find_first_not_of("0123456789") == std::string::npos && item.size() < 6) p.core_split = std::stoi(item);
      else return bad();
      at = comma + 1;
    }
    text.remove_prefix(close + 1);
    if (text.starts_with(' ')) text.remove_prefix(1);
  }
  if ((p.core_split > 0 && !p.parallel_branches) || (p.single_stream && p.parallel_branches)) return bad();
  return p;
}

void ApplySubgraphPlan(Graph& g, const Subgraph& s, const SubgraphPlan& p) {
  for (int k : s.nodes) {
    Node& n = g.nodes[k];
    n.attrs.erase(kFusionOffAttr);
    n.attrs.erase(kL2PolicyAttr);
    n.attrs.erase(kStreamPolicyAttr);
    n.attrs.erase(kCoreSplitAttr);
    for (const auto& f : p.fusion_off) n.attr_list_add(kFusionOffAttr, f);
    if (p.pin_weights) n.attr_list_add(kL2PolicyAttr, kL2PinWeights);
    if (p.bypass_outputs) n.attr_list_add(kL2PolicyAttr, kL2BypassOutputs);
    if (p.parallel_branches) n.attr_list_add(kStreamPolicyAttr, kParallelBranches);
    if (p.single_stream) n.attr_list_add(kStreamPolicyAttr, kSingleStream);
    if (p.core_split > 0) n.attrs[kCoreSplitAttr] = int64_t{p.core_split};
  }
}

std::string SubgraphBank::DefaultPath(const SocSpec& soc) {
  if (const char* p = std::getenv("TUNE_BANK_PATH"); p && *p) return std::string(p) + "/subgraph.json";
  if (const char* p = std::getenv("ASCEND_CACHE_PATH"); p && *p) return std::string(p) + "/aoe_data/subgraph.json";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/Ascend/latest/data/aoe/custom/graph/" + soc.name + "/subgraph.json";
}

// Each record line of the file: fn(lineno, record). A missing file has none.
template <class Fn>
static Status ForEachSubgraphRecord(const std::string& path, Fn&& fn) {
  std::ifstream in(path);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    auto bad = [&](const std::string& why) {
      return Status::Error("EG0012", "TUNE_BANK_PATH", path + ":" + std::to_string(lineno), "the line is not a subgraph bank record: " + why,
                           "Delete the line (or the file) and tune again.");
    };
    json j = ParseJson(line);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    SubgraphRecord r;
    int version = 0;
    try {
      r.key = j.at("key").get<std::string>();
      r.context = j.at("context").get<std::string>();
      version = j.at("version").get<int>();
      r.description = j.value("subgraph", "");
      auto plan = SubgraphPlan::Parse(j.at("decision").get<std::string>());
      if (!plan.ok()) return bad(plan.status().reason());
      r.plan = std::move(plan).value();
      r.before_ms = j.value("model_performance_before(ms)", 0.0);
      r.after_ms = j.value("model_performance_after(ms)", 0.0);
    } catch (const std::exception& e) {
      return bad(e.what());
    }
    NPU_RETURN_IF_ERROR(fn(version, std::move(r), line));
  }
  return Status::Ok();
}

Result<SubgraphBank> SubgraphBank::Open(const std::string& path) {
  SubgraphBank b;
  b.path_ = path;
  NPU_RETURN_IF_ERROR(ForEachSubgraphRecord(path, [&](int version, SubgraphRecord r, const std::string&) {
    if (version == kCostModelVersion) b.records_[r.key] = std::move(r);  // others were chosen by other formulas
    return Status::Ok();
  }));
  return b;
}

const SubgraphRecord* SubgraphBank::Find(const std::string& key) const {
  auto it = records_.find(key);
  return it == records_.end() ? nullptr : &it->second;
}

void SubgraphBank::Put(SubgraphRecord r) {
  dirty_.insert(r.key);
  records_[r.key] = std::move(r);
}

Status SubgraphBank::Save() {
  if (dirty_.empty()) return Status::Ok();
  std::error_code ec;
  fs::create_directories(fs::path(path_).parent_path(), ec);
  if (ec) return Status::Error("EG0010", "TUNE_BANK_PATH", fs::path(path_).parent_path().string(), "cannot create the bank directory: " + ec.message());
  FileLock lock(path_);
  if (!lock.ok()) return Status::Error("EG0010", "TUNE_BANK_PATH", path_ + ".lock", "cannot lock the subgraph bank");
  std::map<std::string, std::string> lines;  // by key: another process's records stay, ours win on a key
  NPU_RETURN_IF_ERROR(ForEachSubgraphRecord(path_, [&](int, SubgraphRecord r, const std::string& line) {
    lines[r.key] = line;
    return Status::Ok();
  }));
  for (const auto& key : dirty_) lines[key] = DumpJson(RecordJson(records_.at(key)));
  NPU_RETURN_IF_ERROR(WriteLinesAtomic(path_, lines));
  dirty_.clear();
  return Status::Ok();
}

int ApplySubgraphBank(Graph& g, const std::vector<Subgraph>& subgraphs, const SubgraphBank& bank) {
  int applied = 0;
  for (const Subgraph& s : subgraphs)
    if (const SubgraphRecord* r = bank.Find(s.key)) {
      ApplySubgraphPlan(g, s, r->plan);
      ++applied;
    }
  return applied;
}

}  // namespace npu
