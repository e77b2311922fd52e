// Pooling: MaxPool (with optional Indices), AveragePool, GlobalAveragePool, GlobalMaxPool, over 1 to 3
// spatial dims. Windows are clipped to the input once per axis and output index, so the inner loops carry no
// bounds checks.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <vector>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"

namespace npu {
namespace {

// Spatial dims padded to 3 (leading 1s) so one loop nest serves 1-D, 2-D and 3-D pools.
struct Pool3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};

Pool3 To3(const WindowGeometry& g) {
  Pool3 p;
  size_t r = g.in.size(), off = 3 - r;
  for (size_t i = 0; i < 3; ++i) {
    bool real = i >= off;
    size_t j = i - off;
    p.in[i] = real ? g.in[j] : 1;
    p.k[i] = real ? g.kernel[j] : 1;
    p.s[i] = real ? g.stride[j] : 1;
    p.d[i] = real ? g.dilation[j] : 1;
    p.pb[i] = real ? g.pad_begin[j] : 0;
    p.pe[i] = real ? g.pad_end[j] : 0;
    p.out[i] = real ? g.out[j] : 1;
  }
  return p;
}

enum class PoolKind { kMax, kAverage };

// One axis of one output position's window: the kernel taps [lo, hi) that land inside the input (clipped
// once, so the inner loops carry no bounds checks), where tap 0 lands, and how many taps land inside the
// padded input (AveragePool's count_include_pad divisor).
struct AxisWindow {
  int64_t lo, hi, start, padded;
};

// An average's divisor over a window's axes: the taps inside the padded input (count_include_pad), else inside
// the input.
int64_t AverageDivisor(bool include_pad, std::initializer_list<const AxisWindow*> axes) {
  int64_t n = 1;
  for (const AxisWindow* a : axes) n *= include_pad ? a->padded : a->hi - a->lo;
  return n;
}

std::vector<AxisWindow> AxisWindows(const Pool3& p, int a) {
  std::vector<AxisWindow> w(static_cast<size_t>(p.out[a]));
  for (int64_t o = 0; o < p.out[a]; ++o) {
    AxisWindow& x = w[static_cast<size_t>(o)];
    x.start = o * p.s[a] - p.pb[a];
    x.lo = x.start >= 0 ? 0 : (-x.start + p.d[a] - 1) / p.d[a];
    x.hi = x.start >= p.in[a] ? 0 : std::min(p.k[a], (p.in[a] - x.start + p.d[a] - 1) / p.d[a]);
    x.hi = std::max(x.hi, x.lo);
    x.padded = 0;
    for (int64_t k = 0; k < p.k[a]; ++k) {
      int64_t pos = x.start + k * p.d[a];
      x.padded += pos >= -p.pb[a] && pos < p.in[a] + p.pe[a];
    }
  }
  return w;
}

// The window's maximum without its position: a branch-free select per tap. The first tap is taken as it is
// (a NaN there stays), later ones only when greater, as the indexed path does.
template <class T>
T WindowMax(const T* src, const Pool3& p, const AxisWindow& a0, const AxisWindow& a1, const AxisWindow& a2) {
  T best = -std::numeric_limits<T>::infinity();
  bool any = false;
  for (int64_t k0 = a0.lo; k0 < a0.hi; ++k0)
    for (int64_t k1 = a1.lo; k1 < a1.hi; ++k1) {
      const T* row = src + ((a0.start + k0 * p.d[0]) * p.in[1] + a1.start + k1 * p.d[1]) * p.in[2] + a2.start;
      for (int64_t k2 = a2.lo; k2 < a2.hi; ++k2) {
        T v = row[k2 * p.d[2]];
        best = !any || v > best ? v : best;
        any = true;
      }
    }
  return best;
}

// Channels-last pools work on blocks of kPoolLanes channels: a fixed-width loop, unrolled, vectorises with its
// accumulators in registers. 32 fp32 lanes are the 128-byte line pair the L2's adjacent-line prefetcher fetches
// together (16 lanes: 5% slower in the global pool).
constexpr int64_t kPoolLanes = 32;

// A full block's maximum over one window, as two 16-lane vectors held in registers: GCC 12 leaves the unrolled
// per-lane form of this loop scalar (one vmaxss per channel), and the rolled form keeps its accumulators on the
// stack (squeezenet1_1's MaxPools: 10% of its samples, 7% rolled, 5% so). Same selection as PoolWindowBlock's.
typedef float Lanes16 __attribute__((vector_size(64), aligned(alignof(float))));
static_assert(kPoolLanes == 2 * sizeof(Lanes16) / sizeof(float));

// The pixels (flattened over N, H and W) of one 2-D window's taps inside the input, in tap order: made once per
// window and walked by every block of channels, rather than each block working the addresses out again (inception_v3's
// 768-channel AveragePools: 24 blocks per window).
void WindowPixels(const Pool3& p, int64_t n, const AxisWindow& a1, const AxisWindow& a2, std::vector<int64_t>& pixels) {
  pixels.clear();
  for (int64_t k1 = a1.lo; k1 < a1.hi; ++k1)
    for (int64_t k2 = a2.lo; k2 < a2.hi; ++k2) pixels.push_back((n * p.in[1] + a1.start + k1 * p.d[1]) * p.in[2] + a2.start + k2 * p.d[2]);
}

// A full block's max or average over one window, in two 16-lane vectors: the first tap as it is, then each later one
// taken where greater (max) or added in fp32 in tap order (average, then one division by `count`: PoolWindowBlock's
// arithmetic; ONNX Runtime's MLAS sums in fp32 too). inception_v3's nine 3x3 AveragePools per inference, AVX-512, 2
// threads, three interleaved runs: 0.57-0.70 ms with the sums in fp64 (as they were), 0.90 with fp32 sums in
// PoolWindowBlock's lanes (left scalar by GCC 12), 0.52-0.55 so; ONNX Runtime's profile gives 0.15.
template <PoolKind kKind>
void WindowFullBlock(const float* x, float* out, int64_t C, std::span<const int64_t> pixels, float count) {
  // No tap inside the input: -inf for a max, 0 for an average.
  Lanes16 lo = kKind == PoolKind::kMax ? Lanes16{} - std::numeric_limits<float>::infinity() : Lanes16{}, hi = lo;
  for (size_t t = 0; t < pixels.size(); ++t) {
    const float* v = x + pixels[t] * C;
    Lanes16 vlo, vhi;
    std::memcpy(&vlo, v, sizeof vlo);
    std::memcpy(&vhi, v + kPoolLanes / 2, sizeof vhi);
    if constexpr (kKind == PoolKind::kMax) {
      lo = t == 0 || vlo > lo ? vlo : lo;
      hi = t == 0 || vhi > hi ? vhi : hi;
    } else {
      lo = t == 0 ? vlo : lo + vlo;
      hi = t == 0 ? vhi : hi + vhi;
    }
  }
  if (kKind == PoolKind::kAverage && !pixels.empty()) {
    lo /= count;
    hi /= count;
  }
  std::memcpy(out, &lo, sizeof lo);
  std::memcpy(out + kPoolLanes / 2, &hi, sizeof hi);
}

// One window over a block of `width` channels: each channel's taps are taken in the tap order of the
// channels-first loop, so the results are the same bits. Max takes the first tap as it is and later ones where
// greater, as WindowMax does; average sums in the input's type from the first tap on and divides per window, as
// there. `kWidth` > 0 fixes the width at compile time so that the loops vectorise with the accumulators in registers.
template <PoolKind kKind, int64_t kWidth, class T>
void PoolWindowBlock(const T* x, T* out, int64_t width, int64_t C, const Pool3& p, int64_t n, const AxisWindow& a1,
                     const AxisWindow& a2, bool include_pad) {
  if constexpr (kWidth > 0) width = kWidth;
  T acc[kPoolLanes] = {};
  bool first = true;
  const int64_t tap_step = p.d[2] * C;
  for (int64_t k1 = a1.lo; k1 < a1.hi; ++k1) {
    const T* row = x + ((n * p.in[1] + a1.start + k1 * p.d[1]) * p.in[2] + a2.start) * C;
    for (int64_t k2 = a2.lo; k2 < a2.hi; ++k2) {
      const T* v = row + k2 * tap_step;
      if (first) {  // the average's sum starts from the first tap as it is (so a window of -0s averages to -0)
#pragma GCC unroll 32
        for (int64_t j = 0; j < width; ++j) acc[j] = v[j];
      } else if constexpr (kKind == PoolKind::kAverage) {
#pragma GCC unroll 32
        for (int64_t j = 0; j < width; ++j) acc[j] += v[j];
      } else {
#pragma GCC unroll 32
        for (int64_t j = 0; j < width; ++j) acc[j] = v[j] > acc[j] ? v[j] : acc[j];
      }
      first = false;
    }
  }
  if (first) {  // no tap inside the input
    std::fill(out, out + width, kKind == PoolKind::kMax ? -std::numeric_limits<T>::infinity() : T(0));
  } else if constexpr (kKind == PoolKind::kAverage) {
    const auto div = static_cast<T>(AverageDivisor(include_pad, {&a1, &a2}));
#pragma GCC unroll 32
    for (int64_t j = 0; j < width; ++j) out[j] = acc[j] / div;
  } else {
#pragma GCC unroll 32
    for (int64_t j = 0; j < width; ++j) out[j] = acc[j];
  }
}

// A channels-last map's channels [at, at + channels), held apart: the whole map, or one piece of a channel Concat the
// pool reads in place of the Concat's result (KernelRunOptions::concat_pieces).
template <class T>
struct ChannelRun {
  const T* x;
  int64_t channels, at;
};

typedef int32_t Mask16 __attribute__((vector_size(64)));

// The maximum of `taps` channel runs of `C` floats `step` apart (one input row's taps of one output column's window)
// into `to`, the first tap as it is and later ones where greater; lanes of `nan` are set where the first tap holds a
// NaN (the caller reduces them once per row). Only there does a NaN make the rows' order differ from the taps':
// a later tap's NaN is passed over by both, but a row whose maximum is its first tap's NaN would hide its other
// taps from the rows below. Channels in 16-lane vectors outermost, so the maximum stays in a register
// over the taps (taps outermost, with the flag reduced to a scalar per tap, was a third of squeezenet1_1's 3x3
// stride-2 pool time on AVX-512).
void WindowRowMax(const float* v, int64_t step, int64_t taps, int64_t C, float* to, Mask16& nan) {
  constexpr int64_t kLanes = sizeof(Lanes16) / sizeof(float);
  if (taps <= 0) {
    std::fill(to, to + C, -std::numeric_limits<float>::infinity());
    return;
  }
  int64_t c = 0;
  for (; c + kLanes <= C; c += kLanes) {
    Lanes16 m;
    std::memcpy(&m, v + c, sizeof m);
    nan |= m != m;
    for (int64_t k = 1; k < taps; ++k) {
      Lanes16 x;
      std::memcpy(&x, v + k * step + c, sizeof x);
      m = x > m ? x : m;
    }
    std::memcpy(to + c, &m, sizeof m);
  }
  for (; c < C; ++c) {
    float m = v[c];
    nan[0] |= m != m;
    for (int64_t k = 1; k < taps; ++k) {
      const float x = v[k * step + c];
      m = x > m ? x : m;
    }
    to[c] = m;
  }
}

// A max pool whose windows overlap down the map (GoogLeNet's stride-1 pool branches, the 3x3 stride-2 pools of
// most CNNs) by rows: each input row's maxima over every output column's window are made once and combined
// top-down for every output row whose window holds that row: kw + kh taps per output instead of kw * kh at
// stride 1 (the same count at stride 2, in plain loops over whole rows: googlenet's three 3x3 stride-2 pools
// 0.34 -> 0.28 ms by a per-task timer). Within a row the leftmost, and across rows the topmost, of equal
// maxima is kept: without NaNs that is the tap order's result, ties of -0 and +0 included. A NaN changes the
// result by where it lies (the first tap's NaN stays, later ones are passed over), so a band where one starts a
// row of a window returns false and is done tap by tap.
class MaxRowsBand {
 public:
  MaxRowsBand(std::span<const ChannelRun<float>> runs, const Pool3& p, int64_t C, const std::vector<AxisWindow>& w1, const std::vector<AxisWindow>& w2)
      : runs_(runs), p_(p), C_(C), w1_(w1), w2_(w2), slots_((p.k[1] - 1) * p.d[1] + 1), row_floats_(static_cast<int64_t>(w2.size()) * C),
        rows_(static_cast<size_t>(slots_ * row_floats_)), held_(static_cast<size_t>(slots_), -1) {}

