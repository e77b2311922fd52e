// Reductions (ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp), ArgMax/ArgMin, TopK, CumSum.
// Reductions move the reduced axes last (one transpose) and then reduce contiguous rows in double.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include "ir/node_attrs.h"
#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "ops/reduce.h"

namespace npu {
namespace {

enum class Reduce { kMean, kSum, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// The max or min of a row, or its first NaN if it holds one. The row runs as kLanes interleaved running results,
// with a NaN flag per lane, so that the loop vectorises: the one-value loop, which stopped at a NaN, took 13% of
// PointNet's time in its ReduceMax over 2500 points. Which of two equal values (+0 and -0) wins may differ from
// the one-value loop; no other result does.
template <Reduce kOp, class T>
T ExtremeOfRow(const T* x, int64_t n) {
  constexpr int64_t kLanes = 16;
  using Flag = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;  // as wide as T: one vector per compare
  auto better = [](T a, T b) { return kOp == Reduce::kMax ? a > b : a < b; };
  if (n == 0) return kOp == Reduce::kMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  T m = x[0];
  Flag nan = Flag(x[0] != x[0]);
  int64_t i = 1;
  if (n >= kLanes) {
    std::array<T, kLanes> lane;
    std::array<Flag, kLanes> lane_nan{};
    std::copy(x, x + kLanes, lane.begin());
    for (i = kLanes; i + kLanes <= n; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) {
        const T v = x[i + j];
        lane[j] = better(v, lane[j]) ? v : lane[j];
        if constexpr (std::is_floating_point_v<T>) lane_nan[j] |= Flag(v != v);
      }
    m = lane[0];
    for (int64_t j = 0; j < kLanes; ++j) {
      m = better(lane[j], m) ? lane[j] : m;
      nan |= lane_nan[j] | Flag(lane[j] != lane[j]);
    }
  }
  for (; i < n; ++i) {
    m = better(x[i], m) ? x[i] : m;
    if constexpr (std::is_floating_point_v<T>) nan |= Flag(x[i] != x[i]);
  }
  if (nan) return *std::find_if(x, x + n, [](T v) { return v != v; });
  return m;
}

template <Reduce kOp, class T>
T ReduceRow(const T* x, int64_t n) {
  double acc;
  if constexpr (kOp == Reduce::kMax || kOp == Reduce::kMin) {
    return ExtremeOfRow<kOp>(x, n);
  } else if constexpr (kOp == Reduce::kProd) {
    acc = 1;
    for (int64_t i = 0; i < n; ++i) acc *= x[i];
  } else if constexpr (kOp == Reduce::kLogSumExp) {
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, double(x[i]));
    acc = 0;
    for (int64_t i = 0; i < n; ++i) acc += std::exp(double(x[i]) - mx);
    return static_cast<T>(std::log(acc) + mx);
  } else if constexpr (kOp == Reduce::kMean) {  // in the global pools' parts (MeanParts): their bits
    const int64_t parts = MeanParts(n);
    acc = 0;
    for (int64_t part = 0; part < parts; ++part) {
      double sum = 0;
      for (int64_t i = MeanPartStart(n, part, parts); i < MeanPartStart(n, part + 1, parts); ++i) sum += static_cast<double>(x[i]);
      acc = part == 0 ? sum : acc + sum;
    }
    acc = n ? acc / static_cast<double>(n) : std::nan("");
  } else {
    acc = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = x[i];
      if constexpr (kOp == Reduce::kL1) acc += std::abs(v);
      else if constexpr (kOp == Reduce::kL2 || kOp == Reduce::kSumSquare) acc += v * v;
      else acc += v;
    }
    if constexpr (kOp == Reduce::kL2) acc = std::sqrt(acc);
    if constexpr (kOp == Reduce::kLogSum) acc = std::log(acc);
  }
  if constexpr (std::is_integral_v<T>) return static_cast<T>(std::llround(acc));
  else return static_cast<T>(acc);
}

// Whether `red` reduces exactly the pixels of an (N, C, H, W) tensor: torch's x.mean([2, 3]), a global average pool.
bool ReducesPixelsOnly(const std::vector<bool>& red) { return red.size() == 4 && !red[0] && !red[1] && red[2] && red[3]; }

template <Reduce kOp>
Status ReduceKernel(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(auto red, ReducedAxes(c.node, c.in(0).rank(), AxesIsInput(c.node) && c.has(1) ? &c.in(1) : nullptr));
  bool keep = c.node.attr_int("keepdims", 1) != 0;
  if (c.in(0).channels_last) {  // only ReduceMean is registered as taking channels-last maps (RegisterReduceKernels)
    if (kOp == Reduce::kMean && ReducesPixelsOnly(red)) {
      Tensor y = Tensor::Empty(c.in(0).dtype(), ReducedShape(c.in(0).shape(), red, keep));
      if (MeanOverPixelsOfChannelsLast(c.in(0), y, c.pool)) {
        c.outputs[0] = std::move(y);
        return Status::Ok();
      }
    }
    c.inputs[0] = ToChannelsFirst(c.in(0), c.pool);
  }
  const Tensor& x = c.in(0);
  std::vector<int64_t> perm;
  Shape kept;
  int64_t inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!red[d]) perm.push_back(d), kept.push_back(x.shape()[d]);
  for (int64_t d = 0; d < x.rank(); ++d)
    if (red[d]) perm.push_back(d), inner *= x.shape()[d];
  Tensor t = TransposeTensor(x, perm, c.pool);
  const int64_t outer = NumElements(kept);
  Tensor y = Tensor::Empty(x.dtype(), ReducedShape(x.shape(), red, keep));
  bool ok = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      const T* src = t.data<T>();
      T* dst = y.mutable_data<T>();
      c.pool.ParallelFor(static_cast<size_t>(outer), std::max<int64_t>(1, 8192 / std::max<int64_t>(1, inner)), [&](size_t b, size_t e) {
        for (size_t o = b; o < e; ++o) dst[o] = ReduceRow<kOp>(src + o * inner, inner);
      });
    }
  });
  if (!ok || x.dtype() == DType::kBool) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// [outer, n, inner] view of a tensor around `axis`.
