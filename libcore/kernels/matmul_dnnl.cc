#include "kernels/matmul_dnnl.h"

#include <omp.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "kernels/dnnl_engine.h"

namespace npu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32, kS8 = memory::data_type::s8, kS32 = memory::data_type::s32;

// What a product's primitive is built for.
struct Geometry {
  int64_t batch = 0;  // 0: b is 2-D weights, reordered once; else a and b are `batch` stacked matrices each
  int64_t M = 0, K = 0, N = 0;
  bool b_transposed = false, has_bias = false;
  bool int8 = false;  // int8 x int8 -> int32 with an int32 bias (a quantized MatMul or Gemm)
  int threads = 0;
  bool operator==(const Geometry&) const = default;
};

// A product's primitive and its right operand in the primitive's layout, built for one geometry, with the
// memory objects and arguments it runs on (each run points them at that run's tensors).
struct DnnlMatMul final : KernelState {
  Geometry geometry;
  bool usable = false;  // false: oneDNN offers only its reference kernel here
  dnnl::matmul prim;
  ReorderedWeights weights;
  memory src, dst, bias, rhs;  // rhs: a batched product's right operand, read where it lies
  std::unordered_map<int, memory> args;
};

// Columns of the weights (N) from which the transposed layout pays, where oneDNN leaves the weights' layout plain
// (its gemm:jit kernel, on CPUs without AVX-512; with AVX-512 its brgemm kernel asks for a blocked layout).
// 2 threads of a Zen 3 EPYC, M = 49-256: gemm:jit packs long row-major rows slowly, the transposed (N, K) layout
// took 0.53-0.72 of their time at N = 512, 1024, 1280, 1536, 2048, 3072 and 4096 (vit_b_16's 768 -> 3072
// layer 10.0 -> 5.6 ms) and 0.94-1.03 at N = 640, 768, 1000 and 2304; at N = 96-384 it was up to 5% slower.
constexpr int64_t kTransposedWeightsFromN = 512;

// A batched product's operands are activations (attention's Q x K^T and P x V): nothing to reorder once, so
// the primitive reads b in its plain layout, as the tensor holds it.
void Build(DnnlMatMul& d, const Geometry& g) {
  d.geometry = g;
  const auto in_dt = g.int8 ? kS8 : kF32, out_dt = g.int8 ? kS32 : kF32;
  const bool batched = g.batch > 0;
  auto desc_of = [&](int64_t rows, int64_t cols, memory::data_type dt, Tag tag2, Tag tag3) {
    return batched ? memory::desc({g.batch, rows, cols}, dt, tag3) : memory::desc({rows, cols}, dt, tag2);
  };
  const memory::desc src = desc_of(g.M, g.K, in_dt, Tag::ab, Tag::abc), dst = desc_of(g.M, g.N, out_dt, Tag::ab, Tag::abc);
  const memory::desc bias({1, g.N}, out_dt, Tag::ab);
  const memory::desc plain_b = desc_of(g.K, g.N, in_dt, g.b_transposed ? Tag::ba : Tag::ab, g.b_transposed ? Tag::acb : Tag::abc);
  try {
    auto primitive_for = [&](const memory::desc& weights) {
      return dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, weights, g.has_bias ? bias : memory::desc(), dst), DnnlEngine());
    };
    dnnl::matmul::primitive_desc pd = primitive_for(batched ? plain_b : memory::desc({g.K, g.N}, in_dt, Tag::any));
    if (!batched && !g.int8 && g.N >= kTransposedWeightsFromN && pd.weights_desc() == memory::desc({g.K, g.N}, in_dt, Tag::ab))
      pd = primitive_for(memory::desc({g.K, g.N}, in_dt, Tag::ba));
    if (IsReferenceImpl(pd)) return;
    d.prim = dnnl::matmul(pd);
    if (!batched) d.weights = ReorderedWeights(pd.weights_desc(), plain_b);
  } catch (const dnnl::error&) {
    return;  // a geometry oneDNN does not take: the caller's path
  }
  d.src = Unbound(src);
  d.dst = Unbound(dst);
  if (batched) d.rhs = Unbound(plain_b);
  d.args = {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_WEIGHTS, batched ? d.rhs : d.weights.memory()}, {DNNL_ARG_DST, d.dst}};
  if (g.has_bias) {
    d.bias = Unbound(bias);
    d.args.emplace(DNNL_ARG_BIAS, d.bias);
  }
  d.usable = true;
}

