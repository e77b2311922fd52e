// Conv and ConvTranspose (1-D, 2-D and 3-D; groups, dilations, pads, auto_pad; fp32 and fp64, fp16/bf16
// widened to fp32). Where oneDNN's convolutions do not take it, a convolution is lowered to GEMM (im2col, skipped
// for 1x1 stride-1 kernels): fp32 on oneDNN's sgemm in tiles, fp64 and int32 on Eigen; depthwise convolution has
// a direct kernel because its per-group GEMM would be a single row. Every spatial rank is handled as 3-D with
// leading extents of 1.
// GCC 12 flags Eigen's AVX-512 double kernels with -Wmaybe-uninitialized (a known false positive).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <Eigen/Core>
#include <array>
#include <cstring>

#include "kernels/channels_last.h"
#include "kernels/conv_dnnl.h"
#include "kernels/gemm_tiles.h"
#include "kernels/quant.h"
#include "kernels/kernel_util.h"
#include "ops/conv.h"

namespace npu {
namespace {

template <class T>
using RowMat = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using MapRM = Eigen::Map<RowMat<T>, 0, Eigen::OuterStride<>>;
template <class T>
using CMapRM = Eigen::Map<const RowMat<T>, 0, Eigen::OuterStride<>>;

template <class T>
T* Scratch(size_t n) {  // ThreadScratch counts floats; its storage is new-aligned, enough for double
  return reinterpret_cast<T*>(ThreadScratch((n * sizeof(T) + sizeof(float) - 1) / sizeof(float)));
}

// Output columns ow in [lo, hi) whose input column (ow * stride + off) lies inside [0, W).
void InsideRange(int64_t W, int64_t OW, int64_t stride, int64_t off, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : (-off + stride - 1) / stride;
  hi = W - off <= 0 ? 0 : std::min(OW, (W - off + stride - 1) / stride);
  lo = std::min(lo, hi);
}

// Rows [r0, r1) of the im2col matrix of one group: row (c, kd, kh, kw), column (od, oh, ow).
template <class T>
void Im2ColRows(const ConvGeom& p, const T* in, T* col, int64_t r0, int64_t r1) {
  const int64_t osz = p.OutSize(), ksz = p.KSize();
  const int64_t D = p.in[0], H = p.in[1], W = p.in[2];  // not a structured binding: lambdas capture these (clang 14)
  const int64_t OD = p.out[0], OH = p.out[1], OW = p.out[2];
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = r / ksz, kd = (r / (p.k[1] * p.k[2])) % p.k[0], kh = (r / p.k[2]) % p.k[1], kw = r % p.k[2];
    const T* src = in + c * p.InSize();
    T* dst = col + r * osz;
    int64_t off = kw * p.dil[2] - p.pad[2], lo, hi;
    InsideRange(W, OW, p.stride[2], off, lo, hi);
    for (int64_t od = 0; od < OD; ++od) {
      int64_t id = od * p.stride[0] - p.pad[0] + kd * p.dil[0];
      for (int64_t oh = 0; oh < OH; ++oh) {
        int64_t ih = oh * p.stride[1] - p.pad[1] + kh * p.dil[1];
        T* d = dst + (od * OH + oh) * OW;
        if (id < 0 || id >= D || ih < 0 || ih >= H) {
          std::fill(d, d + OW, T(0));
          continue;
        }
        const T* s = src + (id * H + ih) * W + off;
        std::fill(d, d + lo, T(0));
        if (p.stride[2] == 1) std::memcpy(d + lo, s + lo, sizeof(T) * (hi - lo));
        else
          for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[ow * p.stride[2]];
        std::fill(d + hi, d + OW, T(0));
      }
    }
  }
}

// out[Mg x osz] = w[Mg x K] * col[K x osz] + bias. fp32 runs in oneDNN's tiles (kernels/gemm_tiles.h), `finish`
// on each tile, `first` being out's first flat index in output 0. fp64 and the int8 path's int32 (no finish) run on
// Eigen, split over columns or rows: each thread packs its share of the split operand and all of the other, so the
// wider side is split (while it gives every thread a chunk).
template <class T>
void GemmBias(ThreadPool& pool, const T* w, const T* col, const T* bias, T* out, int64_t Mg, int64_t K, int64_t osz,
              const ChunkFinish& finish, size_t first) {
  if constexpr (std::is_same_v<T, float>) {
    GemmBiasTiles(pool, w, col, osz, bias, out, osz, Mg, K, osz, finish, first);
  } else {
    int threads = pool.size();
    bool cols_split_well = osz >= 64 * threads, rows_split_well = Mg >= 8 * threads;
    bool split_cols = cols_split_well && (osz >= Mg || !rows_split_well);
    size_t n = static_cast<size_t>(split_cols ? osz : Mg);
    size_t grain = split_cols ? std::max<size_t>(64, (n + threads - 1) / threads) : std::max<size_t>(8, (n + threads - 1) / threads);
    pool.ParallelFor(n, grain, [&](size_t b, size_t e) {
      int64_t m0 = split_cols ? 0 : b, m1 = split_cols ? Mg : e;
      int64_t c0 = split_cols ? b : 0, c1 = split_cols ? e : osz;
      MapRM<T> o(out + m0 * osz + c0, m1 - m0, c1 - c0, Eigen::OuterStride<>(osz));
      for (int64_t m = m0; m < m1; ++m) std::fill(&o(m - m0, 0), &o(m - m0, 0) + (c1 - c0), bias ? bias[m] : T(0));
      CMapRM<T> a(w + m0 * K, m1 - m0, K, Eigen::OuterStride<>(K));
      CMapRM<T> x(col + c0, K, c1 - c0, Eigen::OuterStride<>(osz));
      o.noalias() += a * x;
    });
  }
}

// Taps one depthwise output row gathers at most in DepthwiseConv2D (8x8 kernels); larger ones take the
// general loop.
constexpr int64_t kMaxDepthwiseTaps = 64;

// 2-D depthwise convolution, the mobile nets' hot spot. Per channel the input plane is first rewritten padded and
// split by column phase (stride_w phases), so that every tap of every output row reads a contiguous run. An
// output row is then computed kLanes columns at a time, all taps accumulated in registers before one store.
// Taps are added in the same order as DepthwiseConv (bias, then kh, kw), so results are identical.
template <class T>
void DepthwiseConv2D(ThreadPool& pool, const ConvGeom& p, const T* in, const T* w, const T* bias, T* out, const InPlaceFn* act) {
  constexpr int64_t kLanes = 16;  // output columns in flight: one AVX-512 register of floats
  const int64_t H = p.in[1], W = p.in[2], OH = p.out[1], OW = p.out[2], KH = p.k[1], KW = p.k[2];
  const int64_t SH = p.stride[1], SW = p.stride[2], PH = p.pad[1], PW = p.pad[2], DH = p.dil[1], DW = p.dil[2];
  // Phase rows reach past the last output column's last tap to a whole block of kLanes (zeros).
  const int64_t Tp = (OW + kLanes - 1) / kLanes * kLanes + (KW - 1) * DW / SW + 1;
  pool.ParallelFor(static_cast<size_t>(p.M), 1, [&](size_t b, size_t e) {
    T* plane = Scratch<T>(static_cast<size_t>(H * SW * Tp));
    std::array<const T*, kMaxDepthwiseTaps> tap_src;
    std::array<T, kMaxDepthwiseTaps> tap_w;
    for (size_t m = b; m < e; ++m) {
      const T* src = in + (m / p.Mg()) * p.InSize();
      for (int64_t ih = 0; ih < H; ++ih)
        for (int64_t r = 0; r < SW; ++r) {
          T* row = plane + (ih * SW + r) * Tp;
          // Columns t whose input column t * SW + r - PW lies in [0, W) copy it; the rest are padding.
          int64_t lo = std::min(Tp, std::max<int64_t>(0, (PW - r + SW - 1) / SW));
          int64_t hi = std::max(lo, std::min(Tp, (W + PW - r + SW - 1) / SW));
          std::fill(row, row + lo, T(0));
          const T* in_row = src + ih * W + r - PW;
          for (int64_t t = lo; t < hi; ++t) row[t] = in_row[t * SW];
          std::fill(row + hi, row + Tp, T(0));
        }
      const T* wm = w + m * KH * KW;
      const T b0 = bias ? bias[m] : T(0);
      for (int64_t oh = 0; oh < OH; ++oh) {
        int taps = 0;
        for (int64_t kh = 0; kh < KH; ++kh) {
          int64_t ih = oh * SH - PH + kh * DH;
          if (ih < 0 || ih >= H) continue;
          for (int64_t kw = 0; kw < KW; ++kw, ++taps) {
            tap_src[taps] = plane + (ih * SW + kw * DW % SW) * Tp + kw * DW / SW;
            tap_w[taps] = wm[kh * KW + kw];
          }
        }
        T* d = out + m * p.OutSize() + oh * OW;
        for (int64_t ow0 = 0; ow0 < OW; ow0 += kLanes) {
          T acc[kLanes];
          for (int64_t j = 0; j < kLanes; ++j) acc[j] = b0;
          for (int t = 0; t < taps; ++t) {
            const T* s = tap_src[t] + ow0;
            const T wv = tap_w[t];
            for (int64_t j = 0; j < kLanes; ++j) acc[j] += wv * s[j];
          }
          std::copy(acc, acc + std::min(kLanes, OW - ow0), d + ow0);
        }
        if constexpr (std::is_same_v<T, float>)
          if (act) (*act)({d, static_cast<size_t>(OW)});
      }
    }
  });
}

template <class T>
void DepthwiseConv(ThreadPool& pool, const ConvGeom& p, const T* in, const T* w, const T* bias, T* out, const InPlaceFn* act) {
  if (p.in[0] == 1 && p.k[0] == 1 && p.out[0] == 1 && p.k[1] * p.k[2] <= kMaxDepthwiseTaps) return DepthwiseConv2D(pool, p, in, w, bias, out, act);
  const int64_t D = p.in[0], H = p.in[1], W = p.in[2];  // not a structured binding: lambdas capture these (clang 14)
  const int64_t OD = p.out[0], OH = p.out[1], OW = p.out[2];
  // Each output channel m reads input channel m / Mg.
  pool.ParallelFor(static_cast<size_t>(p.M), 1, [&](size_t b, size_t e) {
    for (size_t m = b; m < e; ++m) {
      const T* src = in + (m / p.Mg()) * p.InSize();
      T* dst = out + m * p.OutSize();
      std::fill(dst, dst + p.OutSize(), bias ? bias[m] : T(0));
      for (int64_t kd = 0; kd < p.k[0]; ++kd)
        for (int64_t kh = 0; kh < p.k[1]; ++kh)
          for (int64_t kw = 0; kw < p.k[2]; ++kw) {
            T wv = w[((m * p.k[0] + kd) * p.k[1] + kh) * p.k[2] + kw];
            int64_t off = kw * p.dil[2] - p.pad[2], lo, hi;
            InsideRange(W, OW, p.stride[2], off, lo, hi);
            for (int64_t od = 0; od < OD; ++od) {
              int64_t id = od * p.stride[0] - p.pad[0] + kd * p.dil[0];
              if (id < 0 || id >= D) continue;
              for (int64_t oh = 0; oh < OH; ++oh) {
                int64_t ih = oh * p.stride[1] - p.pad[1] + kh * p.dil[1];
                if (ih < 0 || ih >= H) continue;
                const T* s = src + (id * H + ih) * W + off;
                T* d = dst + (od * OH + oh) * OW;
                if (p.stride[2] == 1)
                  for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * s[ow];
                else
                  for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * s[ow * p.stride[2]];
              }
            }
          }
      if constexpr (std::is_same_v<T, float>)
        if (act) (*act)({dst, static_cast<size_t>(p.OutSize())});
    }
  });
}

template <class T>
void ConvCompute(KernelContext& c, const ConvGeom& p, Tensor& y) {
  const Tensor &x = c.in(0), &w = c.in(1);
  const T* bias = c.has(2) ? c.in(2).data<T>() : nullptr;
  const int64_t N = x.shape()[0], osz = p.OutSize();
  // Every path below applies the activation; none adds the residual, which must come first. The fp32 products also
  // take the runtime's 16-bit rounding and the next task's activation (a ChunkFinish), tile by tile.
  const bool depthwise = p.Cg() == 1 && p.G > 1;
  const InPlaceFn* act = std::is_same_v<T, float> && depthwise && c.epilogue && !c.residual.defined() ? &c.epilogue : nullptr;
  c.epilogue_applied = act != nullptr;
  const ChunkFinish finish = std::is_same_v<T, float> && !depthwise ? c.TakeChunkFinish(!c.residual.defined()) : ChunkFinish{};
  for (int64_t n = 0; n < N; ++n) {
    const T* xin = x.data<T>() + n * p.C * p.InSize();
    T* yout = y.mutable_data<T>() + n * p.M * osz;
    if (depthwise) {
      DepthwiseConv(c.pool, p, xin, w.data<T>(), bias, yout, act);
      continue;
    }
    for (int64_t g = 0; g < p.G; ++g) {
      const T* xg = xin + g * p.Cg() * p.InSize();
      const T* col = xg;
      if (!p.pointwise()) {
        T* buf = Scratch<T>(static_cast<size_t>(p.K() * osz));
        c.pool.ParallelFor(static_cast<size_t>(p.K()), 1, [&](size_t b, size_t e) { Im2ColRows(p, xg, buf, b, e); });
        col = buf;
      }
      GemmBias(c.pool, w.data<T>() + g * p.Mg() * p.K(), col, bias ? bias + g * p.Mg() : nullptr, yout + g * p.Mg() * osz,
               p.Mg(), p.K(), osz, finish, static_cast<size_t>((n * p.M + g * p.Mg()) * osz));
    }
  }
}

// int8 x int8 -> int32: the values widened to int32 (integer products and sums are exact; the float path would
// round once sums pass 2^24), im2col and an int32 GEMM, the int32 bias added. [choice] The accumulator is int32
// and wraps as two's complement (kernels/quant.cc keeps the quantization choices; this one belongs to the
// cube): 131072 products of -128 * -128 are needed before it could, more than any conv's K.
Status CheckInt8Operands(KernelContext& c) {
  if (!c.has(1) || c.in(1).dtype() != DType::kI8) return c.Fail("int8 x needs int8 weights");
  if (c.has(2) && c.in(2).dtype() != DType::kI32) return c.Fail("the bias of an int8 " + c.node.op_type + " must be int32");
  return Status::Ok();
}

// The integer path's operands: x in (N, C, ...) order and the weights, both widened to int32.
void WidenInt8Operands(KernelContext& c) {
  c.inputs[0] = CastTensor(ToChannelsFirst(c.in(0), c.pool), DType::kI32);
  c.inputs[1] = CastTensor(c.in(1), DType::kI32);
}

Status ConvInt8(KernelContext& c) {
  NPU_RETURN_IF_ERROR(CheckInt8Operands(c));
  NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConv(c.node, c.in(0).shape(), c.in(1).shape(), false));
  if (c.in(0).rank() == 4) {  // oneDNN's int8 kernels where they are exact (conv_dnnl.h)
    auto geometry = [&]() -> Result<Conv2DShape> {
      return Conv2DShape{c.in(0).shape()[0], p.C, p.in[1], p.in[2], p.M, p.G, p.k[1], p.k[2], p.stride[1], p.stride[2],
                         p.dil[1], p.dil[2], p.pad[1], p.pad[2], p.out[1], p.out[2]};
    };
    NPU_ASSIGN_OR_RETURN(bool done, RunDnnlConv(c, geometry));
    if (!done) {
      NPU_ASSIGN_OR_RETURN(done, RunSplitInt8Conv(c, geometry));
    }
    if (done) {
      NPU_RETURN_IF_ERROR(ApplyFusedQuantization(c));  // in the conv's memory order: channels-last
      if (!c.options.channels_last_out) c.outputs[0] = ToChannelsFirst(c.outputs[0], c.pool);
      return Status::Ok();
    }
  }
  WidenInt8Operands(c);
  Tensor y = Tensor::Empty(DType::kI32, p.OutShape(c.in(0).shape()[0]));
  ConvCompute<int32_t>(c, p, y);
  c.outputs[0] = std::move(y);
  return ApplyFusedQuantization(c);
}