struct AxisView {
  int64_t outer = 1, n = 1, inner = 1;
};
AxisView ViewAround(const Shape& s, int64_t axis) {
  AxisView v;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) (d < axis ? v.outer : d == axis ? v.n : v.inner) *= s[d];
  return v;
}

template <bool kMax>
Status ArgKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), x.rank());
  if (axis < 0 || axis >= x.rank()) return c.Fail("axis out of range");
  bool keep = c.node.attr_int("keepdims", 1) != 0, last = c.node.attr_int("select_last_index", 0) != 0;
  std::vector<bool> red(x.rank(), false);
  red[axis] = true;
  AxisView v = ViewAround(x.shape(), axis);
  Tensor y = Tensor::Empty(DType::kI64, ReducedShape(x.shape(), red, keep));
  bool ok = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        int64_t best = 0;
        for (int64_t k = 1; k < v.n; ++k) {
          T a = p[(o * v.n + k) * v.inner + i], b = p[(o * v.n + best) * v.inner + i];
          bool better = kMax ? (last ? a >= b : a > b) : (last ? a <= b : a < b);
          if (better) best = k;
        }
        y.mutable_data<int64_t>()[o * v.inner + i] = best;
      }
  });
  if (!ok) return c.Fail("dtype not supported");
  // TF's output_type int32 (CANN's ArgMaxD dtype attr) narrows the indices; ONNX's are int64.
  const auto out_type = static_cast<DType>(c.node.attr_int(kArgOutputType, static_cast<int64_t>(DType::kI64)));
  c.outputs[0] = out_type == DType::kI64 ? std::move(y) : CastTensor(y, out_type);
  return Status::Ok();
}

