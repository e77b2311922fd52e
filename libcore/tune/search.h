// Searching a task's tiling space on the cost model: exhaustive (the check) and guided (a random sample, then
// coordinate descent with joint moves for coupled choices from the best points and the built-in tiling, in a
// budget of 2% of the space), which finds the optimum without enumerating the space.
#pragma once
#include <cstdint>
#include <string_view>

#include "cost/cost_model.h"

namespace npu {

enum class SearchStrategy { kGuided, kExhaustive };

struct SearchResult {
  Tiling best;
  double best_ns = 0;       // task duration with `best`
  uint64_t evaluations = 0;  // cost-model calls made
  uint64_t space_size = 0;   // points in the space (valid or not)
};

// Whether a task's tiling has a choice worth searching (cube ops, and vector ops).
bool Tunable(const Work& w);
SearchResult SearchTiling(const Work& w, const SocSpec& soc, const L2State& l2, SearchStrategy strategy, const Tiling& start);

}  // namespace npu