  // Output rows [b, e) of the flattened (N, OH) into y; false when their windows read a NaN.
  bool Run(int64_t b, int64_t e, float* y) {
    const auto OH = static_cast<int64_t>(w1_.size());
    for (int64_t r = b; r < e; ++r) {
      const int64_t n = r / OH;
      const AxisWindow& a1 = w1_[static_cast<size_t>(r % OH)];
      float* out = y + r * row_floats_;
      rows_read_.clear();
      for (int64_t k1 = a1.lo; k1 < a1.hi; ++k1) {
        rows_read_.push_back(RowMaxima(n, a1.start + k1 * p_.d[1]));
        if (!rows_read_.back()) return false;
      }
      if (rows_read_.empty()) std::fill(out, out + row_floats_, -std::numeric_limits<float>::infinity());  // no tap
      else CombineRows(out);
    }
    return true;
  }

 private:
  // Input row ih of image n, maximised over every output column's window; null when a window reads a NaN there.
  const float* RowMaxima(int64_t n, int64_t ih) {
    const int64_t key = n * p_.in[1] + ih, slot = ih % slots_;
    float* out = rows_.data() + slot * row_floats_;
    if (held_[static_cast<size_t>(slot)] == key) return out;
    // NaNs are looked for in the taps as they are read (WindowRowMax): a pass of its own over the row, the first to
    // touch it, was 40% of the pool's samples (squeezenet1_1's 3x3 stride-2 pools 17% faster without it).
    Mask16 nan{};
    for (const ChannelRun<float>& run : runs_) {
      const float* src = run.x + key * p_.in[2] * run.channels;
      float* to = out + run.at;
      for (const AxisWindow& a2 : w2_) {
        WindowRowMax(src + (a2.start + a2.lo * p_.d[2]) * run.channels, p_.d[2] * run.channels, a2.hi - a2.lo, run.channels, to, nan);
        to += C_;
      }
    }
    for (int32_t lane : std::bit_cast<std::array<int32_t, sizeof nan / sizeof(int32_t)>>(nan))
      if (lane) return nullptr;
    held_[static_cast<size_t>(slot)] = key;
    return rows_.data() + slot * row_floats_;
  }

