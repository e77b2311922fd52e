// Conv and ConvTranspose (1-D and 2-D, groups, dilations, pads, auto_pad). Convolution is lowered to
// GEMM on Eigen (im2col, skipped for 1x1 stride-1 kernels), split across the thread pool; depthwise
// convolution has a direct kernel because its per-group GEMM would be a single row.
#include <Eigen/Core>
#include <cstring>

#include "kernels/kernel_util.h"

namespace npu {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MapRM = Eigen::Map<RowMat, 0, Eigen::OuterStride<>>;
using CMapRM = Eigen::Map<const RowMat, 0, Eigen::OuterStride<>>;

struct Conv2D {
  int64_t C, H, W, M, KH, KW, OH, OW, G;
  int64_t sh, sw, dh, dw, pt, pl;
  int64_t Cg() const { return C / G; }
  int64_t Mg() const { return M / G; }
  int64_t K() const { return Cg() * KH * KW; }
  bool pointwise() const { return KH == 1 && KW == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && OH == H && OW == W; }
};

// Rows [r0, r1) of the im2col matrix of one group: row (c, ki, kj), column (oh, ow).
void Im2ColRows(const Conv2D& p, const float* in, float* col, int64_t r0, int64_t r1) {
  const int64_t ohw = p.OH * p.OW;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t c = r / (p.KH * p.KW), ki = (r / p.KW) % p.KH, kj = r % p.KW;
    const float* src = in + c * p.H * p.W;
    float* dst = col + r * ohw;
    // Output columns whose input column is inside the image: ow in [lo, hi).
    int64_t off = kj * p.dw - p.pl;
    int64_t lo = off >= 0 ? 0 : (-off + p.sw - 1) / p.sw;
    int64_t hi = p.W - off <= 0 ? 0 : std::min(p.OW, (p.W - off + p.sw - 1) / p.sw);
    lo = std::min(lo, hi);
    for (int64_t oh = 0; oh < p.OH; ++oh) {
      int64_t ih = oh * p.sh - p.pt + ki * p.dh;
      float* d = dst + oh * p.OW;
      if (ih < 0 || ih >= p.H) {
        std::memset(d, 0, sizeof(float) * p.OW);
        continue;
      }
      const float* s = src + ih * p.W + off;
      std::fill(d, d + lo, 0.f);
      if (p.sw == 1) std::memcpy(d + lo, s + lo, sizeof(float) * (hi - lo));
      else
        for (int64_t ow = lo; ow < hi; ++ow) d[ow] = s[ow * p.sw];
      std::fill(d + hi, d + p.OW, 0.f);
    }
  }
}

// out[Mg x ohw] = w[Mg x K] * col[K x ohw] + bias, split over columns (large images) or rows.
void GemmBias(ThreadPool& pool, const float* w, const float* col, const float* bias, float* out, int64_t Mg,
              int64_t K, int64_t ohw) {
  int threads = pool.size();
  bool split_cols = ohw >= 64 * threads;
  size_t n = static_cast<size_t>(split_cols ? ohw : Mg);
  size_t grain = split_cols ? std::max<size_t>(64, (n + threads - 1) / threads) : std::max<size_t>(8, (n + threads - 1) / threads);
  pool.ParallelFor(n, grain, [&](size_t b, size_t e) {
    int64_t m0 = split_cols ? 0 : b, m1 = split_cols ? Mg : e;
    int64_t c0 = split_cols ? b : 0, c1 = split_cols ? e : ohw;
    MapRM o(out + m0 * ohw + c0, m1 - m0, c1 - c0, Eigen::OuterStride<>(ohw));
    for (int64_t m = m0; m < m1; ++m) std::fill(&o(m - m0, 0), &o(m - m0, 0) + (c1 - c0), bias ? bias[m] : 0.f);
    CMapRM a(w + m0 * K, m1 - m0, K, Eigen::OuterStride<>(K));
    CMapRM x(col + c0, K, c1 - c0, Eigen::OuterStride<>(ohw));
    o.noalias() += a * x;
  });
}

