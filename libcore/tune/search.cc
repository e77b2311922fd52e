#include "tune/search.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace npu {
namespace {

// The axes of the space. Each is a list of values; a point picks one index per axis.
struct Space {
  std::vector<std::array<int32_t, 3>> splits;  // (block_batch, block_m, block_n)
  std::vector<int32_t> base_m, base_n, base_k, step_m, step_n, step_k;
  std::vector<int64_t> ub_tile;
  bool cube = false;
  uint64_t Size() const {
    if (!cube) return splits.size() * ub_tile.size() * 2;
    return splits.size() * base_m.size() * base_n.size() * base_k.size() * step_m.size() * step_n.size() * step_k.size() * 8;
  }
};

// Point = indices: 0 split, 1 base_m, 2 base_n, 3 base_k, 4 step_m, 5 step_n, 6 step_k, 7 db_l1, 8 db_l0, 9 order
// (vector: 0 split, 1 ub_tile, 7 db).
using Point = std::array<int, 10>;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

Space MakeSpace(const Work& w, const SocSpec& soc) {
  Space s;
  s.cube = w.kind == WorkKind::kCube;
  int64_t cores = soc.ai_cores;
  if (!s.cube) {
    if (w.whole_items > 0) s.splits.push_back({1, ItemBlocks(w.whole_items, static_cast<int32_t>(cores)), 1});  // fixed
    else
      for (int32_t b = 1; b <= cores; ++b) s.splits.push_back({1, b, 1});
    int64_t e = std::max<int64_t>(DTypeSize(w.dtype), 1);
    for (int64_t bytes = 1024; bytes * 4 <= soc.ub; bytes *= 2) s.ub_tile.push_back(bytes / e);
    return s;
  }
  int64_t fk = std::max(soc.CubeK(w.dtype), 1);
  int64_t mf = CeilDiv(w.m, soc.cube_m), nf = CeilDiv(w.n, soc.cube_n);
  int32_t max_bb = static_cast<int32_t>(std::min<int64_t>(w.batch, cores));
  std::vector<int32_t> batch_splits;  // powers of two, and all the batches one core each
  for (int32_t bb = 1; bb < max_bb; bb *= 2) batch_splits.push_back(bb);
  batch_splits.push_back(max_bb);
  for (int32_t bb : batch_splits)
    for (int32_t bm = 1; bm <= std::min<int64_t>(cores / bb, mf); ++bm)
      for (int32_t bn = 1; bn <= std::min<int64_t>(cores / (bb * bm), nf); ++bn) s.splits.push_back({bb, bm, bn});
  for (int32_t v : {16, 32, 64, 128, 256}) {
    s.base_m.push_back(v / 16 * soc.cube_m);
    s.base_n.push_back(v / 16 * soc.cube_n);
    s.base_k.push_back(static_cast<int32_t>(v / 16 * fk));
  }
  s.step_m = s.step_n = {1, 2, 4, 8};
  int32_t k_tiles_min = static_cast<int32_t>(CeilDiv(w.k, 256));  // all of K at the largest base_k
  s.step_k = {1, 2, 4, std::max(k_tiles_min, 8)};
  return s;
}

Tiling At(const Space& s, const Point& p, const Work& w, const SocSpec& soc) {
  Tiling t;
  auto [bb, bm, bn] = s.splits[p[0]];
  if (!s.cube) {
    t.block_dim = bm;
    t.ub_tile = s.ub_tile[p[1]];
    t.db_l1 = p[7];
    return t;
  }
  t.block_batch = bb, t.block_m = bm, t.block_n = bn, t.block_dim = bb * bm * bn;
  t.base_m = s.base_m[p[1]], t.base_n = s.base_n[p[2]], t.base_k = s.base_k[p[3]];
  t.step_m = s.step_m[p[4]], t.step_n = s.step_n[p[5]];
  // The last step_k value means "all of K" for whatever base_k is chosen.
  int64_t fk = std::max(soc.CubeK(w.dtype), 1);
  int64_t k_padded = CeilDiv(w.k, fk) * fk;
  t.step_k = p[6] + 1 == static_cast<int>(s.step_k.size()) ? static_cast<int32_t>(CeilDiv(k_padded, t.base_k)) : s.step_k[p[6]];
  t.db_l1 = p[7], t.db_l0 = p[8], t.n_inner = p[9];
  return t;
}

std::array<int, 10> Extents(const Space& s) {
  if (!s.cube) return {static_cast<int>(s.splits.size()), static_cast<int>(s.ub_tile.size()), 1, 1, 1, 1, 1, 2, 1, 1};
  return {static_cast<int>(s.splits.size()), static_cast<int>(s.base_m.size()), static_cast<int>(s.base_n.size()),
          static_cast<int>(s.base_k.size()), static_cast<int>(s.step_m.size()), static_cast<int>(s.step_n.size()),
          static_cast<int>(s.step_k.size()), 2, 2, 2};
}

class Evaluator {
 public:
  Evaluator(const Space& s, const Work& w, const SocSpec& soc, const L2State& l2) : s_(s), w_(w), soc_(soc), l2_(l2) {}
  double operator()(const Point& p) {
    ++count;
    return EstimateTask(w_, At(s_, p, w_, soc_), soc_, l2_).duration_ns;
  }
  uint64_t count = 0;

