#include "cost/tiling.h"

#include <algorithm>
#include <sstream>

namespace npu {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t RoundUp(int64_t a, int64_t b) { return CeilDiv(a, b) * b; }
int64_t OperandSize(const Work& w) { return static_cast<int64_t>(DTypeSize(w.dtype)); }
constexpr int64_t kAccumulatorBytes = 4;  // L0C accumulates in fp32/int32
constexpr int64_t kUbBlock = 32;          // UB transfers are in 32-byte blocks (simulator.md §1.1)
// A vector op gets one more core per this many bytes streamed, up to all cores: below it the launch and
// the fill dominate and a split buys nothing [U: the order of a UB tile; shipped ops pick similar floors].
constexpr int64_t kVectorBytesPerCore = 16 * 1024;

int64_t L1Bytes(const Work& w, const Tiling& t) {
  int64_t e = OperandSize(w);
  int64_t a = int64_t{t.step_m} * t.base_m * t.step_k * t.base_k, b = int64_t{t.step_k} * t.base_k * t.step_n * t.base_n;
  return (a + b) * e * (t.db_l1 ? 2 : 1);
}

Tiling DefaultCube(const Work& w, const SocSpec& soc) {
  Tiling t;
  int64_t fk = std::max(soc.CubeK(w.dtype), 1), e = OperandSize(w);
  int64_t mp = RoundUp(w.m, soc.cube_m), np = RoundUp(w.n, soc.cube_n), kp = RoundUp(w.k, fk);
  // Core split: batches first; the remaining cores split M and N so that each core streams the fewest
  // operand bytes (splitting M makes every core read all of B; splitting N, all of A), using as many
  // cores as have a fractal of work.
  int64_t cores = soc.ai_cores;
  t.block_batch = static_cast<int32_t>(std::min<int64_t>(w.batch, cores));
  int64_t left = std::max<int64_t>(cores / t.block_batch, 1);
  double best = -1;
  for (int64_t bm = 1; bm <= std::min(left, mp / soc.cube_m); ++bm) {
    int64_t bn = std::min(left / bm, np / soc.cube_n);
    double traffic = static_cast<double>(w.a_bytes) / bm + static_cast<double>(w.b_bytes) / bn;
    double score = traffic / static_cast<double>(bm * bn);  // per-core bytes over cores used
    if (best < 0 || score < best) best = score, t.block_m = static_cast<int32_t>(bm), t.block_n = static_cast<int32_t>(bn);
  }
  t.block_dim = t.block_batch * t.block_m * t.block_n;
  int64_t mc = RoundUp(CeilDiv(mp, t.block_m), soc.cube_m), nc = RoundUp(CeilDiv(np, t.block_n), soc.cube_n);
  // L0 tile: up to 128 x 128 output (fits L0C double-buffered on every SoC here), K as deep as L0A/L0B allow.
  t.base_m = static_cast<int32_t>(std::min<int64_t>(mc, 128));
  t.base_n = static_cast<int32_t>(std::min<int64_t>(nc, 128));
  while (int64_t{t.base_m} * t.base_n * kAccumulatorBytes * 2 > soc.l0c && t.base_n > soc.cube_n) t.base_n /= 2;
  int64_t bk_a = soc.l0a / (2 * t.base_m * e), bk_b = soc.l0b / (2 * t.base_n * e);
  t.base_k = static_cast<int32_t>(std::max<int64_t>(fk, std::min({kp, bk_a / fk * fk, bk_b / fk * fk})));
  // L1: all of K when it fits (each operand then loads once per chunk of the other); otherwise staging
  // more of K saves nothing, so one K tile and L1 goes to M and N tiles (fewer GM reloads).
  int64_t k_tiles = CeilDiv(kp, t.base_k);
  t.step_k = static_cast<int32_t>(k_tiles);
  if (L1Bytes(w, t) > soc.l1) t.step_k = 1;
  int64_t m_tiles = CeilDiv(mc, t.base_m), n_tiles = CeilDiv(nc, t.base_n);
  for (bool grew = true; grew;) {
    grew = false;
    for (int32_t* step : {&t.step_m, &t.step_n}) {
      int64_t limit = step == &t.step_m ? m_tiles : n_tiles;
      if (*step * 2 > limit) continue;
      *step *= 2;
      if (L1Bytes(w, t) > soc.l1) *step /= 2;
      else grew = true;
    }
  }
  // Keep the operand that is larger in GM resident and stream the other one.
  t.n_inner = w.a_bytes >= w.b_bytes;
  return t;
}

Tiling DefaultVector(const Work& w, const SocSpec& soc) {
  Tiling t;
  int64_t bytes = std::max<int64_t>(w.in_bytes + w.out_bytes, 1);
  t.block_dim = w.whole_items > 0 ? ItemBlocks(w.whole_items, soc.ai_cores)
                                  : static_cast<int32_t>(std::clamp<int64_t>(CeilDiv(bytes, kVectorBytesPerCore), 1, soc.ai_cores));
  // UB split between the double-buffered input and output tiles.
  int64_t e = std::max<int64_t>(OperandSize(w), 1);
  int64_t per_buffer = soc.ub / 4 / kUbBlock * kUbBlock;
  t.ub_tile = std::max<int64_t>(per_buffer / e, 1);
  return t;
}

}  // namespace

