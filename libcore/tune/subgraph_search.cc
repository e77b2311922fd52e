#include "tune/subgraph_search.h"

#include <algorithm>
#include <map>
#include <set>

#include "base/text.h"
#include "ir/node_attrs.h"

namespace npu {

uint64_t SubgraphChoices::space() const {
  uint64_t n = 1;
  for (size_t d = 0; d < dims(); ++d) n *= static_cast<uint64_t>(arity(d));
  return n;
}

SubgraphPlan SubgraphChoices::PlanAt(const std::vector<int>& at) const {
  SubgraphPlan p;
  for (size_t i = 0; i < passes.size(); ++i)
    if (at[i]) p.fusion_off.insert(passes[i]);
  p.pin_weights = at[passes.size()];
  p.bypass_outputs = at[passes.size() + 1];
  int streams = at[passes.size() + 2];
  p.single_stream = streams == 0;  // atc's default puts branches on streams: "one stream" must be said
  p.parallel_branches = streams > 0;
  p.core_split = streams > 1 ? std::max(1, cores * (streams - 1) / 4) : 0;
  return p;
}

std::vector<int> SubgraphChoices::PointAt(uint64_t i) const {
  std::vector<int> at(dims());
  for (size_t d = 0; d < dims(); ++d) at[d] = static_cast<int>(i % arity(d)), i /= arity(d);
  return at;
}

std::vector<SubgraphChoices> ChoicesOf(const Graph& imported, const std::vector<Subgraph>& subgraphs, const Graph& built,
                                       int32_t cores) {
  std::map<std::string, int> subgraph_of;
  for (const Subgraph& s : subgraphs)
    for (int k : s.nodes) subgraph_of[imported.nodes[k].name] = s.id;
  std::vector<std::set<std::string>> passes(subgraphs.size());
  for (const Node& n : built.nodes) {
    auto it = subgraph_of.find(n.name);
    if (it == subgraph_of.end() || !n.has_attr(kFusionPassesAttr)) continue;
    for (const auto& p : SplitFields(n.attr_string(kFusionPassesAttr), ',')) passes[it->second].insert(p);
  }
  std::vector<SubgraphChoices> out(subgraphs.size());
  for (size_t i = 0; i < subgraphs.size(); ++i) out[i].passes.assign(passes[i].begin(), passes[i].end()), out[i].cores = cores;
  return out;
}

Result<SubgraphSearchResult> SearchSubgraph(const PlanCost& cost, std::vector<SubgraphPlan> plans, size_t i,
                                            const SubgraphChoices& c, double builtin_ns, bool exhaustive) {
  SubgraphSearchResult r{SubgraphPlan{}, builtin_ns, 0, c.space()};
  std::vector<int> best_at(c.dims(), 0);
  std::map<std::string, double> seen = {{SubgraphPlan{}.ToString(), builtin_ns}};  // equal plans cost alike
  auto eval = [&](const std::vector<int>& at) -> Status {
    SubgraphPlan plan = c.PlanAt(at);
    std::string text = plan.ToString();
    if (seen.count(text)) return Status::Ok();
    plans[i] = plan;
    ++r.evaluations;
    NPU_ASSIGN_OR_RETURN(double ns, cost(plans));
    seen[text] = ns;
    if (ns < r.best_ns * (1 - 1e-12)) r.best_ns = ns, best_at = at, r.best = plan;
    return Status::Ok();
  };
  if (exhaustive || r.space <= kExhaustiveSubgraphPoints) {
    for (uint64_t p = 1; p < r.space; ++p) NPU_RETURN_IF_ERROR(eval(c.PointAt(p)));
  } else {
    for (bool improved = true; improved;) {  // coordinate descent: every move along one dimension, until none helps
      std::vector<int> from = best_at;
      for (size_t d = 0; d < c.dims(); ++d)
        for (int v = 0; v < c.arity(d); ++v) {
          if (v == from[d]) continue;
          std::vector<int> at = from;
          at[d] = v;
          NPU_RETURN_IF_ERROR(eval(at));
        }
      improved = best_at != from;
    }
  }
  return r;
}

}  // namespace npu