Status ConvKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() == DType::kI8) return ConvInt8(c);
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64)
    return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
  if (x.rank() < 3 || w.rank() != x.rank()) return c.Fail("input and weight ranks must match and be >= 3");
  if (x.rank() == 4) {
    auto geometry = [&]() -> Result<Conv2DShape> {
      NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConv(c.node, x.shape(), w.shape(), false));
      return Conv2DShape{x.shape()[0], p.C, p.in[1], p.in[2], p.M, p.G, p.k[1], p.k[2], p.stride[1], p.stride[2],
                         p.dil[1], p.dil[2], p.pad[1], p.pad[2], p.out[1], p.out[2]};
    };
    NPU_ASSIGN_OR_RETURN(bool done, RunDnnlConv(c, geometry));
    if (done) return Status::Ok();
  }
  NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConv(c.node, x.shape(), w.shape(), false));
  // 3-D convs go to oneDNN's convolution, with the maps converted to channels-last and back around it (r3d_18:
  // 162 ms so, 258 ms as im2col and tiled products). 1-D ones stay here: im2col and the tiled product need no
  // conversion and match or beat it (wav2vec2's seven strided Conv1d: 28 ms against 36 ms; four stride-1 Conv1d of
  // 80-256 channels: 7.0-7.2 ms either way). So does a pointwise conv, one product per image in (N, C, ...) order.
  if (x.rank() == 5 && !p.pointwise()) {
    NPU_ASSIGN_OR_RETURN(bool done, RunDnnlConvNd(c, p));
    if (done) return Status::Ok();
  }
  c.inputs[0] = ToChannelsFirst(c.in(0), c.pool);  // the paths below read (N, C, H, W)
  Tensor y = Tensor::Empty(x.dtype(), p.OutShape(x.shape()[0]));
  DispatchFloat(x.dtype(), [&](auto t) { ConvCompute<decltype(t)>(c, p, y); });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ---- ConvTranspose ------------------------------------------------------------------------------