Status TopKKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t k = c.node.opset < 10 ? c.node.attr_int("k", 0) : c.in(1).ToInt64Vector().at(0);
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", -1), x.rank());
  if (axis < 0 || axis >= x.rank()) return c.Fail("axis out of range");
  if (k < 0 || k > x.shape()[axis]) return c.Fail("k = " + std::to_string(k) + " is outside [0, " + std::to_string(x.shape()[axis]) + "]");
  bool largest = c.node.attr_int("largest", 1) != 0;
  AxisView v = ViewAround(x.shape(), axis);
  Shape os = x.shape();
  os[axis] = k;
  Tensor vals = Tensor::Empty(x.dtype(), os), idx = Tensor::Empty(DType::kI64, os);
  bool ok = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = x.data<T>();
    std::vector<int64_t> order(static_cast<size_t>(v.n));
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t i = 0; i < v.inner; ++i) {
        auto at = [&](int64_t j) { return p[(o * v.n + j) * v.inner + i]; };
        std::iota(order.begin(), order.end(), 0);
        // Ties keep the lower index first, as ONNX requires.
        std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) {
          return at(a) == at(b) ? a < b : (largest ? at(a) > at(b) : at(a) < at(b));
        });
        for (int64_t j = 0; j < k; ++j) {
          vals.mutable_data<T>()[(o * k + j) * v.inner + i] = at(order[j]);
          idx.mutable_data<int64_t>()[(o * k + j) * v.inner + i] = order[j];
        }
      }
  });
  if (!ok) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(vals);
  c.outputs[1] = std::move(idx);
  return Status::Ok();
}

Status CumSumKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = NormalizeAxis(c.in(1).ToInt64Vector().at(0), x.rank());
  if (axis < 0 || axis >= x.rank()) return c.Fail("axis out of range");
  bool exclusive = c.node.attr_int("exclusive", 0) != 0, reverse = c.node.attr_int("reverse", 0) != 0;
  AxisView v = ViewAround(x.shape(), axis);
  Tensor y = Tensor::Empty(x.dtype(), x.shape());
  bool ok = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          T acc = 0;
          for (int64_t s = 0; s < v.n; ++s) {
            int64_t j = reverse ? v.n - 1 - s : s;
            int64_t off = (o * v.n + j) * v.inner + i;
            T cur = x.data<T>()[off];
            if (exclusive) y.mutable_data<T>()[off] = acc, acc += cur;
            else acc += cur, y.mutable_data<T>()[off] = acc;
          }
        }
    }
  });
  if (!ok || x.dtype() == DType::kBool) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ReduceMean takes channels-last maps: over (H, W) it is a global average pool, without converting the map first.
template <Reduce kOp>
void RegisterReduce(const char* name) {
  RegisterKernel(name, {.fn = ReduceKernel<kOp>, .halves = Halves::kWiden, .channels_last = kOp == Reduce::kMean});
}

}  // namespace

void RegisterReduceKernels() {
  RegisterReduce<Reduce::kMean>("ReduceMean");
  RegisterReduce<Reduce::kSum>("ReduceSum");
  RegisterReduce<Reduce::kMax>("ReduceMax");
  RegisterReduce<Reduce::kMin>("ReduceMin");
  RegisterReduce<Reduce::kProd>("ReduceProd");
  RegisterReduce<Reduce::kL1>("ReduceL1");
  RegisterReduce<Reduce::kL2>("ReduceL2");
  RegisterReduce<Reduce::kSumSquare>("ReduceSumSquare");
  RegisterReduce<Reduce::kLogSum>("ReduceLogSum");
  RegisterReduce<Reduce::kLogSumExp>("ReduceLogSumExp");
  RegisterKernel("ArgMax", {.fn = ArgKernel<true>, .halves = Halves::kWiden});
  RegisterKernel("ArgMin", {.fn = ArgKernel<false>, .halves = Halves::kWiden});
  RegisterKernel("TopK", {.fn = TopKKernel, .halves = Halves::kWiden});
  RegisterKernel("CumSum", {.fn = CumSumKernel, .halves = Halves::kWiden});
}

}  // namespace npu
