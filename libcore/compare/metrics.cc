#include "compare/metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include "base/thread_pool.h"

namespace npu {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kEps32 = std::numeric_limits<float>::epsilon();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr size_t kBlock = 2048;      // decoded into L1-resident buffers
constexpr size_t kPiece = 1 << 20;   // unit of parallel work; fixed so results never depend on thread count

constexpr const char* kNames[kNumMetrics] = {
    "CosineSimilarity",   "MaxAbsoluteError",   "AccumulatedRelativeError", "RelativeEuclideanDistance",
    "KullbackLeiblerDivergence", "StandardDeviation", "MeanAbsoluteError", "RootMeanSquareError",
    "MaxRelativeError",   "MeanRelativeError"};

struct Side {
  double sum = 0, mean = 0, m2 = 0, min = kInf, max = -kInf;
  uint64_t count = 0, nan = 0, inf = 0;
  void Merge(const Side& o) {  // Chan et al.'s pairwise update of (count, mean, m2)
    if (o.count == 0) return;
    uint64_t n = count + o.count;
    double delta = o.mean - mean;
    mean += delta * static_cast<double>(o.count) / static_cast<double>(n);
    m2 += o.m2 + delta * delta * static_cast<double>(count) * static_cast<double>(o.count) / static_cast<double>(n);
    count = n;
    sum += o.sum;
    min = std::min(min, o.min);
    max = std::max(max, o.max);
    nan += o.nan;
    inf += o.inf;
  }
};

struct Sums {
  double sxy = 0, sxx = 0, syy = 0, sabs = 0, sd2 = 0, maxabs = 0, srel = 0, maxrel = 0;
  uint64_t nan_d = 0, nan_rel = 0;
  Side x, y;
  void Merge(const Sums& o) {
    sxy += o.sxy, sxx += o.sxx, syy += o.syy, sabs += o.sabs, sd2 += o.sd2, srel += o.srel;
    maxabs = std::max(maxabs, o.maxabs), maxrel = std::max(maxrel, o.maxrel);
    nan_d += o.nan_d, nan_rel += o.nan_rel;
    x.Merge(o.x), y.Merge(o.y);
  }
};

// Mean and M2 of one decoded block (a second sweep, but over data that is still in L1).
Side BlockSide(const double* v, size_t m, double sum, double min, double max, uint64_t nan, uint64_t inf) {
  Side s{sum, sum / static_cast<double>(m), 0, min, max, m, nan, inf};
  double m2 = 0, mean = s.mean;
#pragma omp simd reduction(+ : m2)
  for (size_t i = 0; i < m; ++i) m2 += (v[i] - mean) * (v[i] - mean);
  s.m2 = m2;
  return s;
}

void AccumulateBlock(const double* x, const double* y, size_t m, Sums& a) {
  double sxy = 0, sxx = 0, syy = 0, sabs = 0, sd2 = 0, srel = 0, sx = 0, sy = 0;
  double maxabs = 0, maxrel = 0, minx = kInf, maxx = -kInf, miny = kInf, maxy = -kInf;
  uint64_t nan_d = 0, nan_rel = 0, nanx = 0, infx = 0, nany = 0, infy = 0;
#pragma omp simd reduction(+ : sxy, sxx, syy, sabs, sd2, srel, sx, sy, nan_d, nan_rel, nanx, infx, nany, infy) \
    reduction(max : maxabs, maxrel, maxx, maxy) reduction(min : minx, miny)
  for (size_t i = 0; i < m; ++i) {
    double xv = x[i], yv = y[i], d = xv - yv, ad = std::fabs(d);
    sxy += xv * yv, sxx += xv * xv, syy += yv * yv, sabs += ad, sd2 += d * d, sx += xv, sy += yv;
    double rel = std::fabs(yv) > kEps ? std::fabs(xv / yv - 1.0) : 0.0;
    srel += rel;
    // NaN never wins a comparison, so NaNs are counted and applied after the loop.
    nan_d += d != d, nan_rel += rel != rel;
    maxabs = ad > maxabs ? ad : maxabs, maxrel = rel > maxrel ? rel : maxrel;
    nanx += xv != xv, nany += yv != yv;
    infx += std::fabs(xv) == kInf, infy += std::fabs(yv) == kInf;
    minx = xv < minx ? xv : minx, maxx = xv > maxx ? xv : maxx;
    miny = yv < miny ? yv : miny, maxy = yv > maxy ? yv : maxy;
  }
  Sums b;
  b.sxy = sxy, b.sxx = sxx, b.syy = syy, b.sabs = sabs, b.sd2 = sd2, b.srel = srel;
  b.maxabs = maxabs, b.maxrel = maxrel, b.nan_d = nan_d, b.nan_rel = nan_rel;
  b.x = BlockSide(x, m, sx, minx, maxx, nanx, infx);
  b.y = BlockSide(y, m, sy, miny, maxy, nany, infy);
  a.Merge(b);
}

// KL second pass: normalised sums and sum px*ln(px/py).
struct KlSums {
  double spx = 0, spy = 0, splog = 0;
};

struct KlRange {
  double minx, scalex, miny, scaley;  // p = (v - min) * scale, or v itself when scale == 0
};

void KlBlock(const double* x, const double* y, size_t m, const KlRange& r, KlSums& a) {
  double spx = 0, spy = 0, splog = 0;
  for (size_t i = 0; i < m; ++i) {
    double px = r.scalex != 0 ? (x[i] - r.minx) * r.scalex : x[i];
    double py = r.scaley != 0 ? (y[i] - r.miny) * r.scaley : y[i];
    px = px < kEps32 ? kEps32 : px;
    py = py < kEps32 ? kEps32 : py;
    spx += px, spy += py, splog += px * std::log(px / py);
  }
  a.spx += spx, a.spy += spy, a.splog += splog;
}

// Decodes [begin, end) of both tensors block by block and hands each block pair to fn.
template <class Fn>
void ForEachBlock(const TensorData& x, const TensorData& y, size_t begin, size_t end, Fn&& fn) {
  alignas(64) double bx[kBlock], by[kBlock];
  for (size_t b = begin; b < end; b += kBlock) {
    size_t m = std::min(kBlock, end - b);
    DecodeToDouble(*x.dtype, x.data + b * x.dtype->size, m, bx);
    DecodeToDouble(*y.dtype, y.data + b * y.dtype->size, m, by);
    fn(bx, by, m);
  }
}

// Runs fn over fixed pieces (in parallel when a pool is given) and merges the results in piece order.
template <class Acc, class Fn>
Acc OverPieces(size_t n, ThreadPool* pool, Fn&& piece) {
  size_t pieces = (n + kPiece - 1) / kPiece;
  std::vector<Acc> parts(pieces);
  auto run = [&](size_t b, size_t e) {
    for (size_t p = b; p < e; ++p) parts[p] = piece(p * kPiece, std::min(n, (p + 1) * kPiece));
  };
  if (pool && pieces > 1) pool->ParallelFor(pieces, 1, run);
  else run(0, pieces);
  Acc total;
  for (const Acc& p : parts) total.Merge(p);
  return total;
}

struct KlAcc : KlSums {
  void Merge(const KlSums& o) { spx += o.spx, spy += o.spy, splog += o.splog; }
};

double Cosine(const Sums& s, size_t n, std::string& msg) {
  if (n == 1) {
    msg = "This tensor is scalar.";
    return 1.0;
  }
  double nx = std::sqrt(s.sxx), ny = std::sqrt(s.syy);
  if (nx <= kEps && ny < kEps) return 1.0;
  if (std::sqrt(nx) <= kEps) {
    msg = "All the data is zero in the NPU dump data.";
    return kNaN;
  }
  if (std::sqrt(ny) <= kEps) {
    msg = "All the data is zero in the golden data.";
    return kNaN;
  }
  double c = s.sxy / (nx * ny);
  return c > 1.0 ? 1.0 : c;  // NaN stays NaN
}

double Kl(const TensorData& x, const TensorData& y, const Sums& s, ThreadPool* pool, std::string& msg) {
  if (s.x.nan || s.y.nan || s.x.inf || s.y.inf) {
    msg = "The data contains NaN or Inf.";
    return kNaN;
  }
  // No all-zero special case: each side is floored at float32 eps first (as CANN's msaccucmp does), so an
  // all-zero side is the uniform distribution and an all-zero pair compares equal (KL 0).
  KlRange r{s.x.min, s.x.max > s.x.min ? 1.0 / (s.x.max - s.x.min) : 0.0, s.y.min,
            s.y.max > s.y.min ? 1.0 / (s.y.max - s.y.min) : 0.0};
  KlAcc k = OverPieces<KlAcc>(x.n, pool, [&](size_t b, size_t e) {
    KlAcc a;
    ForEachBlock(x, y, b, e, [&](const double* bx, const double* by, size_t m) { KlBlock(bx, by, m, r, a); });
    return a;
  });
  // sum P ln(P/Q) with P = px/Spx, Q = py/Spy, rearranged so one log per element suffices.
  double kl = k.splog / k.spx + std::log(k.spy / k.spx);
  if (std::fabs(kl) < kEps) return 0.0;
  if (std::isinf(kl)) msg = "The golden data contains 0.";
  return kl;
}

}  // namespace

