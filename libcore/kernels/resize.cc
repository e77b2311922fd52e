// Resize (opsets 10-13) and Upsample: nearest, linear and cubic over any rank and numeric dtype, separable per dim.
// Each output coordinate maps to a few (index, weight) taps per dim; the kernel sums over their product.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <type_traits>

#include "kernels/kernel_util.h"
#include "ops/resize.h"

namespace npu {
namespace {

struct Tap {
  int64_t index;
  double weight;
};

std::string TransformMode(const Node& n) {
  if (n.op_type == "Upsample" || n.opset < 11) return "asymmetric";
  return n.attr_string("coordinate_transformation_mode", "half_pixel");
}

double Nearest(double x, const std::string& mode) {
  if (mode == "floor") return std::floor(x);
  if (mode == "ceil") return std::ceil(x);
  double f = std::floor(x);
  if (x - f == 0.5) return mode == "round_prefer_ceil" ? f + 1 : f;
  return std::round(x);
}

double CubicWeight(double t, double a) {
  t = std::abs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0;
}

// Taps for every output position of one dim; `outside` marks positions that take extrapolation_value.
void DimTaps(const Node& n, int64_t in_len, int64_t out_len, double scale, double roi_s, double roi_e,
             std::vector<std::vector<Tap>>& taps, std::vector<bool>& outside) {
  std::string mode = n.attr_string("mode", "nearest"), ct = TransformMode(n);
  std::string nearest_mode = n.op_type == "Upsample" || n.opset < 11 ? "floor" : n.attr_string("nearest_mode", "round_prefer_floor");
  if (n.op_type == "Resize" && n.opset == 10 && mode == "nearest") nearest_mode = "floor";
  double a = n.attr_float("cubic_coeff_a", -0.75f);
  bool exclude = n.attr_int("exclude_outside", 0) != 0;
  taps.assign(static_cast<size_t>(out_len), {});
  outside.assign(static_cast<size_t>(out_len), false);
  // The ONNX reference uses the unrounded resized length (in_len * scale) in these formulas.
  const double resized = static_cast<double>(in_len) * scale;
  for (int64_t o = 0; o < out_len; ++o) {
    double x;
    if (ct == "half_pixel") x = (o + 0.5) / scale - 0.5;
    else if (ct == "pytorch_half_pixel") x = resized > 1 ? (o + 0.5) / scale - 0.5 : 0;
    else if (ct == "align_corners") x = resized == 1 ? 0 : o * static_cast<double>(in_len - 1) / (resized - 1);
    else if (ct == "tf_half_pixel_for_nearest") x = (o + 0.5) / scale;
    else if (ct == "tf_crop_and_resize") {
      x = out_len > 1 ? roi_s * (in_len - 1) + o * (roi_e - roi_s) * (in_len - 1) / static_cast<double>(out_len - 1)
                      : 0.5 * (roi_s + roi_e) * (in_len - 1);
      if (x < 0 || x > in_len - 1) outside[o] = true;
    } else x = o / scale;  // asymmetric
    auto& t = taps[o];
    auto clampi = [&](int64_t i) { return std::clamp<int64_t>(i, 0, in_len - 1); };
    if (mode == "nearest") {
      t.push_back({clampi(static_cast<int64_t>(Nearest(x, nearest_mode))), 1.0});
    } else if (mode == "linear") {
      double xc = std::clamp(x, 0.0, static_cast<double>(in_len - 1));
      int64_t i0 = static_cast<int64_t>(std::floor(xc));
      double w = xc - i0;
      t.push_back({i0, 1 - w});
      if (w > 0) t.push_back({clampi(i0 + 1), w});
    } else {  // cubic
      int64_t i0 = static_cast<int64_t>(std::floor(x));
      double frac = x - i0, total = 0;
      for (int64_t k = -1; k <= 2; ++k) {
        int64_t i = i0 + k;
        double w = CubicWeight(k - frac, a);
        if (exclude && (i < 0 || i >= in_len)) w = 0;
        t.push_back({clampi(i), w});
        total += w;
      }
      if (exclude && total != 0)
        for (auto& tp : t) tp.weight /= total;
    }
  }
}

// A tap sum (accumulated in double) stored as T: integer types round to nearest and saturate.
template <class T>
T StoreAs(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    double r = std::nearbyint(v);
    r = std::clamp(r, static_cast<double>(std::numeric_limits<T>::lowest()), static_cast<double>(std::numeric_limits<T>::max()));
    return static_cast<T>(r);
  }
}

// Whether dim d of the resize is the identity: every output position takes its own input position whole.
bool IdentityDim(const std::vector<std::vector<Tap>>& taps, const std::vector<bool>& outside) {
  for (size_t o = 0; o < taps.size(); ++o)
    if (outside[o] || taps[o].size() != 1 || taps[o][0].index != static_cast<int64_t>(o) || taps[o][0].weight != 1.0) return false;
  return true;
}

// Four doubles in one vector register (GCC's and clang's vector extension: AVX's ymm, two SSE registers elsewhere).
using Doubles4 = double __attribute__((vector_size(4 * sizeof(double))));
using Floats4 = float __attribute__((vector_size(4 * sizeof(float))));
constexpr size_t kRunLanes = 4;
constexpr size_t kMaxRunChunks = 4;  // registers of sums per pass over a run's taps

// The taps of the W dim by column: tap j of output x at [j * ow + x]. An output with fewer taps than the most
// (linear mode gives one where the position falls on an input) is padded with taps of weight 0 on its first
// input: each adds 0 * v to a sum that is never -0 (it starts at +0), which changes nothing while v is finite.
struct TapColumns {
  size_t per = 0;
  std::vector<int64_t> index;
  std::vector<double> weight;  // tap j's weights from [j * stride]: ow of them, then kRunLanes - 1 zeros
  size_t stride = 0;
  size_t outputs = 0;  // ow
  // Outputs [first, end) that read the same inputs (an upsampling's runs), when runs are long enough to loop over:
  // each tap's input is then read once per run, not gathered per output.
  struct Run {
    size_t first, end;
  };
  std::vector<Run> runs;
};

// Outputs per run, on average, from which rows are summed run by run (SumRun) instead of gathering each output's
// inputs: lraspp_mobilenet_v3_large's final 21 x 28 x 28 -> 224 x 224 bilinear upsampling (runs of 8) took 16-19%
// of the net's samples on AVX2 with the gathers; alone, as a one-op model under msame (2 threads, its output copy
// included), 2.9-3.6 ms gathered against 2.0-2.6 ms by runs.
constexpr size_t kMinRunLength = 2;

TapColumns ByColumn(const std::vector<std::vector<Tap>>& taps) {
  const size_t ow = taps.size();
  size_t per = 0;
  for (const std::vector<Tap>& t : taps) per = std::max(per, t.size());
  const size_t stride = ow + kRunLanes - 1;
  TapColumns c{per, std::vector<int64_t>(per * ow), std::vector<double>(per * stride, 0.0), stride, ow, {}};
  for (size_t x = 0; x < ow; ++x)
    for (size_t j = 0; j < per; ++j) c.index[j * ow + x] = taps[x][std::min(j, taps[x].size() - 1)].index;
  for (size_t x = 0; x < ow; ++x)
    for (size_t j = 0; j < taps[x].size(); ++j) c.weight[j * stride + x] = taps[x][j].weight;
  const auto same_inputs = [&](size_t x, size_t y) {
    for (size_t j = 0; j < per; ++j)
      if (c.index[j * ow + x] != c.index[j * ow + y]) return false;
    return true;
  };
  for (size_t x = 0; x < ow; ++x) {
    if (c.runs.empty() || !same_inputs(c.runs.back().first, x)) c.runs.push_back({x, x});
    c.runs.back().end = x + 1;
  }
  if (c.runs.size() * kMinRunLength > ow) c.runs.clear();
  return c;
}

template <class T>
bool AllFinite(const T* v, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) return std::all_of(v, v + n, [](T x) { return std::isfinite(x); });
  return true;
}