// The kernel state for geometry `g`, built on first use or when the geometry changed (a dynamic shape).
DnnlMatMul* StateFor(KernelContext& c, std::unique_ptr<KernelState>& local, const Geometry& g) {
  bool fresh = false;
  auto* d = TaskState<DnnlMatMul>(c.options.state, local, [&](const DnnlMatMul& kept) { return kept.geometry == g; }, fresh);
  if (fresh) Build(*d, g);
  return d->usable ? d : nullptr;
}

// An int8 product (2-D int8 weights) computed by fp32 products, where oneDNN's int8 kernels are not exact: of the
// weights as they are, or split into twice the columns (dnnl_engine.h kInt8Split), per run.
struct SplitInt8MatMul final : KernelState {
  Geometry geometry;        // the int8 product's
  DnnlMatMul whole, split;  // fp32 products of N and 2N columns, weights reordered once
  Tensor w_whole, w_split;  // the weights as floats, (K, N) and (K, 2N): the hi parts' columns, then the lo parts'
  Tensor w_from;            // the int8 weights they were made from (held: its storage cannot be reused meanwhile)
  int64_t max_abs_column = 0;  // the largest sum of |w| over one output's weights
  Tensor a, sums;              // scratch kept between runs: a as floats, the fp32 sums
};

void MakeFloatWeights(SplitInt8MatMul& d, const Tensor& b) {
  const Geometry& g = d.geometry;
  d.w_whole = Tensor::Empty(DType::kF32, {g.K, g.N});
  d.w_split = Tensor::Empty(DType::kF32, {g.K, 2 * g.N});
  const int8_t* w = b.data<int8_t>();
  float* whole = d.w_whole.mutable_data<float>();
  float* split = d.w_split.mutable_data<float>();
  std::vector<int64_t> abs_column(static_cast<size_t>(g.N), 0);
  for (int64_t k = 0; k < g.K; ++k)
    for (int64_t n = 0; n < g.N; ++n) {
      const int v = g.b_transposed ? w[n * g.K + k] : w[k * g.N + n];
      whole[k * g.N + n] = static_cast<float>(v);
      split[k * 2 * g.N + n] = SplitHigh(v);
      split[k * 2 * g.N + g.N + n] = SplitLow(v);
      abs_column[static_cast<size_t>(n)] += std::abs(v);
    }
  d.max_abs_column = *std::max_element(abs_column.begin(), abs_column.end());
  d.w_from = b;
}

// out (int32) = a x b + bias for int8 a and 2-D int8 b, exactly, by fp32 products. False where K is past
// kMaxSplitProducts or oneDNN offers only its reference kernel.
Result<bool> RunSplitInt8MatMul(KernelContext& c, const Tensor& a, const Tensor& b, const Geometry& g, const Tensor* bias, Tensor& out) {
  if (g.K > kMaxSplitProducts) return false;
  std::unique_ptr<KernelState> local;
  bool fresh = false;
  auto* d = TaskState<SplitInt8MatMul>(c.options.state, local, [&](const SplitInt8MatMul& kept) { return kept.geometry == g; }, fresh);
  if (fresh) {
    d->geometry = g;
    Build(d->whole, {0, g.M, g.K, g.N, false, false, false, g.threads});
    Build(d->split, {0, g.M, g.K, 2 * g.N, false, false, false, g.threads});
  }
  if (!d->whole.usable || !d->split.usable) return false;
  if (!(d->w_from.defined() && d->w_from.raw() == b.raw())) MakeFloatWeights(*d, b);
  const bool split = MaxAbsInt8(a, c.pool) * d->max_abs_column >= kExactInFp32;
  DnnlMatMul& m = split ? d->split : d->whole;
  if (!d->a.defined()) {
    d->a = Tensor::Empty(DType::kF32, {g.M, g.K});
    d->sums = Tensor::Empty(DType::kF32, {g.M, 2 * g.N});  // room for the split sums
  }
  Int8ToFloat(a, d->a, c.pool);
  dnnl::stream& st = DnnlStream();
  m.weights.Update(split ? d->w_split : d->w_whole, st);
  m.src.set_data_handle(d->a.mutable_raw());
  m.dst.set_data_handle(d->sums.mutable_raw());
  m.prim.execute(st, m.args);
  st.wait();
  Shape out_shape = a.shape();
  out_shape.back() = g.N;
  out = Tensor::Empty(DType::kI32, out_shape);
  JoinInt8Sums(d->sums.data<float>(), g.M, 1, g.N, split, bias ? bias->data<int32_t>() : nullptr, out.mutable_data<int32_t>(), c.pool);
  return true;
}

}  // namespace

