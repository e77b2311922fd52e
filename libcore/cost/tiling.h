// A task's tiling: how its work is split across cores and staged through L1/L0/UB. The built-in heuristic
// (DefaultTiling) is what a shipped op would pick; aoe searches the same space on the cost model.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"
#include "cost/work.h"
#include "soc/soc_spec.h"

namespace npu {

struct Tiling {
  // Core split (block_dim = block_batch * block_m * block_n for cube ops, block_dim for vector ops).
  int32_t block_dim = 1, block_batch = 1, block_m = 1, block_n = 1;
  // Cube: the L0 tile (base) and how many base tiles L1 stages per load (step); K is innermost.
  int32_t base_m = 16, base_n = 16, base_k = 16;
  int32_t step_m = 1, step_n = 1, step_k = 1;
  bool db_l1 = true, db_l0 = true;  // double buffering of L1 (MTE2 overlaps compute) and L0 (MTE1 overlaps cube)
  bool n_inner = true;              // iteration order: N inside M (A stays in L1) or M inside N (B stays)
  // Vector: elements per UB tile (per buffer).
  int64_t ub_tile = 0;
  bool operator==(const Tiling&) const = default;
};

// What a shipped op would pick for this work on this SoC.
Tiling DefaultTiling(const Work& w, const SocSpec& soc);
// A tiling the SoC can hold (buffer capacities with the double-buffer factor, fractal multiples, core split).
Status CheckTiling(const Work& w, const Tiling& t, const SocSpec& soc);
// Blocks of a kernel that splits `items` whole items (images) over `cores`.
int32_t ItemBlocks(int64_t items, int32_t cores);
// "bm=128 bn=128 bk=64 ..." for --mode=1 JSON, logs and profiles.
std::string TilingToString(const Work& w, const Tiling& t);
// A stable key of the work for the tune bank and aoe (op shape class, dtype, SoC).
std::string TilingKey(const Work& w);

}  // namespace npu