// Outputs [x0, x0 + 4 K) of a run (clipped to it), 4 to a register, K registers summed side by side (one sum's
// adds wait on each other; K sums' do not), all their taps summed before they are stored: each tap's input is one
// value broadcast over the run. The last register may reach past the run (the weights are padded): only the run's
// outputs are stored.
template <class T, int K>
void SumRun(const T* in, int64_t iw, const std::vector<Tap>& rows, const TapColumns& cols, TapColumns::Run run, size_t x0, T* out) {
  Doubles4 sum[K] = {};
  for (const Tap& a : rows)
    for (size_t j = 0; j < cols.per; ++j) {
      const double v = in[a.index * iw + cols.index[j * cols.outputs + run.first]];
      const double* w = cols.weight.data() + j * cols.stride + x0;
#pragma GCC unroll 4
      for (int k = 0; k < K; ++k) {
        Doubles4 wk;
        std::memcpy(&wk, w + k * kRunLanes, sizeof(wk));
        sum[k] += a.weight * wk * v;
      }
    }
#pragma GCC unroll 4
  for (int k = 0; k < K; ++k) {
    const size_t first = x0 + k * kRunLanes, end = std::min(run.end, first + kRunLanes);
    if constexpr (std::is_same_v<T, float>) {
      if (end == first + kRunLanes) {
        const Floats4 f = __builtin_convertvector(sum[k], Floats4);
        std::memcpy(out + first, &f, sizeof(f));
        continue;
      }
    }
    for (size_t x = first; x < end; ++x) out[x] = StoreAs<T>(sum[k][x - first]);
  }
}