void DepthwiseConv(ThreadPool& pool, const Conv2D& p, const float* in, const float* w, const float* bias, float* out) {
  // Each output channel m reads input channel m / Mg.
  pool.ParallelFor(static_cast<size_t>(p.M), 1, [&](size_t b, size_t e) {
    for (size_t m = b; m < e; ++m) {
      const float* src = in + (m / p.Mg()) * p.H * p.W;
      float* dst = out + m * p.OH * p.OW;
      std::fill(dst, dst + p.OH * p.OW, bias ? bias[m] : 0.f);
      for (int64_t ki = 0; ki < p.KH; ++ki)
        for (int64_t kj = 0; kj < p.KW; ++kj) {
          float wv = w[(m * p.KH + ki) * p.KW + kj];
          int64_t off = kj * p.dw - p.pl;
          int64_t lo = off >= 0 ? 0 : (-off + p.sw - 1) / p.sw;
          int64_t hi = p.W - off <= 0 ? 0 : std::min(p.OW, (p.W - off + p.sw - 1) / p.sw);
          for (int64_t oh = 0; oh < p.OH; ++oh) {
            int64_t ih = oh * p.sh - p.pt + ki * p.dh;
            if (ih < 0 || ih >= p.H) continue;
            const float* s = src + ih * p.W + off;
            float* d = dst + oh * p.OW;
            if (p.sw == 1)
              for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * s[ow];
            else
              for (int64_t ow = lo; ow < hi; ++ow) d[ow] += wv * s[ow * p.sw];
          }
        }
    }
  });
}

// Views a 1-D or 2-D conv as 2-D: 1-D gets H = 1.
Result<Conv2D> MakeConv2D(const Node& node, const Shape& x, const Shape& w, bool transpose) {
  size_t r = x.size() - 2;
  if (r != 1 && r != 2)
    return Status::Error("E10055", node.op_type + " node", node.name,
                         std::to_string(r) + "-D convolution is not supported (1-D and 2-D are)");
  Conv2D p{};
  p.G = node.attr_int("group", 1);
  p.C = x[1];
  p.M = transpose ? w[1] * p.G : w[0];
  std::vector<int64_t> k = node.attr_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  Shape sp(x.begin() + 2, x.end());
  if (!transpose) {
    NPU_ASSIGN_OR_RETURN(WindowGeometry g, ComputeWindow(node, sp, k));
    auto pick = [&](const std::vector<int64_t>& v, int64_t def) { return r == 2 ? v[0] : def; };
    auto last = [&](const std::vector<int64_t>& v) { return v[r - 1]; };
    p.H = pick(g.in, 1), p.W = last(g.in), p.KH = pick(g.kernel, 1), p.KW = last(g.kernel);
    p.OH = pick(g.out, 1), p.OW = last(g.out), p.sh = pick(g.stride, 1), p.sw = last(g.stride);
    p.dh = pick(g.dilation, 1), p.dw = last(g.dilation), p.pt = pick(g.pad_begin, 0), p.pl = last(g.pad_begin);
  }
  if (p.G <= 0 || p.C % p.G != 0 || p.M % p.G != 0)
    return Status::Error("E10001", node.op_type + " node", node.name, "channels are not divisible by group");
  if (!transpose && w[1] != p.Cg())
    return Status::Error("E10001", node.op_type + " node", node.name,
                         "weight expects " + std::to_string(w[1] * p.G) + " input channels, input has " + std::to_string(p.C));
  return p;
}

