// The ten msaccucmp comparison metrics, computed for a tensor pair in one fused pass over the data
// (a second pass only for KullbackLeiblerDivergence) with fp64 accumulation. Definitions follow the
// reference notes (x = NPU, y = golden, eps = fp64 machine epsilon):
//   CosineSimilarity          sum(x*y)/(|x||y|), capped at 1; 1 for scalars and for two all-zero tensors,
//                             NaN when only one side is all zero (the sqrt(|x|) <= eps test is kept)
//   MaxAbsoluteError          max|x-y|
//   AccumulatedRelativeError  sum over |y|>eps of |x/y - 1|
//   RelativeEuclideanDistance sqrt(sum (x-y)^2 / sum y^2), 0 when sqrt(sum y^2) <= eps
//   KullbackLeiblerDivergence min-max normalise each side, floor at fp32 eps, normalise to sum 1,
//                             sum P ln(P/Q); |KL| < eps -> 0
//   StandardDeviation         (mean; population std) of each side
//   MeanAbsoluteError         mean|x-y|
//   RootMeanSquareError       sqrt(mean (x-y)^2)
//   MaxRelativeError          max of (|x/y - 1| if |y| > eps else 0)
//   MeanRelativeError         mean of the same, zeros counted
// Every element is widened to fp64 exactly (msaccucmp casts to fp32 first, which loses fp64 golden data).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "dump/dump_file.h"

namespace npu {

class ThreadPool;

enum class Metric {
  kCosine, kMaxAbs, kAccRel, kRelEuclid, kKL, kStd, kMeanAbs, kRmse, kMaxRel, kMeanRel,
};
constexpr int kNumMetrics = 10;
std::string_view MetricName(Metric m);
// "CosineSimilarity" or its index "0".."9".
std::optional<Metric> ParseMetric(std::string_view s);

// n elements of one dump dtype, laid out contiguously.
struct TensorData {
  const GeType* dtype = nullptr;
  const std::byte* data = nullptr;
  size_t n = 0;
};

struct SideStats {
  double mean = 0, std = 0;
  uint64_t nan = 0, inf = 0;
};

struct MetricResults {
  std::array<double, kNumMetrics> value{};  // NaN where undefined; kStd uses the SideStats
  std::array<std::string, kNumMetrics> message;
  SideStats npu, golden;
};

// `wanted` selects the metrics to compute (only those are filled in). With a pool, tensors above a
// few million elements are split across its threads.
MetricResults ComputeMetrics(const TensorData& x, const TensorData& y, std::span<const Metric> wanted,
                             ThreadPool* pool = nullptr);

}  // namespace npu
