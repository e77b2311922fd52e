#include "cost/cost_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npu {
namespace {

// Constants of the model that no SoC spec carries. Each is an order-of-magnitude estimate [U] chosen from
// the physics it stands for, not fitted to a published row:
// - kKernelPrologueCycles: kernel entry on the scalar unit (read the tiling arguments from GM, compute the
//   block's addresses, set up the first flags): a GM round trip plus a few hundred scalar instructions.
// - kScalarCyclesPerTile: loop control and SetFlag/WaitFlag pairs per L0 (cube) or UB (vector) tile.
// - kMmadIssueCycles: fill/drain of the cube pipeline per mmad instruction (one per L0 tile).
// - kGmLatencyCycles: latency of the first GM read before any pipe can start (DRAM + NoC, ~0.3 µs at 1 GHz).
// - kAicpuBytesPerNs: AI CPU streaming through its caches from DRAM (A55-class cores, ~4 GB/s each).
constexpr double kKernelPrologueCycles = 1000;
constexpr double kScalarCyclesPerTile = 40;
constexpr double kMmadIssueCycles = 8;
constexpr double kGmLatencyCycles = 300;
constexpr double kAicpuBytesPerNs = 4;
constexpr double kAccumulatorBytes = 4;  // L0C holds fp32/int32 partial sums
// A vector repeat reads 8 blocks of 32 B (simulator.md §1.1): 256 B per cycle whatever the dtype.
constexpr double kVectorRepeatBytes = 256;

double CeilDiv(double a, double b) { return std::ceil(a / b); }
double RoundUp(double a, double b) { return CeilDiv(a, b) * b; }

// Bandwidths seen by one core while `active` cores stream at once (bytes per cycle).
struct Paths {
  double dram_read, l2_read, dram_write, l2_write, chip_dram;
  Paths(const SocSpec& soc, double active) {
    chip_dram = soc.memory_bandwidth_gbps * 1e3 / soc.freq_mhz;  // GB/s -> bytes per AI Core cycle
    double share = chip_dram / std::max(active, 1.0);
    dram_read = std::min(soc.rates.ddr, share);
    dram_write = std::min(soc.rates.ub_to_ddr, share);
    l2_read = soc.rates.l2_read;
    l2_write = soc.rates.ub_to_l2;
  }
};

// Bytes a core reads, split by where they come from.
struct Reads {
  double dram = 0, l2 = 0;
  void Add(double bytes, double hit) {
    dram += bytes * (1 - hit);
    l2 += bytes * hit;
  }
};

// Stages overlap across tiles, not within one: the first tile's upstream stages and the last tile's
// downstream ones are exposed (sum of one tile's stage times minus its slowest), after the first GM latency.
double PipelineFill(std::initializer_list<double> stage_totals, double tiles) {
  double sum = 0, slowest = 0;
  for (double s : stage_totals) {
    sum += s / std::max(tiles, 1.0);
    slowest = std::max(slowest, s / std::max(tiles, 1.0));
  }
  return kGmLatencyCycles + sum - slowest;
}

// `sharing`: the cores streaming from DRAM at once, this task's and other streams'.
void Finish(TaskCost& c, const SocSpec& soc, double body, double fill, double dram_bytes_core, const Paths& p,
            double sharing) {
  // All busy cores share the chip's DRAM bandwidth: no wave can beat its traffic over its share of it.
  double dram_floor = dram_bytes_core * sharing / p.chip_dram;
  double per_wave = std::max(body, dram_floor) + fill + kKernelPrologueCycles;
  c.core_cycles = per_wave * c.waves;
  c.exec_ns = c.core_cycles / soc.cycles_per_ns();
  c.duration_ns = c.exec_ns + soc.task_launch_ns;
  PipeCycles& q = c.pipes;
  for (double* v : {&q.cube, &q.vector, &q.scalar, &q.mte1, &q.mte2, &q.mte3, &q.fixpipe}) *v *= c.waves;
  q.mte2 = std::max(q.mte2, dram_floor * c.waves);  // waiting on shared DRAM is MTE2 busy time
  q.scalar += kKernelPrologueCycles * c.waves;
  double memory = std::max({q.mte2, q.mte3, q.mte1, q.fixpipe});
  double top = std::max({q.cube, q.vector, q.scalar, memory});
  c.bound = soc.task_launch_ns > c.exec_ns ? Bound::kLaunch
            : top == q.cube                ? Bound::kCube
            : top == q.vector              ? Bound::kVector
            : top == memory                ? Bound::kMemory
                                           : Bound::kScalar;
}

TaskCost CubeCost(const Work& w, const Tiling& t, const SocSpec& soc, const L2State& l2) {
  TaskCost c;
  c.block_dim = t.block_dim;
  double cores = soc.ai_cores, active = std::min<double>(t.block_dim, cores);
  c.waves = static_cast<int32_t>(CeilDiv(t.block_dim, cores));
  double fm = soc.cube_m, fn = soc.cube_n, fk = soc.CubeK(w.dtype), e = static_cast<double>(DTypeSize(w.dtype));
  double oe = static_cast<double>(DTypeSize(w.out_dtype));
  double batch_c = CeilDiv(static_cast<double>(w.batch), t.block_batch);
  double mp = RoundUp(CeilDiv(static_cast<double>(w.m), t.block_m), fm);
  double np = RoundUp(CeilDiv(static_cast<double>(w.n), t.block_n), fn);
  double kp = RoundUp(static_cast<double>(w.k), fk);
  double m_tiles = CeilDiv(mp, t.base_m), n_tiles = CeilDiv(np, t.base_n), k_tiles = CeilDiv(kp, t.base_k);
  double tiles = batch_c * m_tiles * n_tiles * k_tiles;
  PipeCycles& q = c.pipes;
  c.cube_fractals = batch_c * (mp / fm) * (np / fn) * (kp / fk);
  q.cube = c.cube_fractals + tiles * kMmadIssueCycles;
  // MTE1: each output tile pulls all of its K from L1 (A once per N tile, B once per M tile).
  double l0a_bytes = batch_c * mp * kp * e * n_tiles, l0b_bytes = batch_c * kp * np * e * m_tiles;
  q.mte1 = l0a_bytes / soc.rates.l1_to_l0a + l0b_bytes / soc.rates.l1_to_l0b;
  // MTE2: each core loads its share of A and B, again as often as the L1 staging and iteration order force.
  // DRAM supplies each operand's bytes once per task (what L2 does not already hold); every other load
  // (the same B columns on the cores that split M, reloads) is served by L2 when the operand fits in it.
  double share = batch_c / static_cast<double>(w.batch);
  double a_core = static_cast<double>(w.a_bytes) * share / t.block_m;
  double b_core = static_cast<double>(w.b_bytes) * (w.b_shared ? 1 : share) / t.block_n;
  bool full_k = double(t.step_k) * t.base_k >= kp;
  double a_loads = t.n_inner && full_k ? 1 : CeilDiv(n_tiles, t.step_n);
  double b_loads = !t.n_inner && full_k ? 1 : CeilDiv(m_tiles, t.step_m);
  // A B shared by all batches: the batch is the outermost loop, so a core loads its part of B for every batch it
  // runs, unless that part fits in half of L1 (the other half stages A's tiles) and stays there [U: the tiling's
  // full-load choice for B, not read from CANN's].
  if (w.b_shared) b_loads = kp * np * e <= static_cast<double>(soc.l1) / 2 ? 1 : b_loads * batch_c;
  double half_l2 = static_cast<double>(soc.l2) / 2;
  auto split = [&](double bytes_core, double loads, double operand, double hit, Reads& r) {
    double unique_dram = operand * (1 - hit) / t.block_dim;
    double rest = std::max(bytes_core * loads - unique_dram, 0.0);
    r.dram += unique_dram;
    r.Add(rest, operand <= half_l2 ? 1 : 0);
  };
  Reads r;
  split(a_core, a_loads, static_cast<double>(w.a_bytes), l2.input_hit, r);
  split(b_core, b_loads, static_cast<double>(w.b_bytes), l2.weight_hit, r);
  double residual_core = static_cast<double>(w.residual_bytes) / t.block_dim;  // read once, next to the output tile
  split(residual_core, 1, static_cast<double>(w.residual_bytes), l2.input_hit, r);
  Paths p(soc, active + l2.co_running_cores);
  q.mte2 = r.dram / p.dram_read + r.l2 / p.l2_read;
  // Out: L0C -> (fixpipe) -> GM; outputs that fit L2 stay there for the next task.
  double out_core = batch_c * mp * np * oe;
  bool out_in_l2 = static_cast<double>(w.out_bytes) <= half_l2;
  q.fixpipe = batch_c * mp * np * kAccumulatorBytes / soc.rates.l0c_to_ub;
  q.mte3 = out_core / (out_in_l2 ? p.l2_write : p.dram_write);
  q.vector = static_cast<double>(w.epilogue_ops) * out_core / kVectorRepeatBytes;
  q.scalar = tiles * kScalarCyclesPerTile;
  double inner = t.db_l0 ? std::max(q.mte1, q.cube) : q.mte1 + q.cube;
  double rest = std::max({inner, q.fixpipe, q.mte3, q.vector, q.scalar});
  double body = t.db_l1 ? std::max(q.mte2, rest) : q.mte2 + rest;
  double fill = PipelineFill({q.mte2, q.mte1, q.cube, q.fixpipe, q.mte3}, tiles);
  double dram_core = r.dram + (out_in_l2 ? 0 : out_core);
  // Dependent steps (an RNN's): each one is the GEMM above, started when the one before it has finished.
  const double steps = static_cast<double>(std::max<int64_t>(w.steps, 1));
  body *= steps, fill *= steps, dram_core *= steps, r.dram *= steps, r.l2 *= steps, out_core *= steps;
  l0a_bytes *= steps, l0b_bytes *= steps, c.cube_fractals *= steps;
  for (double* v : {&q.cube, &q.vector, &q.scalar, &q.mte1, &q.mte2, &q.mte3, &q.fixpipe}) *v *= steps;
  dram_core += l2.writeback_bytes / t.block_dim;
  c.gm_read_bytes = (r.dram + r.l2) * t.block_dim;
  c.l2_read_bytes = r.l2 * t.block_dim;
  c.gm_write_bytes = out_core * t.block_dim;
  c.l1_write_bytes = (r.dram + r.l2) * t.block_dim;
  c.l1_read_bytes = (l0a_bytes + l0b_bytes) * t.block_dim;
  c.vector_repeats = q.vector * t.block_dim;
  c.cube_fractals *= t.block_dim;
  Finish(c, soc, body, fill, dram_core, p, active + l2.co_running_cores);
  return c;
}

TaskCost VectorCost(const Work& w, const Tiling& t, const SocSpec& soc, const L2State& l2) {
  TaskCost c;
  c.block_dim = t.block_dim;
  double active = std::min<double>(t.block_dim, soc.ai_cores);
  c.waves = static_cast<int32_t>(CeilDiv(t.block_dim, soc.ai_cores));
  double e = static_cast<double>(std::max<size_t>(DTypeSize(w.dtype), 1));
  double elems_c = CeilDiv(static_cast<double>(w.elements), t.block_dim);
  PipeCycles& q = c.pipes;
  q.vector = CeilDiv(elems_c * e, kVectorRepeatBytes) * w.ops_per_element;
  double in_c = static_cast<double>(w.in_bytes) / t.block_dim, out_c = static_cast<double>(w.out_bytes) / t.block_dim;
  double weights_c = static_cast<double>(w.weight_bytes) / t.block_dim;
  Reads r;
  r.Add(in_c - weights_c, l2.input_hit);
  r.Add(weights_c, l2.weight_hit);
  Paths p(soc, active + l2.co_running_cores);
  bool out_in_l2 = static_cast<double>(w.out_bytes) <= static_cast<double>(soc.l2) / 2;
  q.mte2 = r.dram / p.dram_read + r.l2 / p.l2_read;
  q.mte3 = out_c / (out_in_l2 ? p.l2_write : p.dram_write);
  double tile_bytes = static_cast<double>(std::max<int64_t>(t.ub_tile, 1)) * e;
  double tiles = CeilDiv(std::max(in_c, out_c), tile_bytes);
  q.scalar = tiles * kScalarCyclesPerTile;
  double body = t.db_l1 ? std::max({q.mte2, q.vector, q.mte3, q.scalar}) : q.mte2 + q.vector + q.mte3 + q.scalar;
  double fill = PipelineFill({q.mte2, q.vector, q.mte3}, tiles);
  c.vector_repeats = q.vector * t.block_dim;
  c.gm_read_bytes = in_c * t.block_dim;
  c.l2_read_bytes = r.l2 * t.block_dim;
  c.gm_write_bytes = out_c * t.block_dim;
  c.ub_write_bytes = in_c * t.block_dim;
  c.ub_read_bytes = out_c * t.block_dim;
  Finish(c, soc, body, fill, r.dram + (out_in_l2 ? 0 : out_c) + l2.writeback_bytes / t.block_dim, p,
         active + l2.co_running_cores);
  return c;
}

TaskCost AicpuCost(const Work& w, const SocSpec& soc) {
  TaskCost c;
  // AI CPU kernels split their work across the AI CPU cores (ai_cpu_cnt) [U: CANN's AI CPU ops parallelise
  // by blocks; perfect scaling is the optimistic bound].
  double compute_ns = w.flops / (soc.aicpu_freq_mhz * 1e-3 * soc.aicpu_flops_per_cycle * std::max(soc.aicpu_cores, 1));
  double memory_ns = static_cast<double>(w.in_bytes + w.out_bytes) / kAicpuBytesPerNs;
  c.exec_ns = compute_ns + memory_ns;
  c.duration_ns = soc.aicpu_launch_ns + c.exec_ns;
  c.core_cycles = c.exec_ns * soc.aicpu_freq_mhz * 1e-3;
  c.gm_read_bytes = static_cast<double>(w.in_bytes);
  c.gm_write_bytes = static_cast<double>(w.out_bytes);
  c.bound = soc.aicpu_launch_ns > c.exec_ns ? Bound::kLaunch : memory_ns > compute_ns ? Bound::kMemory : Bound::kScalar;
  return c;
}

}  // namespace

std::string_view BoundName(Bound b) {
  switch (b) {
    case Bound::kCube: return "cube";
    case Bound::kVector: return "vector";
    case Bound::kMemory: return "memory";
    case Bound::kScalar: return "scalar";
    case Bound::kLaunch: return "launch";
  }
  return "?";
}

TaskCost EstimateTask(const Work& w, const Tiling& t, const SocSpec& soc, const L2State& l2) {
  switch (w.kind) {
    case WorkKind::kView: return TaskCost{};
    case WorkKind::kAiCpu: return AicpuCost(w, soc);
    case WorkKind::kCube:
      if (!CheckTiling(w, t, soc).ok()) break;
      return CubeCost(w, t, soc, l2);
    case WorkKind::kVector:
      if (!CheckTiling(w, t, soc).ok()) break;
      return VectorCost(w, t, soc, l2);
  }
  TaskCost bad;
  bad.duration_ns = bad.exec_ns = std::numeric_limits<double>::infinity();
  return bad;
}

}  // namespace npu