// Scatter-adds col[(m, kd, kh, kw), (d, h, w)] into out[m][od][oh][ow]; parallel over output channels.
template <class T>
void Col2Im(ThreadPool& pool, const ConvGeom& p, int64_t Mg, const T* col, T* out) {
  const int64_t D = p.in[0], H = p.in[1], W = p.in[2];  // not a structured binding: lambdas capture these (clang 14)
  const int64_t OD = p.out[0], OH = p.out[1], OW = p.out[2];
  pool.ParallelFor(static_cast<size_t>(Mg), 1, [&](size_t b, size_t e) {
    for (size_t m = b; m < e; ++m)
      for (int64_t kd = 0; kd < p.k[0]; ++kd)
        for (int64_t kh = 0; kh < p.k[1]; ++kh)
          for (int64_t kw = 0; kw < p.k[2]; ++kw) {
            const T* src = col + (((m * p.k[0] + kd) * p.k[1] + kh) * p.k[2] + kw) * p.InSize();
            T* dst = out + m * p.OutSize();
            for (int64_t d = 0; d < D; ++d) {
              int64_t od = d * p.stride[0] - p.pad[0] + kd * p.dil[0];
              if (od < 0 || od >= OD) continue;
              for (int64_t h = 0; h < H; ++h) {
                int64_t oh = h * p.stride[1] - p.pad[1] + kh * p.dil[1];
                if (oh < 0 || oh >= OH) continue;
                const T* s = src + (d * H + h) * W;
                T* o = dst + (od * OH + oh) * OW;
                for (int64_t w = 0; w < W; ++w) {
                  int64_t ow = w * p.stride[2] - p.pad[2] + kw * p.dil[2];
                  if (ow >= 0 && ow < OW) o[ow] += s[w];
                }
              }
            }
          }
  });
}