// CANN's static AIPP kernel (the TBE aipp op's single-image path) gives each block whole images: one image per block,
// or batch / cores images per block when the batch divides evenly over the cores. At batch 1 it runs on one core.
int32_t ItemBlocks(int64_t items, int32_t cores) {
  return static_cast<int32_t>(cores > 0 && items % cores == 0 ? cores : std::max<int64_t>(items, 1));
}

Tiling DefaultTiling(const Work& w, const SocSpec& soc) {
  if (w.kind == WorkKind::kCube) return DefaultCube(w, soc);
  if (w.kind == WorkKind::kVector) return DefaultVector(w, soc);
  return Tiling{};
}

Status CheckTiling(const Work& w, const Tiling& t, const SocSpec& soc) {
  auto bad = [&](const std::string& why) { return Status::Error("E10001", "tiling", TilingToString(w, t), why); };
  if (t.block_dim < 1) return bad("block_dim must be at least 1");
  if (w.kind == WorkKind::kVector) {
    if (w.whole_items > 0 && t.block_dim != ItemBlocks(w.whole_items, soc.ai_cores))
      return bad("the kernel splits into whole images: block_dim " + std::to_string(ItemBlocks(w.whole_items, soc.ai_cores)));
    if (t.ub_tile < 1) return bad("the UB tile is empty");
    if (t.ub_tile * OperandSize(w) * (t.db_l1 ? 4 : 2) > soc.ub) return bad("input and output tiles exceed the UB");
    return Status::Ok();
  }
  if (w.kind != WorkKind::kCube) return Status::Ok();
  int64_t fk = soc.CubeK(w.dtype), e = OperandSize(w);
  if (fk <= 0) return bad("the cube of " + soc.name + " has no " + std::string(DTypeName(w.dtype)) + " mode");
  if (t.block_dim != t.block_batch * t.block_m * t.block_n) return bad("block_dim must equal block_batch * block_m * block_n");
  if (t.base_m % soc.cube_m || t.base_n % soc.cube_n || t.base_k % fk || t.base_m <= 0 || t.base_n <= 0 || t.base_k <= 0)
    return bad("base tiles must be positive multiples of the fractal");
  if (t.step_m < 1 || t.step_n < 1 || t.step_k < 1) return bad("steps must be at least 1");
  int db0 = t.db_l0 ? 2 : 1;
  if (int64_t{t.base_m} * t.base_k * e * db0 > soc.l0a) return bad("A tile exceeds L0A");
  if (int64_t{t.base_k} * t.base_n * e * db0 > soc.l0b) return bad("B tile exceeds L0B");
  if (int64_t{t.base_m} * t.base_n * kAccumulatorBytes * db0 > soc.l0c) return bad("C tile exceeds L0C");
  if (L1Bytes(w, t) > soc.l1) return bad("staged A and B tiles exceed L1");
  return Status::Ok();
}

std::string TilingToString(const Work& w, const Tiling& t) {
  std::ostringstream os;
  os << "block_dim=" << t.block_dim;
  if (w.kind == WorkKind::kCube)
    os << " split=" << t.block_batch << "x" << t.block_m << "x" << t.block_n << " base=" << t.base_m << "," << t.base_n << ","
       << t.base_k << " step=" << t.step_m << "," << t.step_n << "," << t.step_k << " db_l1=" << t.db_l1 << " db_l0=" << t.db_l0
       << " order=" << (t.n_inner ? "n_inner" : "m_inner");
  else if (w.kind == WorkKind::kVector)
    os << " ub_tile=" << t.ub_tile << " db=" << t.db_l1;
  return os.str();
}

std::string TilingKey(const Work& w) {
  std::ostringstream os;
  os << WorkKindName(w.kind) << ":" << DTypeName(w.dtype) << ">" << DTypeName(w.out_dtype);
  if (w.kind == WorkKind::kCube) os << ":b" << w.batch << (w.b_shared ? "s" : "") << "m" << w.m << "k" << w.k << "n" << w.n << "e" << w.epilogue_ops;
  else os << ":e" << w.elements << "x" << w.ops_per_element << ":in" << w.in_bytes << ":out" << w.out_bytes;
  return os.str();
}

}  // namespace npu