template <class T>
using SumRunFn = void (*)(const T*, int64_t, const std::vector<Tap>&, const TapColumns&, TapColumns::Run, size_t, T*);
template <class T>
constexpr std::array<SumRunFn<T>, kMaxRunChunks + 1> kRunSums = {nullptr, SumRun<T, 1>, SumRun<T, 2>, SumRun<T, 3>, SumRun<T, 4>};

// One output row, every output's sum in the general loop's order (its H taps, within each its W taps), but
// accumulated for the whole row (or run) tap by tap, so that the loop over the outputs is straight-line and vectorises.
template <class T>
void ResizeRowByColumns(const T* in, int64_t iw, const std::vector<Tap>& rows, const TapColumns& cols, std::span<double> acc, T* out) {
  const size_t ow = acc.size();
  if (!cols.runs.empty()) {
    for (const TapColumns::Run& run : cols.runs)
      for (size_t x0 = run.first; x0 < run.end; x0 += kRunLanes * kMaxRunChunks) {
        const size_t chunks = std::min(kMaxRunChunks, (run.end - x0 + kRunLanes - 1) / kRunLanes);
        kRunSums<T>[chunks](in, iw, rows, cols, run, x0, out);
      }
    return;
  }
  std::fill(acc.begin(), acc.end(), 0.0);
  for (const Tap& a : rows) {
    const T* r = in + a.index * iw;
    for (size_t j = 0; j < cols.per; ++j) {
      const int64_t* index = cols.index.data() + j * ow;
      const double* weight = cols.weight.data() + j * cols.stride;
      for (size_t x = 0; x < ow; ++x) acc[x] += a.weight * weight[x] * r[index[x]];
    }
  }
  for (size_t x = 0; x < ow; ++x) out[x] = StoreAs<T>(acc[x]);
}

// The common image resize: (N, C) kept, H and W resized. Each output sums its taps' values in the order and with
// the weights (w_h * w_w, fp64 sums) of the general loop below, so the result is the same bits; without its
// per-element index arithmetic and allocation (an lraspp head's two upsamplings were 76% of the net's time), and
// by whole rows with the W taps in columns over finite inputs (lraspp_mobilenet_v3_large's final 21 x 224 x 224 bilinear upsampling: the kernel's share of the net's samples 26% -> 18%, AVX2, 2 threads).
// `finish` (fp32 only) runs on each task's rows as it writes them: the runtime's 16-bit rounding while they are in
// cache (lraspp's two upsamplings to 21 x 224 x 224 with force_fp16, each with its rounding: 0.83 -> 0.67 ms, where
// the rounding was a pass of its own after the kernel; a per-task timer, 2 threads).
template <class T>
void ResizeSpatial2D(ThreadPool& pool, const T* src, T* dst, int64_t planes, int64_t ih, int64_t iw,
                     const std::vector<std::vector<Tap>>& th, const std::vector<std::vector<Tap>>& tw, const ChunkFinish& finish) {
  const auto oh = static_cast<int64_t>(th.size()), ow = static_cast<int64_t>(tw.size());
  // By columns only over finite inputs: a padded tap's 0 * Inf would turn an infinite output into NaN.
  const std::optional<TapColumns> columns = AllFinite(src, planes * ih * iw) && !tw.empty() ? std::optional(ByColumn(tw)) : std::nullopt;
  pool.ParallelFor(static_cast<size_t>(planes * oh), 16, [&](size_t b, size_t e) {
    std::vector<double> acc(columns ? static_cast<size_t>(ow) : 0);
    for (size_t row = b; row < e; ++row) {
      const int64_t plane = static_cast<int64_t>(row) / oh, y = static_cast<int64_t>(row) % oh;
      const T* in = src + plane * ih * iw;
      T* out = dst + plane * oh * ow + y * ow;
      if (columns) {
        ResizeRowByColumns(in, iw, th[static_cast<size_t>(y)], *columns, acc, out);
        continue;
      }
      for (int64_t x = 0; x < ow; ++x) {
        double acc_x = 0;
        for (const Tap& a : th[static_cast<size_t>(y)])
          for (const Tap& t : tw[static_cast<size_t>(x)]) acc_x += a.weight * t.weight * in[a.index * iw + t.index];
        out[x] = StoreAs<T>(acc_x);
      }
    }
    if constexpr (std::is_same_v<T, float>)
      if (finish) finish({dst + b * static_cast<size_t>(ow), (e - b) * static_cast<size_t>(ow)}, b * static_cast<size_t>(ow));
  });
}

