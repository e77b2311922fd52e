// The simulator's clock: cycles of one task from its pipes. One function (EstimateTask) feeds the runtime's
// simulated clock, profiling and aoe, so they can never disagree. Every constant cites its source in
// cost_model.cc; SoC figures come from the SoC spec.
#pragma once
#include <cstdint>

#include "cost/tiling.h"
#include "cost/work.h"
#include "soc/soc_spec.h"

namespace npu {

// Busy cycles per pipe on the slowest core, summed over its waves (the PipeUtilization counters).
struct PipeCycles {
  double cube = 0, vector = 0, scalar = 0, mte1 = 0, mte2 = 0, mte3 = 0, fixpipe = 0;
};

enum class Bound : uint8_t { kCube, kVector, kMemory, kScalar, kLaunch };
std::string_view BoundName(Bound b);

// Where the task's operands live when it starts (from the runtime's L2 model): fraction of A/inputs and of
// B/weights that hit in L2 (0 = all from DRAM); and the AI cores tasks of other streams keep busy then, which
// share the chip's DRAM bandwidth with it; and the dirty bytes its accesses push out of L2, which it writes back
// to DRAM on its own share of the bandwidth.
struct L2State {
  double input_hit = 0, weight_hit = 0;
  double co_running_cores = 0;
  double writeback_bytes = 0;
};

struct TaskCost {
  double duration_ns = 0;  // launch + execution, what the stream's clock advances by
  double exec_ns = 0;      // on the cores, first block start to last block end
  double core_cycles = 0;  // the slowest core's total cycles (aicore_time in cycles)
  int32_t block_dim = 1;
  int32_t waves = 1;
  PipeCycles pipes;
  double gm_read_bytes = 0, gm_write_bytes = 0, l2_read_bytes = 0;  // whole task
  double l1_read_bytes = 0, l1_write_bytes = 0, ub_read_bytes = 0, ub_write_bytes = 0;
  double cube_fractals = 0, vector_repeats = 0;
  Bound bound = Bound::kLaunch;
};

// Cost of `w` run with tiling `t` on `soc`. An invalid tiling (CheckTiling) costs +inf.
TaskCost EstimateTask(const Work& w, const Tiling& t, const SocSpec& soc, const L2State& l2 = {});
// Version of the model's formulas; the tune bank keys on it, so a changed model never reuses stale results.
constexpr int kCostModelVersion = 2;  // 2: L2 write-back

}  // namespace npu