Status ConvKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() != DType::kF32) return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
  if (x.rank() < 3 || w.rank() != x.rank()) return c.Fail("input and weight ranks must match and be >= 3");
  NPU_ASSIGN_OR_RETURN(Conv2D p, MakeConv2D(c.node, x.shape(), w.shape(), false));
  const float* bias = c.has(2) ? c.in(2).data<float>() : nullptr;
  Shape out_shape = {x.shape()[0], p.M};
  if (x.rank() == 4) out_shape.push_back(p.OH);
  out_shape.push_back(p.OW);
  Tensor y = Tensor::Empty(DType::kF32, out_shape);
  const int64_t N = x.shape()[0], ohw = p.OH * p.OW;
  for (int64_t n = 0; n < N; ++n) {
    const float* xin = x.data<float>() + n * p.C * p.H * p.W;
    float* yout = y.mutable_data<float>() + n * p.M * ohw;
    if (p.Cg() == 1 && p.G > 1) {
      DepthwiseConv(c.pool, p, xin, w.data<float>(), bias, yout);
      continue;
    }
    for (int64_t g = 0; g < p.G; ++g) {
      const float* xg = xin + g * p.Cg() * p.H * p.W;
      const float* col = xg;
      if (!p.pointwise()) {
        float* buf = ThreadScratch(static_cast<size_t>(p.K() * ohw));
        c.pool.ParallelFor(static_cast<size_t>(p.K()), 1, [&](size_t b, size_t e) { Im2ColRows(p, xg, buf, b, e); });
        col = buf;
      }
      GemmBias(c.pool, w.data<float>() + g * p.Mg() * p.K(), col, bias ? bias + g * p.Mg() : nullptr,
               yout + g * p.Mg() * ohw, p.Mg(), p.K(), ohw);
    }
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ---- ConvTranspose ------------------------------------------------------------------------------

Result<Conv2D> MakeConvTranspose(const Node& n, const Shape& x, const Shape& w) {
  NPU_ASSIGN_OR_RETURN(Conv2D p, MakeConv2D(n, x, w, true));
  size_t r = x.size() - 2;
  std::vector<int64_t> k = n.attr_ints("kernel_shape", Shape(w.begin() + 2, w.end()));
  auto strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  auto dil = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  auto outpad = n.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  auto pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  auto out_shape = n.attr_ints("output_shape");
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (k.size() != r || strides.size() != r || dil.size() != r || outpad.size() != r || pads.size() != 2 * r)
    return Status::Error("E10001", n.op_type + " node", n.name, "attribute lengths do not match the spatial rank");
  if (out_shape.size() > r) out_shape.erase(out_shape.begin(), out_shape.end() - static_cast<long>(r));
  std::vector<int64_t> out(r), pb(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t in = x[2 + i], eff = (k[i] - 1) * dil[i] + 1;
    int64_t full = strides[i] * (in - 1) + outpad[i] + eff;
    if (!out_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t target = out_shape.empty() ? in * strides[i] : out_shape[i];
      int64_t total = full - target;
      bool upper = auto_pad != "SAME_LOWER";
      pb[i] = upper ? total / 2 : total - total / 2;
      out[i] = target;
    } else {
      if (auto_pad == "VALID") pads[i] = pads[i + r] = 0;
      pb[i] = pads[i];
      out[i] = full - pads[i] - pads[i + r];
    }
  }
  auto pick = [&](const std::vector<int64_t>& v, int64_t def) { return r == 2 ? v[0] : def; };
  p.H = r == 2 ? x[2] : 1, p.W = x.back();
  p.KH = pick(k, 1), p.KW = k.back(), p.OH = pick(out, 1), p.OW = out.back();
  p.sh = pick(strides, 1), p.sw = strides.back(), p.dh = pick(dil, 1), p.dw = dil.back();
  p.pt = pick(pb, 0), p.pl = pb.back();
  return p;
}

// Scatter-adds col[(m, ki, kj), (h, w)] into out[m][oh][ow]; parallel over output channels.
void Col2Im(ThreadPool& pool, const Conv2D& p, int64_t Mg, const float* col, float* out) {
  pool.ParallelFor(static_cast<size_t>(Mg), 1, [&](size_t b, size_t e) {
    for (size_t m = b; m < e; ++m)
      for (int64_t ki = 0; ki < p.KH; ++ki)
        for (int64_t kj = 0; kj < p.KW; ++kj) {
          const float* src = col + ((m * p.KH + ki) * p.KW + kj) * p.H * p.W;
          for (int64_t h = 0; h < p.H; ++h) {
            int64_t oh = h * p.sh - p.pt + ki * p.dh;
            if (oh < 0 || oh >= p.OH) continue;
            for (int64_t w = 0; w < p.W; ++w) {
              int64_t ow = w * p.sw - p.pl + kj * p.dw;
              if (ow >= 0 && ow < p.OW) out[(m * p.OH + oh) * p.OW + ow] += src[h * p.W + w];
            }
          }
        }
  });
}

Status ConvTransposeKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() != DType::kF32) return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
  if (x.rank() < 3 || w.rank() != x.rank()) return c.Fail("input and weight ranks must match and be >= 3");
  NPU_ASSIGN_OR_RETURN(Conv2D p, MakeConvTranspose(c.node, x.shape(), w.shape()));
  const int64_t N = x.shape()[0], hw = p.H * p.W, Cg = p.Cg(), Mg = p.Mg(), rows = Mg * p.KH * p.KW;
  Shape out_shape = {N, p.M};
  if (x.rank() == 4) out_shape.push_back(p.OH);
  out_shape.push_back(p.OW);
  Tensor y = Tensor::Zeros(DType::kF32, out_shape);
  std::vector<float> col(static_cast<size_t>(rows * hw));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < p.G; ++g) {
      // col[rows x hw] = W_g^T [rows x Cg] * X_g [Cg x hw]; W_g is stored Cg x rows.
      CMapRM wg(w.data<float>() + g * Cg * rows, Cg, rows, Eigen::OuterStride<>(rows));
      CMapRM xg(x.data<float>() + (n * p.C + g * Cg) * hw, Cg, hw, Eigen::OuterStride<>(hw));
      MapRM cm(col.data(), rows, hw, Eigen::OuterStride<>(hw));
      cm.noalias() = wg.transpose() * xg;
      float* yg = y.mutable_data<float>() + (n * p.M + g * Mg) * p.OH * p.OW;
      Col2Im(c.pool, p, Mg, col.data(), yg);
    }
  if (c.has(2)) {
    const float* b = c.in(2).data<float>();
    float* yp = y.mutable_data<float>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t m = 0; m < p.M; ++m)
        for (int64_t i = 0; i < p.OH * p.OW; ++i) yp[(n * p.M + m) * p.OH * p.OW + i] += b[m];
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status InferConv(InferContext& c, bool transpose) {
  const Value &x = *c.in[0], &w = *c.in[1];
  if (!x.has_shape || !w.has_shape) {
    c.set_output(0, x.dtype, {}, false);
    return Status::Ok();
  }
  if (x.shape.size() < 3 || w.shape.size() != x.shape.size()) return c.Fail("input and weight ranks must match and be >= 3");
  auto geo = transpose ? MakeConvTranspose(c.node, x.shape, w.shape) : MakeConv2D(c.node, x.shape, w.shape, false);
  if (!geo.ok()) return geo.status();
  const Conv2D& p = geo.value();
  Shape s = {x.shape[0], p.M};
  if (x.shape.size() == 4) s.push_back(p.OH);
  s.push_back(p.OW);
  c.set_output(0, x.dtype, s);
  return Status::Ok();
}

}  // namespace

void RegisterConvOps() {
  RegisterOp({"Conv", 2, 3, 1, 1, Engine::kCube, PrecisionClass::kWhite, [](InferContext& c) { return InferConv(c, false); }},
             [](KernelContext& c) { return WithWidenedHalves(c, ConvKernel); });
  RegisterOp({"ConvTranspose", 2, 3, 1, 1, Engine::kCube, PrecisionClass::kWhite,
              [](InferContext& c) { return InferConv(c, true); }},
             [](KernelContext& c) { return WithWidenedHalves(c, ConvTransposeKernel); });
}

}  // namespace npu