template <class T>
void ConvTransposeCompute(KernelContext& c, const ConvGeom& p, Tensor& y) {
  const Tensor &x = c.in(0), &w = c.in(1);
  const int64_t N = x.shape()[0], isz = p.InSize(), osz = p.OutSize(), Cg = p.Cg(), Mg = p.Mg(), rows = Mg * p.KSize();
  std::vector<T> col(static_cast<size_t>(rows * isz));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < p.G; ++g) {
      // col[rows x isz] = W_g^T [rows x Cg] * X_g [Cg x isz]; W_g is stored Cg x rows.
      CMapRM<T> wg(w.data<T>() + g * Cg * rows, Cg, rows, Eigen::OuterStride<>(rows));
      CMapRM<T> xg(x.data<T>() + (n * p.C + g * Cg) * isz, Cg, isz, Eigen::OuterStride<>(isz));
      MapRM<T> cm(col.data(), rows, isz, Eigen::OuterStride<>(isz));
      cm.noalias() = wg.transpose() * xg;
      Col2Im(c.pool, p, Mg, col.data(), y.mutable_data<T>() + (n * p.M + g * Mg) * osz);
    }
  if (c.has(2)) {
    const T* b = c.in(2).data<T>();
    T* yp = y.mutable_data<T>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < p.M; ++m) {
        T* row = yp + (n * p.M + m) * osz;
        for (int64_t i = 0; i < osz; ++i) row[i] += b[m];
      }
  }
}