  // out = the maxima of rows_read_, the topmost of equal ones kept, in blocks that stay in L1 while every row is
  // combined into them (a pass per row over the whole output row was a fifth of a 3x3 stride-2 pool's time).
  void CombineRows(float* out) const {
    constexpr int64_t kBlock = 512;  // 2 KB of output per block
    for (int64_t i0 = 0; i0 < row_floats_; i0 += kBlock) {
      const int64_t end = std::min(row_floats_, i0 + kBlock);
      std::copy(rows_read_[0] + i0, rows_read_[0] + end, out + i0);
      for (size_t r = 1; r < rows_read_.size(); ++r) {
        const float* row = rows_read_[r];
        for (int64_t i = i0; i < end; ++i) out[i] = row[i] > out[i] ? row[i] : out[i];
      }
    }
  }

  std::span<const ChannelRun<float>> runs_;
  const Pool3& p_;
  const int64_t C_;
  const std::vector<AxisWindow>&w1_, &w2_;
  const int64_t slots_, row_floats_;  // input rows a window spans; floats per row of maxima (OW * C)
  std::vector<float> rows_;           // the maxima of the last `slots_` input rows, row ih in slot ih % slots_
  std::vector<int64_t> held_;         // per slot: n * IH + ih of the row it holds, or -1
  std::vector<const float*> rows_read_;  // the rows of maxima an output row's windows span
};

// Channels-last 2-D pooling (max without indices, or average): each output pixel in blocks of kPoolLanes
// channels (a run of channels of any length did not vectorise: 4.5% of inception_v3's host time in AveragePool).
template <PoolKind kKind, class T>
void PoolChannelsLast(ThreadPool& pool, std::span<const ChannelRun<T>> runs, T* y, const Pool3& p, int64_t N, int64_t C, bool include_pad,
                      const std::vector<AxisWindow>& w1, const std::vector<AxisWindow>& w2) {
  const auto OH = static_cast<int64_t>(w1.size()), OW = static_cast<int64_t>(w2.size());
  // Max pools by rows (MaxRowsBand), one band of rows per thread so that each input row's maxima serve every
  // output row that reads them.
  constexpr bool kByRows = kKind == PoolKind::kMax && std::is_same_v<T, float>;
  const bool by_rows = kByRows && p.s[1] < p.k[1];  // windows overlap down the map: rows are shared
  const size_t grain = by_rows ? static_cast<size_t>(N * OH + pool.size() - 1) / static_cast<size_t>(pool.size()) : 1;
  pool.ParallelFor(static_cast<size_t>(N * OH), grain, [&](size_t b, size_t e) {
    if constexpr (kByRows)
      if (by_rows && MaxRowsBand(runs, p, C, w1, w2).Run(static_cast<int64_t>(b), static_cast<int64_t>(e), y)) return;
    std::vector<int64_t> pixels;  // a window's taps (WindowPixels)
    for (auto r = static_cast<int64_t>(b); r < static_cast<int64_t>(e); ++r) {
      const int64_t n = r / OH;
      const AxisWindow& a1 = w1[static_cast<size_t>(r % OH)];
      for (int64_t ow = 0; ow < OW; ++ow) {
        const AxisWindow& a2 = w2[static_cast<size_t>(ow)];
        WindowPixels(p, n, a1, a2, pixels);
        const auto count = static_cast<float>(kKind == PoolKind::kAverage ? AverageDivisor(include_pad, {&a1, &a2}) : 1);
        for (const ChannelRun<T>& run : runs) {
          const T* x = run.x;
          const int64_t Cr = run.channels;
          T* out = y + (r * OW + ow) * C + run.at;
          int64_t c0 = 0;
          for (; c0 + kPoolLanes <= Cr; c0 += kPoolLanes) {
            if constexpr (std::is_same_v<T, float>) WindowFullBlock<kKind>(x + c0, out + c0, Cr, pixels, count);
            else PoolWindowBlock<kKind, kPoolLanes>(x + c0, out + c0, kPoolLanes, Cr, p, n, a1, a2, include_pad);
          }
          if (c0 < Cr) PoolWindowBlock<kKind, 0>(x + c0, out + c0, Cr - c0, Cr, p, n, a1, a2, include_pad);
        }
      }
    }
  });
}

template <PoolKind kKind, class T>
Status PoolCompute(KernelContext& c) {
  const bool want_idx = kKind == PoolKind::kMax && c.outputs.size() > 1;
  std::vector<ChannelRun<T>> runs;  // the channels-last input's channels: one run, or the pieces of a Concat
  Shape xs;
  for (const Tensor& piece : c.options.concat_pieces) {  // fp32 channels-last maps of one size (the runtime checks)
    if (xs.empty()) {
      xs = piece.shape();
      xs[1] = 0;
    }
    runs.push_back({piece.data<T>(), piece.shape()[1], xs[1]});
    xs[1] += piece.shape()[1];
  }
  const bool channels_last = !runs.empty() || (!want_idx && c.in(0).rank() == 4 && c.in(0).channels_last);
  if (!channels_last) c.inputs[0] = ToChannelsFirst(c.in(0), c.pool);
  const Tensor& x = c.in(0);
  if (runs.empty()) {
    xs = x.shape();
    if (channels_last) runs.push_back({x.data<T>(), xs[1], 0});
  }
  if (xs.size() < 3 || xs.size() > 5) return c.Fail("pooling needs 1 to 3 spatial dims");
  Shape sp(xs.begin() + 2, xs.end());
  auto kernel = c.node.attr_ints("kernel_shape");
  NPU_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindow(c.node, sp, kernel, c.node.attr_int("ceil_mode", 0) != 0));
  Pool3 p = To3(g);
  bool include_pad = c.node.attr_int("count_include_pad", 0) != 0;
  bool col_major = c.node.attr_int("storage_order", 0) != 0;
  const int64_t NC = xs[0] * xs[1];
  const int64_t in_sz = p.in[0] * p.in[1] * p.in[2], out_sz = p.out[0] * p.out[1] * p.out[2];
  Shape os = {xs[0], xs[1]};
  os.insert(os.end(), g.out.begin(), g.out.end());
  Tensor y = Tensor::Empty(std::is_same_v<T, float> ? DType::kF32 : DType::kF64, os);  // pools compute in fp32 or fp64
  Tensor idx = want_idx ? Tensor::Empty(DType::kI64, os) : Tensor();
  const std::vector<AxisWindow> w0 = AxisWindows(p, 0), w1 = AxisWindows(p, 1), w2 = AxisWindows(p, 2);
  if (channels_last) {
    PoolChannelsLast<kKind, T>(c.pool, runs, y.mutable_data<T>(), p, xs[0], xs[1], include_pad, w1, w2);
    y.channels_last = OrdersDiffer(os);
    c.outputs[0] = std::move(y);
    return Status::Ok();
  }
  c.pool.ParallelFor(static_cast<size_t>(NC), 1, [&](size_t b, size_t e) {
    for (size_t nc = b; nc < e; ++nc) {
      const T* src = x.data<T>() + nc * in_sz;
      T* dst = y.mutable_data<T>() + nc * out_sz;
      int64_t o = 0;
      for (const AxisWindow& a0 : w0)
        for (const AxisWindow& a1 : w1)
          for (const AxisWindow& a2 : w2) {
            if constexpr (kKind == PoolKind::kMax) {
              if (!want_idx) {
                dst[o++] = WindowMax(src, p, a0, a1, a2);
                continue;
              }
            }
            T best = -std::numeric_limits<T>::infinity();
            int64_t best_i = -1;
            T sum = 0;
            bool any = false;
            for (int64_t k0 = a0.lo; k0 < a0.hi; ++k0) {
              int64_t i0 = a0.start + k0 * p.d[0];
              for (int64_t k1 = a1.lo; k1 < a1.hi; ++k1) {
                int64_t i1 = a1.start + k1 * p.d[1], row = (i0 * p.in[1] + i1) * p.in[2];
                for (int64_t k2 = a2.lo; k2 < a2.hi; ++k2) {
                  int64_t i2 = a2.start + k2 * p.d[2];
                  T v = src[row + i2];
                  if constexpr (kKind == PoolKind::kMax) {
                    if (v > best || best_i < 0) best = v, best_i = col_major ? (i2 * p.in[1] + i1) * p.in[0] + i0 : row + i2;
                  } else {
                    sum = any ? sum + v : v;  // from the first tap as it is, as PoolWindowBlock sums
                    any = true;
                  }
                }
              }
            }
            if constexpr (kKind == PoolKind::kMax) {
              dst[o] = best;
              if (want_idx) idx.mutable_data<int64_t>()[nc * out_sz + o] = static_cast<int64_t>(nc) * in_sz + best_i;
            } else {
              const int64_t div = AverageDivisor(include_pad, {&a0, &a1, &a2});
              dst[o] = div ? sum / static_cast<T>(div) : T(0);
            }
            ++o;
          }
    }
  });
  c.outputs[0] = std::move(y);
  if (want_idx) c.outputs[1] = std::move(idx);
  return Status::Ok();
}