Result<bool> RunDnnlMatMul(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out) try {
  const bool int8 = a.dtype() == DType::kI8 && b.dtype() == DType::kI8;
  if (!int8 && (a.dtype() != DType::kF32 || b.dtype() != DType::kF32)) return false;
  if (a.rank() < 2 || b.rank() != 2) return false;
  const DType out_dtype = int8 ? DType::kI32 : DType::kF32;
  if (bias && (bias->dtype() != out_dtype || bias->numel() != (b_transposed ? b.shape()[0] : b.shape()[1]))) return false;
  const int64_t K = a.shape().back(), N = b_transposed ? b.shape()[0] : b.shape()[1], M = a.numel() / std::max<int64_t>(1, K);
  if ((b_transposed ? b.shape()[1] : b.shape()[0]) != K || M == 0 || N == 0 || K == 0) return false;
  omp_set_num_threads(c.pool.size());  // before building: the primitive plans its split for this count
  const Geometry g{0, M, K, N, b_transposed, bias != nullptr && !int8, int8, c.pool.size()};  // int8: the bias after (FinishInt8Sums)
  if (int8 && !ExactInt8Products()) return RunSplitInt8MatMul(c, a, b, g, bias, out);
  std::unique_ptr<KernelState> local;
  DnnlMatMul* d = StateFor(c, local, g);
  if (!d) return false;
  dnnl::stream& st = DnnlStream();
  d->weights.Update(b, st);
  Shape out_shape = a.shape();
  out_shape.back() = N;
  out = Tensor::Empty(out_dtype, out_shape);
  d->src.set_data_handle(const_cast<std::byte*>(a.raw()));
  d->dst.set_data_handle(out.mutable_raw());
  if (bias && !int8) d->bias.set_data_handle(const_cast<std::byte*>(bias->raw()));
  d->prim.execute(st, d->args);
  st.wait();
  if (int8 && !FinishInt8Sums(out, bias, c.pool)) return false;  // not exact: the caller's integer GEMM is, at any size
  return true;
} catch (const dnnl::error& e) {
  return c.Fail(std::string("oneDNN failed: ") + e.what());
}

Result<bool> RunDnnlBatchedMatMul(KernelContext& c, const Tensor& a, const Tensor& b, Tensor& out) try {
  if (a.dtype() != DType::kF32 || b.dtype() != DType::kF32 || a.rank() < 3 || a.rank() != b.rank()) return false;
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (!std::equal(as.begin(), as.end() - 2, bs.begin())) return false;  // broadcast batches: the caller's path
  const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back(), batch = NumElements(Shape(as.begin(), as.end() - 2));
  if (bs[bs.size() - 2] != K || batch == 0 || M == 0 || N == 0 || K == 0) return false;
  omp_set_num_threads(c.pool.size());
  const Geometry g{batch, M, K, N, false, false, false, c.pool.size()};
  std::unique_ptr<KernelState> local;
  DnnlMatMul* d = StateFor(c, local, g);
  if (!d) return false;
  Shape out_shape = as;
  out_shape.back() = N;
  out = Tensor::Empty(DType::kF32, out_shape);
  d->src.set_data_handle(const_cast<std::byte*>(a.raw()));
  d->rhs.set_data_handle(const_cast<std::byte*>(b.raw()));
  d->dst.set_data_handle(out.mutable_raw());
  dnnl::stream& st = DnnlStream();
  d->prim.execute(st, d->args);
  st.wait();
  return true;
} catch (const dnnl::error& e) {
  return c.Fail(std::string("oneDNN failed: ") + e.what());
}

}  // namespace npu