 private:
  const Space& s_;
  const Work& w_;
  const SocSpec& soc_;
  const L2State& l2_;
};

// The point of the space nearest to a tiling (the start of a guided search).
Point Nearest(const Space& s, const Tiling& t) {
  Point p{};
  auto near = [](const auto& values, int64_t v) {
    int best = 0;
    for (size_t i = 0; i < values.size(); ++i)
      if (std::llabs(static_cast<int64_t>(values[i]) - v) < std::llabs(static_cast<int64_t>(values[best]) - v)) best = static_cast<int>(i);
    return best;
  };
  for (size_t i = 0; i < s.splits.size(); ++i)
    if (s.splits[i][0] == t.block_batch && s.splits[i][1] == (s.cube ? t.block_m : t.block_dim) && s.splits[i][2] == t.block_n) p[0] = static_cast<int>(i);
  if (!s.cube) {
    p[1] = near(s.ub_tile, t.ub_tile);
    p[7] = t.db_l1;
    return p;
  }
  p[1] = near(s.base_m, t.base_m), p[2] = near(s.base_n, t.base_n), p[3] = near(s.base_k, t.base_k);
  p[4] = near(s.step_m, t.step_m), p[5] = near(s.step_n, t.step_n), p[6] = near(s.step_k, t.step_k);
  p[7] = t.db_l1, p[8] = t.db_l0, p[9] = t.n_inner;
  return p;
}

// Coordinate descent: every axis alone, then coupled pairs jointly (base M/N, step M/N, base K with step K,
// core split with iteration order, order with L0 double buffering), until a sweep improves nothing or the
// evaluation budget is spent.
Point Descend(Point p, double& best, Evaluator& eval, const std::array<int, 10>& ext, uint64_t budget) {
  static constexpr std::array<std::array<int, 2>, 5> kPairs = {{{1, 2}, {4, 5}, {3, 6}, {0, 9}, {8, 9}}};
  for (bool improved = true; improved && eval.count < budget;) {
    improved = false;
    for (int axis = 0; axis < 10; ++axis)
      for (int v = 0; v < ext[axis]; ++v) {
        if (v == p[axis]) continue;
        Point q = p;
        q[axis] = v;
        if (double c = eval(q); c < best) best = c, p = q, improved = true;
      }
    for (auto [a, b] : kPairs)
      for (int va = 0; va < ext[a]; ++va)
        for (int vb = 0; vb < ext[b]; ++vb) {
          Point q = p;
          q[a] = va, q[b] = vb;
          if (q == p) continue;
          if (double c = eval(q); c < best) best = c, p = q, improved = true;
        }
  }
  return p;
}

}  // namespace

bool Tunable(const Work& w) { return w.kind == WorkKind::kCube || w.kind == WorkKind::kVector; }

SearchResult SearchTiling(const Work& w, const SocSpec& soc, const L2State& l2, SearchStrategy strategy, const Tiling& start) {
  SearchResult r;
  r.best = start;
  r.best_ns = EstimateTask(w, start, soc, l2).duration_ns;
  if (!Tunable(w)) return r;
  Space s = MakeSpace(w, soc);
  r.space_size = s.Size();
  if (s.splits.empty()) return r;
  Evaluator eval(s, w, soc, l2);
  std::array<int, 10> ext = Extents(s);
  Point best_point{};
  double best = std::numeric_limits<double>::infinity();
  if (strategy == SearchStrategy::kExhaustive || r.space_size <= 1000) {  // small spaces: just enumerate
    Point p{};
    for (;;) {
      if (double c = eval(p); c < best) best = c, best_point = p;
      int axis = 0;
      while (axis < 10 && ++p[axis] == ext[axis]) p[axis++] = 0;
      if (axis == 10) break;
    }
  } else {
    // A budget of 2% of the space: a quarter goes to a random sample (coupled axes make single-axis moves
    // get stuck), the rest to descending from the best sampled points and the built-in tiling.
    uint64_t budget = std::max<uint64_t>(2000, r.space_size / 50);
    std::mt19937_64 rng(r.space_size * 2654435761u + static_cast<uint64_t>(w.m * 31 + w.k * 17 + w.n));
    std::vector<std::pair<double, Point>> seeds;
    Point built_in = Nearest(s, start);
    seeds.emplace_back(eval(built_in), built_in);
    while (eval.count < budget / 4) {
      Point p;
      for (int axis = 0; axis < 10; ++axis) p[axis] = static_cast<int>(rng() % static_cast<uint64_t>(ext[axis]));
      if (double c = eval(p); std::isfinite(c)) seeds.emplace_back(c, p);
    }
    std::sort(seeds.begin(), seeds.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    constexpr size_t kDescents = 4;
    for (size_t i = 0; i < seeds.size() && i < kDescents && eval.count < budget; ++i) {
      auto [c, p] = seeds[i];
      p = Descend(p, c, eval, ext, budget);
      if (c < best) best = c, best_point = p;
    }
    if (seeds[0].first < best) best = seeds[0].first, best_point = seeds[0].second;
  }
  r.evaluations = eval.count;
  if (best < r.best_ns) {
    r.best = At(s, best_point, w, soc);
    r.best_ns = best;
  }
  return r;
}

}  // namespace npu
