// Normalisation and softmax family: BatchNormalization (inference and training mode),
// InstanceNormalization, LayerNormalization, Softmax, LogSoftmax, Hardmax. Statistics accumulate in double, except
// LayerNormalization's row sums (packet sums in the input's type, see there).
// GCC 12 flags Eigen's AVX-512 reductions (their _mm512_undefined operands) as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
// Eigen packet types (__m512 and the like) as template arguments: their alignment attributes do not matter there.
#pragma GCC diagnostic ignored "-Wignored-attributes"
#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"

namespace npu {
namespace {

// The pool's grain for kernels that work row by row: rows enough for about 4096 elements per task.
size_t RowsPerTask(int64_t row_elems) {
  constexpr int64_t kElemsPerTask = 4096;
  return static_cast<size_t>(std::max<int64_t>(1, kElemsPerTask / std::max<int64_t>(1, row_elems)));
}

// Applies y = x * a[ch] + b[ch] over [N, C, inner]. The fused activation and the 16-bit rounding (`finish`, fp32
// only) run on each task's rows as soon as they are written (densenet's BatchNormalization + Relu at force_fp16:
// one pass, not three).
template <class T>
void ChannelAffine(ThreadPool& pool, const T* x, T* y, int64_t N, int64_t C, int64_t inner, const std::vector<T>& a,
                   const std::vector<T>& b, const ChunkFinish& finish) {
  pool.ParallelFor(static_cast<size_t>(N * C), RowsPerTask(inner), [&](size_t s, size_t e) {
    for (size_t nc = s; nc < e; ++nc) {
      T av = a[nc % C], bv = b[nc % C];
      const T* xi = x + nc * inner;
      T* yi = y + nc * inner;
      for (int64_t i = 0; i < inner; ++i) yi[i] = xi[i] * av + bv;
    }
    if constexpr (std::is_same_v<T, float>)
      if (finish) finish({y + s * inner, (e - s) * static_cast<size_t>(inner)}, s * static_cast<size_t>(inner));
  });
}

// y = x * a[ch] + b[ch] over channels-last rows (C innermost), `finish` as in ChannelAffine.
template <class T>
void ChannelAffineLast(ThreadPool& pool, const T* x, T* y, int64_t rows, int64_t C, const std::vector<T>& a, const std::vector<T>& b,
                       const ChunkFinish& finish) {
  pool.ParallelFor(static_cast<size_t>(rows), RowsPerTask(C), [&](size_t s, size_t e) {
    for (size_t r = s; r < e; ++r) {
      const T* xi = x + r * C;
      T* yi = y + r * C;
      for (int64_t ch = 0; ch < C; ++ch) yi[ch] = xi[ch] * a[ch] + b[ch];
    }
    if constexpr (std::is_same_v<T, float>)
      if (finish) finish({y + s * C, (e - s) * static_cast<size_t>(C)}, s * static_cast<size_t>(C));
  });
}

// y = x * a[ch] + b[ch] where x is the channel concatenation of channels-last `pieces` (DenseNet's Concat before
// each BatchNormalization): every pixel's run of each piece is read where it lies, so the concatenation is never
// written and read back. The arithmetic and the chunks of ChannelAffineLast over the concatenated map.
void ChannelAffineOfPieces(ThreadPool& pool, std::span<const Tensor> pieces, float* y, int64_t rows, int64_t C, const std::vector<float>& a,
                           const std::vector<float>& b, const ChunkFinish& finish) {
  pool.ParallelFor(static_cast<size_t>(rows), RowsPerTask(C), [&](size_t s, size_t e) {
    for (size_t r = s; r < e; ++r) {
      float* yi = y + r * C;
      const float *ai = a.data(), *bi = b.data();
      for (const Tensor& piece : pieces) {
        const int64_t width = piece.shape()[1];
        const float* xi = piece.data<float>() + r * width;
        for (int64_t ch = 0; ch < width; ++ch) yi[ch] = xi[ch] * ai[ch] + bi[ch];
        yi += width, ai += width, bi += width;
      }
    }
    if (finish) finish({y + s * C, (e - s) * static_cast<size_t>(C)}, s * static_cast<size_t>(C));
  });
}

// Inference's per-channel affine: a = scale / sqrt(var + eps), b = bias - mean * a.
template <class T>
void InferenceAffine(const T* scale, const T* bias, const T* mean, const T* var, double eps, std::vector<T>& a, std::vector<T>& b) {
  for (size_t ch = 0; ch < a.size(); ++ch) {
    a[ch] = scale[ch] / std::sqrt(var[ch] + eps);
    b[ch] = bias[ch] - mean[ch] * a[ch];
  }
}

// Inference on input 0 given as its Concat's pieces (KernelRunOptions::concat_pieces), fp32.
Status BatchNormOfConcat(KernelContext& c) {
  const std::span<const Tensor> pieces = c.options.concat_pieces;
  Shape shape = pieces.front().shape();
  shape[1] = 0;
  for (const Tensor& piece : pieces) shape[1] += piece.shape()[1];
  const int64_t C = shape[1];
  for (size_t i = 1; i <= 4; ++i)
    if (c.in(i).dtype() != DType::kF32 || c.in(i).numel() != C)
      return c.Fail("input " + std::to_string(i) + " must be fp32 with one value per channel (" + std::to_string(C) + ")");
  std::vector<float> a(static_cast<size_t>(C)), b(static_cast<size_t>(C));
  InferenceAffine(c.in(1).data<float>(), c.in(2).data<float>(), c.in(3).data<float>(), c.in(4).data<float>(), c.node.attr_float("epsilon", 1e-5f), a, b);
  Tensor y = Tensor::Empty(DType::kF32, shape);
  y.channels_last = OrdersDiffer(shape);
  const ChunkFinish finish = c.TakeChunkFinish(!c.residual.defined());
  ChannelAffineOfPieces(c.pool, pieces, y.mutable_data<float>(), NumElements(shape) / C, C, a, b, finish);
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

template <class T>
Status BatchNormKernel(KernelContext& c) {
  // Inference keeps a channels-last feature map as it is (a per-channel affine); training's statistics read (N, C, ...).
  if (c.in(0).channels_last && c.node.attr_int("training_mode", 0) != 0) c.inputs[0] = ToChannelsFirst(c.in(0), c.pool);
  const Tensor& x = c.in(0);
  if (x.rank() < 2) return c.Fail("input must have rank >= 2");
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.numel() / std::max<int64_t>(1, N * C);
  double eps = c.node.attr_float("epsilon", 1e-5f), momentum = c.node.attr_float("momentum", 0.9f);
  bool training = c.node.attr_int("training_mode", 0) != 0;
  const T *scale = c.in(1).data<T>(), *bias = c.in(2).data<T>();
  const T *mean = c.in(3).data<T>(), *var = c.in(4).data<T>();
  std::vector<T> use_mean(mean, mean + C), use_var(var, var + C);
  if (training) {
    for (int64_t ch = 0; ch < C; ++ch) {
      double s = 0, s2 = 0;
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) s += x.data<T>()[(n * C + ch) * inner + i];
      double m = s / static_cast<double>(N * inner);
      for (int64_t n = 0; n < N; ++n)
        for (int64_t i = 0; i < inner; ++i) {
          double d = x.data<T>()[(n * C + ch) * inner + i] - m;
          s2 += d * d;
        }
      use_mean[ch] = static_cast<T>(m);
      use_var[ch] = static_cast<T>(s2 / static_cast<double>(N * inner));
    }
  }
  std::vector<T> a(C), b(C);
  InferenceAffine(scale, bias, use_mean.data(), use_var.data(), eps, a, b);
  Tensor y = Tensor::EmptyLike(x.dtype(), x);
  // Inference in fp32 finishes its rows as it writes them; the activation follows a fused residual, added later.
  const ChunkFinish finish = std::is_same_v<T, float> && !training ? c.TakeChunkFinish(!c.residual.defined()) : ChunkFinish{};
  if (x.channels_last) ChannelAffineLast(c.pool, x.data<T>(), y.mutable_data<T>(), N * inner, C, a, b, finish);
  else ChannelAffine(c.pool, x.data<T>(), y.mutable_data<T>(), N, C, inner, a, b, finish);
  c.outputs[0] = std::move(y);
  if (training) {
    for (size_t k = 1; k < c.outputs.size() && k < 3; ++k) {
      Tensor r = Tensor::Empty(x.dtype(), {C});
      const T* running = k == 1 ? mean : var;
      const auto& batch = k == 1 ? use_mean : use_var;
      for (int64_t ch = 0; ch < C; ++ch) r.mutable_data<T>()[ch] = running[ch] * momentum + batch[ch] * (1 - momentum);
      c.outputs[k] = std::move(r);
    }
  }
  return Status::Ok();
}

template <class T>
Status InstanceNormKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.numel() / std::max<int64_t>(1, N * C);
  double eps = c.node.attr_float("epsilon", 1e-5f);
  const T *scale = c.in(1).data<T>(), *bias = c.in(2).data<T>();
  Tensor y = Tensor::Empty(x.dtype(), x.shape());
  c.pool.ParallelFor(static_cast<size_t>(N * C), 1, [&](size_t s, size_t e) {
    for (size_t nc = s; nc < e; ++nc) {
      const T* xi = x.data<T>() + nc * inner;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < inner; ++i) sum += xi[i];
      double m = sum / static_cast<double>(inner);
      for (int64_t i = 0; i < inner; ++i) sq += (xi[i] - m) * (xi[i] - m);
      double inv = 1.0 / std::sqrt(sq / static_cast<double>(inner) + eps);
      T a = static_cast<T>(scale[nc % C] * inv), b = static_cast<T>(bias[nc % C] - m * scale[nc % C] * inv);
      T* yi = y.mutable_data<T>() + nc * inner;
      for (int64_t i = 0; i < inner; ++i) yi[i] = xi[i] * a + b;
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// Local response normalization across channels (ONNX LRN, Caffe's ACROSS_CHANNELS):
// y = x / (bias + alpha / size * sum of x^2 over the `size` channels around c)^beta.
template <class T>
Status LrnKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  if (x.rank() < 3) return c.Fail("LRN needs N, C and at least one spatial dim");
  const int64_t N = x.shape()[0], C = x.shape()[1], inner = x.numel() / std::max<int64_t>(1, N * C);
  const int64_t size = c.node.attr_int("size", 5), before = (size - 1) / 2, after = size - 1 - before;
  if (size <= 0) return c.Fail("size must be positive");
  const double alpha = c.node.attr_float("alpha", 1e-4f) / static_cast<double>(size), beta = c.node.attr_float("beta", 0.75f),
               bias = c.node.attr_float("bias", 1.f);
  Tensor y = Tensor::Empty(x.dtype(), x.shape());
  c.pool.ParallelFor(static_cast<size_t>(N * C), 1, [&](size_t s, size_t e) {
    std::vector<double> sum(static_cast<size_t>(inner));
    for (size_t nc = s; nc < e; ++nc) {
      const int64_t n = static_cast<int64_t>(nc) / C, ch = static_cast<int64_t>(nc) % C;
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(C - 1, ch + after); ++k) {
        const T* xk = x.data<T>() + (n * C + k) * inner;
        for (int64_t i = 0; i < inner; ++i) sum[static_cast<size_t>(i)] += static_cast<double>(xk[i]) * xk[i];
      }
      const T* xi = x.data<T>() + nc * inner;
      T* yi = y.mutable_data<T>() + nc * inner;
      for (int64_t i = 0; i < inner; ++i) yi[i] = static_cast<T>(xi[i] / std::pow(bias + alpha * sum[static_cast<size_t>(i)], beta));
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// A shape without its leading unit dims: the same values, whichever of the two a tensor has.
Shape DropLeadingOnes(const Shape& s) {
  auto first = std::find_if(s.begin(), s.end(), [](int64_t d) { return d != 1; });
  return Shape(first, s.end());
}

template <class T>
Status LayerNormKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", -1), x.rank());
  if (axis < 0 || axis >= x.rank()) return c.Fail("axis out of range");
  double eps = c.node.attr_float("epsilon", 1e-5f);
  Shape norm_shape(x.shape().begin() + axis, x.shape().end());
  const int64_t inner = NumElements(norm_shape), outer = x.numel() / std::max<int64_t>(1, inner);
  // Scale and bias broadcast to the normalised shape.
  auto expand = [&](size_t i, T def) {
    std::vector<T> v(static_cast<size_t>(inner), def);
    if (!c.has(i)) return v;
    const Tensor& t = c.in(i);
    if (DropLeadingOnes(t.shape()) == DropLeadingOnes(norm_shape)) {  // the normalised shape's own values (every exporter's)
      std::copy_n(t.data<T>(), inner, v.begin());
      return v;
    }
    auto st = BroadcastStrides(t.shape(), norm_shape);
    auto ost = Strides(norm_shape);
    for (int64_t k = 0; k < inner; ++k) {
      int64_t off = 0;
      for (size_t d = 0; d < norm_shape.size(); ++d) off += (k / ost[d]) % norm_shape[d] * st[d];
      v[k] = t.data<T>()[off];
    }
    return v;
  };
  std::vector<T> scale = expand(1, 1.f), bias = expand(2, 0.f);
  Shape stat_shape = x.shape();
  for (int64_t d = axis; d < x.rank(); ++d) stat_shape[d] = 1;
  Tensor y = ResultOver(x);  // a row's statistics are taken before it is written
  Tensor mean = Tensor::Empty(DType::kF32, stat_shape), inv_std = Tensor::Empty(DType::kF32, stat_shape);  // stash_type float
  // Eigen's packet reductions, two passes (mean, then centred squares: no cancellation): a serial double
  // accumulator per row was 10% of convnext_tiny, a LayerNorm over the channels of every pixel. A row is at most a
  // few thousand elements, which the packet-wise tree sum keeps within a few ulp in T.
  using Row = Eigen::Array<T, Eigen::Dynamic, 1>;
  Eigen::Map<const Row> gamma(scale.data(), inner), beta(bias.data(), inner);
  c.pool.ParallelFor(static_cast<size_t>(outer), RowsPerTask(inner), [&](size_t s, size_t e) {
    for (size_t o = s; o < e; ++o) {
      Eigen::Map<const Row> xr(x.data<T>() + o * inner, inner);
      double m = static_cast<double>(xr.sum()) / static_cast<double>(inner);
      double var = static_cast<double>((xr - static_cast<T>(m)).square().sum()) / static_cast<double>(inner);
      double inv = 1.0 / std::sqrt(var + eps);
      Eigen::Map<Row>(y.mutable_data<T>() + o * inner, inner) = (xr - static_cast<T>(m)) * static_cast<T>(inv) * gamma + beta;
      mean.mutable_data<float>()[o] = static_cast<float>(m);
      inv_std.mutable_data<float>()[o] = static_cast<float>(inv);
    }
  });
  c.outputs[0] = std::move(y);
  if (c.outputs.size() > 1) c.outputs[1] = std::move(mean);
  if (c.outputs.size() > 2) c.outputs[2] = std::move(inv_std);
  return Status::Ok();
}

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Softmax over contiguous fp32 rows (attention scores) in Eigen's SIMD packets: the maximum, then exp(x - max)
// (Eigen's pexp, within 1-2 ulp of libm) stored and summed in one pass, then the scale. A row's last partial
// packet goes through a small buffer padded with -inf (whose exp adds 0). The sum stays in the packet's lanes in
// fp32, as MLAS sums it: the per-row Eigen expressions this replaced summed in double through scalar conversions
// and sent each row's tail to libm, 1.6-4.6x this time on swin_t's 49-wide and vit_b_16's 197-wide rows.
void SoftmaxRowF32(const float* x, float* y, int64_t n) {
  namespace ei = Eigen::internal;
  using Packet = ei::packet_traits<float>::type;
  constexpr int64_t kLanes = ei::unpacket_traits<Packet>::size;
  const int64_t full = n / kLanes * kLanes, rest = n - full;
  alignas(64) float tail[kLanes];
  if (rest) {
    std::fill(tail, tail + kLanes, -std::numeric_limits<float>::infinity());
    std::copy(x + full, x + n, tail);
  }
  Packet top = ei::pset1<Packet>(-std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < full; i += kLanes) top = ei::pmax(top, ei::ploadu<Packet>(x + i));
  if (rest) top = ei::pmax(top, ei::pload<Packet>(tail));
  const Packet row_max = ei::pset1<Packet>(ei::predux_max(top));
  // exp's results below fp32's smallest normal are 0: Eigen's AVX-512 pexp gives 0 there, but its AVX2/SSE one
  // clamps the argument at -88.7 and returns a denormal for anything lower, -inf too, where a masked score's
  // weight must be exactly 0.
  const Packet lowest_normal = ei::pset1<Packet>(std::log(std::numeric_limits<float>::min()));
  auto exp_flushed = [&](const Packet& v) {
    const Packet arg = ei::psub(v, row_max);
    return ei::pandnot(ei::pexp(arg), ei::pcmp_lt(arg, lowest_normal));
  };
  Packet sum = ei::pset1<Packet>(0.f);
  for (int64_t i = 0; i < full; i += kLanes) {
    const Packet e = exp_flushed(ei::ploadu<Packet>(x + i));
    ei::pstoreu(y + i, e);
    sum = ei::padd(sum, e);
  }
  if (rest) {
    const Packet e = exp_flushed(ei::pload<Packet>(tail));
    ei::pstore(tail, e);
    std::copy(tail, tail + rest, y + full);
    sum = ei::padd(sum, e);
  }
  const float inv = 1.f / ei::predux(sum);
  const Packet scale = ei::pset1<Packet>(inv);
  for (int64_t i = 0; i < full; i += kLanes) ei::pstoreu(y + i, ei::pmul(ei::ploadu<Packet>(y + i), scale));
  for (int64_t i = full; i < n; ++i) y[i] *= inv;
}

void SoftmaxRowsF32(ThreadPool& pool, const float* x, float* y, int64_t rows, int64_t n) {
  pool.ParallelFor(static_cast<size_t>(rows), RowsPerTask(n), [&](size_t s, size_t e) {
    for (size_t r = s; r < e; ++r) SoftmaxRowF32(x + r * n, y + r * n, n);
  });
}

// Before opset 13 the input is coerced to 2-D at `axis`; from 13 on the op works along `axis` alone.
template <SoftmaxKind kKind, class T>
Status SoftmaxKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  bool v13 = c.node.opset >= 13;
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", v13 ? -1 : 1), x.rank());
  if (x.rank() == 0) axis = 0;
  else if (axis < 0 || axis >= x.rank()) return c.Fail("axis out of range");
  int64_t outer = 1, n = 1, inner = 1;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (d < axis) outer *= x.shape()[d];
    else if (d == axis || !v13) n *= x.shape()[d];
    else inner *= x.shape()[d];
  }
  if constexpr (kKind == SoftmaxKind::kSoftmax && std::is_same_v<T, float>) {
    if (inner == 1 && n > 0) {
      Tensor y = ResultOver(x);  // a row is read before it is written (SoftmaxRowF32)
      SoftmaxRowsF32(c.pool, x.data<float>(), y.mutable_data<float>(), outer, n);
      c.outputs[0] = std::move(y);
      return Status::Ok();
    }
  }
  Tensor y = Tensor::Empty(x.dtype(), x.shape());
  c.pool.ParallelFor(static_cast<size_t>(outer * inner), RowsPerTask(n), [&](size_t s, size_t e) {
    for (size_t r = s; r < e; ++r) {
      int64_t o = static_cast<int64_t>(r) / inner, i = static_cast<int64_t>(r) % inner;
      const T* xi = x.data<T>() + o * n * inner + i;
      T* yi = y.mutable_data<T>() + o * n * inner + i;
      T mx = -std::numeric_limits<T>::infinity();
      int64_t arg = 0;
      for (int64_t k = 0; k < n; ++k)
        if (xi[k * inner] > mx) mx = xi[k * inner], arg = k;
      if constexpr (kKind == SoftmaxKind::kHardmax) {
        for (int64_t k = 0; k < n; ++k) yi[k * inner] = k == arg ? 1.f : 0.f;
        continue;
      }
      double sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += std::exp(static_cast<double>(xi[k * inner] - mx));
      if constexpr (kKind == SoftmaxKind::kSoftmax) {
        T inv = static_cast<T>(1.0 / sum);
        for (int64_t k = 0; k < n; ++k) yi[k * inner] = std::exp(xi[k * inner] - mx) * inv;
      } else {
        T lse = static_cast<T>(std::log(sum));
        for (int64_t k = 0; k < n; ++k) yi[k * inner] = xi[k * inner] - mx - lse;
      }
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

}  // namespace

void RegisterNormKernels() {
  // BatchNormKernel takes channels-last data as it comes.
  RegisterKernel("BatchNormalization", {.fn =
                                            [](KernelContext& c) {
                                              if (!c.options.concat_pieces.empty()) return BatchNormOfConcat(c);
                                              return ByFloatType<BatchNormKernel<float>, BatchNormKernel<double>>(c);
                                            },
                                        .halves = Halves::kWiden,
                                        .channels_last = true,
                                        .reads_concat_pieces = [](const Node& n) { return n.attr_int("training_mode", 0) == 0; }});
  RegisterKernel("InstanceNormalization", {.fn = ByFloatType<InstanceNormKernel<float>, InstanceNormKernel<double>>, .halves = Halves::kWiden});
  RegisterKernel("LRN", {.fn = ByFloatType<LrnKernel<float>, LrnKernel<double>>, .halves = Halves::kWiden});
  RegisterKernel("LayerNormalization", {.fn = ByFloatType<LayerNormKernel<float>, LayerNormKernel<double>>, .halves = Halves::kWiden});
  RegisterKernel("Softmax", {.fn = ByFloatType<SoftmaxKernel<SoftmaxKind::kSoftmax, float>, SoftmaxKernel<SoftmaxKind::kSoftmax, double>>, .halves = Halves::kWiden});
  RegisterKernel("LogSoftmax", {.fn = ByFloatType<SoftmaxKernel<SoftmaxKind::kLogSoftmax, float>, SoftmaxKernel<SoftmaxKind::kLogSoftmax, double>>, .halves = Halves::kWiden});
  RegisterKernel("Hardmax", {.fn = ByFloatType<SoftmaxKernel<SoftmaxKind::kHardmax, float>, SoftmaxKernel<SoftmaxKind::kHardmax, double>>, .halves = Halves::kWiden});
}

}  // namespace npu
