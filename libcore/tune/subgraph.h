// Subgraph tuning's units and decisions (aoe --job_type=1, CANN's SGAT): the model before fusion, cut into
// subgraphs; per subgraph the graph-level choices the simulator models (which fusion passes may fuse there,
// whether its weights are pinned in L2, whether its outputs bypass L2, whether its parallel branches run on
// their own streams and how they split the AI cores); and the subgraph bank atc reads. A decision is a node
// attribute (kFusionOffAttr, kL2PolicyAttr, kStreamPolicyAttr, kCoreSplitAttr), so the .om carries it to
// msame and profiling.
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "soc/soc_spec.h"

namespace npu {

struct Subgraph {
  int id = 0;
  std::vector<int> nodes;  // node indices of the pre-fusion graph, in topological order
  std::string key;         // structure + context hash: equal keys tune alike (the bank's key)
  std::string Describe(const Graph& g) const;  // "conv1 .. layer1.0.relu (7 ops)"
};

// A subgraph closes once it holds at least this many ops and few values cross the cut (subgraph.cc); more,
// smaller subgraphs make finer decisions for more evaluations. [U] resnet18 (49 ops) gives 5, a 2-layer
// encoder 8.
constexpr size_t kMinSubgraphOps = 12;

// What the key's context holds besides structure: SoC, cores, precision mode and cost-model version.
std::string SubgraphContext(const SocSpec& soc, const std::string& precision_mode);
// Consecutive runs of the (topologically sorted, pre-fusion) graph's nodes; together they hold every node once.
std::vector<Subgraph> PartitionSubgraphs(const Graph& g, const std::string& context);

struct SubgraphPlan {
  std::set<std::string> fusion_off = {};  // fusion passes that must not fuse in the subgraph
  bool pin_weights = false, bypass_outputs = false;
  bool parallel_branches = false;
  bool single_stream = false;  // every op of the subgraph on stream 0, where atc would put branches on streams
  int32_t core_split = 0;  // with parallel_branches: cores for the side branches (0 = no split)
  bool builtin() const { return fusion_off.empty() && !pin_weights && !bypass_outputs && !parallel_branches && !single_stream; }
  // "fusion_off=[A,B] l2=[pin_weights] streams=[parallel_branches|single_stream] core_split=[4]" or "builtin"
  std::string ToString() const;
  static Result<SubgraphPlan> Parse(std::string_view text);  // ToString's inverse
  bool operator==(const SubgraphPlan&) const = default;
};
// Writes the plan onto the subgraph's nodes (replacing an earlier plan).
void ApplySubgraphPlan(Graph& g, const Subgraph& s, const SubgraphPlan& p);

struct SubgraphRecord {
  std::string key, context, description;
  SubgraphPlan plan;
  double before_ms = 0, after_ms = 0;  // simulated model time with the built-in and the banked decision
};

// The subgraph bank: JSON Lines, one record per key, at TUNE_BANK_PATH/subgraph.json (CANN's layout), else
// ASCEND_CACHE_PATH/aoe_data/subgraph.json, else ~/Ascend/latest/data/aoe/custom/graph/<soc>/subgraph.json.
// Saving merges with what other processes saved meanwhile under a lock and renames into place.
class SubgraphBank {
 public:
  static std::string DefaultPath(const SocSpec& soc);
  // Missing is empty; records of another cost-model version are skipped; a malformed line is EG0011 naming
  // the file and line.
  static Result<SubgraphBank> Open(const std::string& path);
  const SubgraphRecord* Find(const std::string& key) const;
  void Put(SubgraphRecord r);
  Status Save();
  size_t size() const { return records_.size(); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::map<std::string, SubgraphRecord> records_;
  std::set<std::string> dirty_;
};

// atc's side: applies the bank's decision to every subgraph it has a record for; returns how many.
int ApplySubgraphBank(Graph& g, const std::vector<Subgraph>& subgraphs, const SubgraphBank& bank);

}  // namespace npu