Status ResizeKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.dtype() == DType::kBool) return c.Fail("dtype bool is not supported");
  std::vector<const Tensor*> ins;
  for (auto& t : c.inputs) ins.push_back(t.defined() ? &t : nullptr);
  NPU_ASSIGN_OR_RETURN(ResizeParams p, ResizeParamsFor(c.node, x.shape(), ins));
  std::string mode = c.node.attr_string("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") return c.Fail("mode " + mode + " is not supported");
  const size_t r = x.shape().size();
  std::vector<std::vector<std::vector<Tap>>> taps(r);
  std::vector<std::vector<bool>> outside(r);
  for (size_t d = 0; d < r; ++d) {
    double rs = p.roi.empty() ? 0 : p.roi[d], re = p.roi.empty() ? 1 : p.roi[d + r];
    DimTaps(c.node, x.shape()[d], p.out[d], p.scales[d], rs, re, taps[d], outside[d]);
  }
  float extrapolation = c.node.attr_float("extrapolation_value", 0.f);
  Tensor y = Tensor::Empty(x.dtype(), p.out);
  if (r == 4 && IdentityDim(taps[0], outside[0]) && IdentityDim(taps[1], outside[1]) &&
      std::none_of(outside[2].begin(), outside[2].end(), [](bool b) { return b; }) &&
      std::none_of(outside[3].begin(), outside[3].end(), [](bool b) { return b; })) {
    bool known = DispatchAll(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, bool>)
        ResizeSpatial2D(c.pool, x.data<T>(), y.mutable_data<T>(), p.out[0] * p.out[1], x.shape()[2], x.shape()[3], taps[2], taps[3],
                        std::is_same_v<T, float> ? c.TakeChunkFinish(false) : ChunkFinish{});
    });
    if (!known) return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
    c.outputs[0] = std::move(y);
    return Status::Ok();
  }
  auto ist = Strides(x.shape()), ost = Strides(p.out);
  bool known = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    c.pool.ParallelFor(static_cast<size_t>(y.numel()), 1024, [&](size_t b, size_t e) {
      std::vector<int64_t> idx(r);
      for (size_t o = b; o < e; ++o) {
        bool out_of_roi = false;
        for (size_t d = 0; d < r; ++d) {
          idx[d] = static_cast<int64_t>(o) / ost[d] % p.out[d];
          out_of_roi |= outside[d][idx[d]];
        }
        if (out_of_roi) {
          y.mutable_data<T>()[o] = StoreAs<T>(extrapolation);
          continue;
        }
        // Sum over the tensor product of the per-dim taps (odometer over tap choices).
        double acc = 0;
        std::vector<size_t> k(r, 0);
        for (;;) {
          double w = 1;
          int64_t off = 0;
          for (size_t d = 0; d < r; ++d) {
            const Tap& t = taps[d][idx[d]][k[d]];
            w *= t.weight;
            off += t.index * ist[d];
          }
          acc += w * src[off];
          size_t d = r;
          while (d > 0 && ++k[d - 1] == taps[d - 1][idx[d - 1]].size()) k[--d] = 0;
          if (d == 0) break;
        }
        y.mutable_data<T>()[o] = StoreAs<T>(acc);
      }
    });
  });
  if (!known) return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

}  // namespace

void RegisterResizeKernels() {
  for (const char* name : {"Resize", "Upsample"}) RegisterKernel(name, {.fn = ResizeKernel, .halves = Halves::kWiden});
}

}  // namespace npu