// One global-pool result: the max, or the mean summed in fp64, of the values fed in order.
template <PoolKind kKind, class T>
struct GlobalAcc {
  using Acc = std::conditional_t<kKind == PoolKind::kMax, T, double>;
  Acc v = kKind == PoolKind::kMax ? -std::numeric_limits<T>::infinity() : 0;
  void Add(T x) {
    if constexpr (kKind == PoolKind::kMax) v = std::max(v, x);
    else v += x;
  }
  void Join(const GlobalAcc& other) {
    if constexpr (kKind == PoolKind::kMax) v = std::max(v, other.v);
    else v += other.v;
  }
  T Result(int64_t count) const {
    if constexpr (kKind == PoolKind::kMax) return v;
    else return static_cast<T>(v / static_cast<double>(count));
  }
};

// Values below which a global pool runs on one thread.
constexpr size_t kGlobalPoolParallelValues = 1 << 14;
// Channels a part's sums hold in registers at a time.
constexpr int64_t kGlobalPoolLanes = 16;

// Channels-last input: each part's pixels (MeanParts) summed in blocks of kGlobalPoolLanes channels, then each
// channel's parts added in order. Each thread takes an even run of the parts: the pixels the conv before the pool
// wrote on its core. Dealt by blocks of 16 channels over every pixel (4522ceb), each core read a slice of every
// pixel, and the squeeze-excitation Mul after the pool, which reads whole pixels, took longer (efficientnet_b0,
// per-task timer, in two states of the machine: its scales 0.45 -> 0.32 and 1.72 -> 0.71 ms per inference, its
// pools 0.20 -> 0.27 and 0.41 -> 0.41 ms).
template <PoolKind kKind, class T>
void GlobalPoolChannelsLast(ThreadPool& pool, const T* x, T* y, int64_t N, int64_t C, int64_t HW) {
  using Acc = GlobalAcc<kKind, T>;
  const int64_t parts = MeanParts(HW);
  std::vector<Acc> partial(static_cast<size_t>(N * parts * C));
  const auto sum_parts = [&](size_t b, size_t e) {
    for (auto t = static_cast<int64_t>(b); t < static_cast<int64_t>(e); ++t) {
      const int64_t n = t / parts, part = t % parts, p0 = n * HW + MeanPartStart(HW, part, parts),
                    p1 = n * HW + MeanPartStart(HW, part + 1, parts);
      for (int64_t c0 = 0; c0 < C; c0 += kGlobalPoolLanes) {
        Acc acc[kGlobalPoolLanes];
        const int64_t width = std::min(kGlobalPoolLanes, C - c0);
        if (width == kGlobalPoolLanes) {
          for (int64_t p = p0; p < p1; ++p)
#pragma GCC unroll 16  // unrolled, the accumulators stay in registers (else each add goes through the stack)
            for (int64_t j = 0; j < kGlobalPoolLanes; ++j) acc[j].Add(x[p * C + c0 + j]);
        } else {
          for (int64_t p = p0; p < p1; ++p)
            for (int64_t j = 0; j < width; ++j) acc[j].Add(x[p * C + c0 + j]);
        }
        std::copy(acc, acc + width, partial.data() + t * C + c0);
      }
    }
  };
  const auto tasks = static_cast<size_t>(N * parts);
  if (static_cast<size_t>(N * HW * C) < kGlobalPoolParallelValues) sum_parts(0, tasks);
  else pool.SplitEvenly(tasks, 1, sum_parts);
  for (int64_t n = 0; n < N; ++n) {
    Acc* sum = partial.data() + n * parts * C;
    for (int64_t part = 1; part < parts; ++part)
      for (int64_t c = 0; c < C; ++c) sum[c].Join(sum[part * C + c]);
    for (int64_t c = 0; c < C; ++c) y[n * C + c] = sum[c].Result(HW);
  }
}