// A quantized ConvTranspose: int8 x int8 -> int32 exactly (an int32 GEMM and scatter; rare enough in models
// that no oneDNN path is kept for it), then its fused dequant/requant.
Status ConvTransposeInt8(KernelContext& c, const ConvGeom& p) {
  NPU_RETURN_IF_ERROR(CheckInt8Operands(c));
  WidenInt8Operands(c);
  Tensor y = Tensor::Zeros(DType::kI32, p.OutShape(c.in(0).shape()[0]));
  ConvTransposeCompute<int32_t>(c, p, y);
  c.outputs[0] = std::move(y);
  return ApplyFusedQuantization(c);
}

Status ConvTransposeKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() == DType::kI8) {
    if (x.rank() < 3 || w.rank() != x.rank()) return c.Fail("input and weight ranks must match and be >= 3");
    NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConvTranspose(c.node, x.shape(), w.shape()));
    return ConvTransposeInt8(c, p);
  }
  if (x.dtype() != DType::kF32 && x.dtype() != DType::kF64)
    return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
  if (x.rank() < 3 || w.rank() != x.rank()) return c.Fail("input and weight ranks must match and be >= 3");
  NPU_ASSIGN_OR_RETURN(ConvGeom p, MakeConvTranspose(c.node, x.shape(), w.shape()));
  NPU_ASSIGN_OR_RETURN(bool done, RunDnnlConvNd(c, p, /*transposed=*/true));
  if (done) return Status::Ok();
  Tensor y = Tensor::Zeros(x.dtype(), p.OutShape(x.shape()[0]));
  DispatchFloat(x.dtype(), [&](auto t) { ConvTransposeCompute<decltype(t)>(c, p, y); });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

}  // namespace

void RegisterConvKernels() {
  RegisterKernel("Conv", {.fn = ConvKernel, .halves = Halves::kWiden, .channels_last = true});
  RegisterKernel("ConvTranspose", {.fn = ConvTransposeKernel, .halves = Halves::kWiden});
}

}  // namespace npu