std::string_view MetricName(Metric m) { return kNames[static_cast<int>(m)]; }

std::optional<Metric> ParseMetric(std::string_view s) {
  for (int i = 0; i < kNumMetrics; ++i)
    if (s == kNames[i] || s == std::to_string(i)) return static_cast<Metric>(i);
  return std::nullopt;
}

MetricResults ComputeMetrics(const TensorData& x, const TensorData& y, std::span<const Metric> wanted,
                             ThreadPool* pool) {
  MetricResults r;
  r.value.fill(kNaN);
  size_t n = x.n;
  if (n == 0 || y.n != n) {
    for (Metric m : wanted) r.message[static_cast<int>(m)] = n == 0 ? "The tensor is empty." : "Element counts differ.";
    r.npu.mean = r.npu.std = r.golden.mean = r.golden.std = kNaN;
    return r;
  }
  Sums s = OverPieces<Sums>(n, pool, [&](size_t b, size_t e) {
    Sums a;
    ForEachBlock(x, y, b, e, [&](const double* bx, const double* by, size_t m) { AccumulateBlock(bx, by, m, a); });
    return a;
  });
  double dn = static_cast<double>(n);
  auto side = [&](const Side& v) {
    SideStats st{v.sum / dn, std::sqrt(v.m2 / dn), v.nan, v.inf};
    if (v.nan || v.inf) st.std = kNaN;
    return st;
  };
  r.npu = side(s.x);
  r.golden = side(s.y);
  constexpr int32_t kBool = static_cast<int32_t>(DType::kBool);
  bool boolean = x.dtype->code == kBool && y.dtype->code == kBool;
  for (Metric m : wanted) {
    int i = static_cast<int>(m);
    std::string& msg = r.message[i];
    if (boolean && m != Metric::kCosine && m != Metric::kRelEuclid) {
      msg = "Algorithm " + std::string(kNames[i]) + " does not support Boolean types.";
      continue;
    }
    double& v = r.value[i];
    switch (m) {
      case Metric::kCosine: v = Cosine(s, n, msg); break;
      case Metric::kMaxAbs: v = s.nan_d ? kNaN : s.maxabs; break;
      case Metric::kAccRel: v = s.srel; break;
      case Metric::kRelEuclid: v = std::sqrt(s.syy) <= kEps ? 0.0 : std::sqrt(s.sd2 / s.syy); break;
      case Metric::kKL: v = Kl(x, y, s, pool, msg); break;
      case Metric::kStd: v = 0; break;
      case Metric::kMeanAbs: v = s.sabs / dn; break;
      case Metric::kRmse: v = std::sqrt(s.sd2 / dn); break;
      case Metric::kMaxRel: v = s.nan_rel ? kNaN : s.maxrel; break;
      case Metric::kMeanRel: v = s.srel / dn; break;
    }
  }
  return r;
}

}  // namespace npu