template <PoolKind kKind, class T>
Status GlobalPoolCompute(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Fail("input must have rank >= 2");
  const int64_t NC = x.shape()[0] * x.shape()[1], inner = x.numel() / std::max<int64_t>(1, NC);
  Shape os = x.shape();
  for (size_t d = 2; d < os.size(); ++d) os[d] = 1;
  Tensor y = Tensor::Empty(x.dtype(), os);
  if (x.channels_last) {
    GlobalPoolChannelsLast<kKind, T>(c.pool, x.data<T>(), y.mutable_data<T>(), x.shape()[0], x.shape()[1], inner);
    c.outputs[0] = std::move(y);
    return Status::Ok();
  }
  const int64_t parts = MeanParts(inner);
  c.pool.ParallelFor(static_cast<size_t>(NC), 16, [&](size_t b, size_t e) {
    for (size_t nc = b; nc < e; ++nc) {
      const T* s = x.data<T>() + nc * inner;
      GlobalAcc<kKind, T> sum;
      for (int64_t part = 0; part < parts; ++part) {
        GlobalAcc<kKind, T> acc;
        for (int64_t i = MeanPartStart(inner, part, parts); i < MeanPartStart(inner, part + 1, parts); ++i) acc.Add(s[i]);
        if (part == 0) sum = acc;
        else sum.Join(acc);
      }
      y.mutable_data<T>()[nc] = sum.Result(inner);
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// fp32 and fp64 pool in their own type (a window average sums in it too; a global average sums in fp64).
template <PoolKind kKind>
Status PoolKernel(KernelContext& c) {
  return ByFloatType<PoolCompute<kKind, float>, PoolCompute<kKind, double>>(c);
}

template <PoolKind kKind>
Status GlobalPoolKernel(KernelContext& c) {
  return ByFloatType<GlobalPoolCompute<kKind, float>, GlobalPoolCompute<kKind, double>>(c);
}

// MaxPool is defined for int8/uint8 too: every such value is exact in fp32, so pool there and narrow back.
Status MaxPoolKernel(KernelContext& c) {
  if (!c.options.concat_pieces.empty()) return PoolCompute<PoolKind::kMax, float>(c);  // fp32 pieces (RunTask checks)
  DType t = c.in(0).dtype();
  if (t != DType::kI8 && t != DType::kU8) return WithWidenedHalves(c, PoolKernel<PoolKind::kMax>);
  c.inputs[0] = CastTensor(c.in(0), DType::kF32);
  NPU_RETURN_IF_ERROR(PoolKernel<PoolKind::kMax>(c));
  c.outputs[0] = CastTensor(c.outputs[0], t);
  return Status::Ok();
}

}  // namespace

bool MeanOverPixelsOfChannelsLast(const Tensor& x, Tensor& y, ThreadPool& pool) {
  if (!x.channels_last || x.rank() != 4 || y.numel() != x.shape()[0] * x.shape()[1] || y.dtype() != x.dtype()) return false;
  const int64_t N = x.shape()[0], C = x.shape()[1], HW = x.shape()[2] * x.shape()[3];
  if (x.dtype() == DType::kF32) GlobalPoolChannelsLast<PoolKind::kAverage, float>(pool, x.data<float>(), y.mutable_data<float>(), N, C, HW);
  else if (x.dtype() == DType::kF64) GlobalPoolChannelsLast<PoolKind::kAverage, double>(pool, x.data<double>(), y.mutable_data<double>(), N, C, HW);
  else return false;
  return true;
}

void RegisterPoolKernels() {
  // Every pool takes channels-last data as it comes (see PoolCompute). MaxPool widens halves itself: it also pools
  // int8/uint8, through fp32.
  // A MaxPool of 2-D maps without Indices may read a channel Concat's pieces (GoogLeNet's and SqueezeNet's
  // pools after a block) in place of its result.
  auto pools_pieces = [](const Node& n) {
    return n.attr_ints("kernel_shape").size() == 2 && (n.outputs.size() == 1 || n.outputs[1] < 0);
  };
  RegisterKernel("MaxPool", {.fn = MaxPoolKernel, .channels_last = true, .reads_concat_pieces = pools_pieces});
  RegisterKernel("AveragePool", {.fn = PoolKernel<PoolKind::kAverage>, .halves = Halves::kWiden, .channels_last = true});
  RegisterKernel("GlobalAveragePool", {.fn = GlobalPoolKernel<PoolKind::kAverage>, .halves = Halves::kWiden, .channels_last = true});
  RegisterKernel("GlobalMaxPool", {.fn = GlobalPoolKernel<PoolKind::kMax>, .halves = Halves::kWiden, .channels_last = true});
}

}  // namespace npu
