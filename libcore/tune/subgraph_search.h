// Searching one subgraph's graph-level decisions (aoe --job_type=1): which fusion passes stay on there, L2
// policy, streams and core split. The search knows nothing of compiling: the caller's cost function gives the
// simulated time of the whole model for a set of plans (aoe compiles and schedules it), so the search is tested
// on any cost surface.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "tune/subgraph.h"

namespace npu {

// Above this many points the default search walks single-dimension moves from the best point (coordinate
// descent) instead of trying every combination; exhaustive search always tries them all.
constexpr uint64_t kExhaustiveSubgraphPoints = 64;

// One subgraph's decision space, one dimension per choice: each fusion pass that fused there (on, off),
// pinning weights (no, yes), bypassing outputs (no, yes), and streams: one stream, parallel branches on the
// whole chip, or parallel branches splitting the cores 1/4, 1/2 or 3/4 to the side branches.
struct SubgraphChoices {
  std::vector<std::string> passes;
  int32_t cores = 1;
  static constexpr int kStreamOptions = 5;
  size_t dims() const { return passes.size() + 3; }
  int arity(size_t d) const { return d < passes.size() + 2 ? 2 : kStreamOptions; }
  uint64_t space() const;
  SubgraphPlan PlanAt(const std::vector<int>& at) const;
  // The point of index `i` in mixed radix (dimension 0 fastest); point 0 is the built-in plan.
  std::vector<int> PointAt(uint64_t i) const;
};

// The fusion passes that fused ops of each subgraph in the built-in compile `built` of `imported` (a fused op
// belongs to the subgraph of the op it kept the name of).
std::vector<SubgraphChoices> ChoicesOf(const Graph& imported, const std::vector<Subgraph>& subgraphs, const Graph& built,
                                       int32_t cores);

struct SubgraphSearchResult {
  SubgraphPlan best;
  double best_ns = 0;
  uint64_t evaluations = 0, space = 0;
};

// The simulated time (ns) of the model with one plan per subgraph.
using PlanCost = std::function<Result<double>(const std::vector<SubgraphPlan>& plans)>;

// Searches subgraph `i`'s decisions with the others' plans held, from the built-in point (whose time is
// `builtin_ns`); equal plans are costed once.
Result<SubgraphSearchResult> SearchSubgraph(const PlanCost& cost, std::vector<SubgraphPlan> plans, size_t i,
                                            const SubgraphChoices& c, double builtin_ns, bool exhaustive);

}  // namespace npu
