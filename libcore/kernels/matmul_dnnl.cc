#include "kernels/matmul_dnnl.h"

#include <omp.h>

#include <unordered_map>

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

// Rows of the weights (N) from which the transposed layout pays, where oneDNN leaves the weights' layout plain
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
  std::unique_ptr<KernelState>& slot = c.options.state ? *c.options.state : local;
  auto* d = dynamic_cast<DnnlMatMul*>(slot.get());
  if (!d || d->geometry != g) {
    slot = std::make_unique<DnnlMatMul>();
    d = static_cast<DnnlMatMul*>(slot.get());
    Build(*d, g);
  }
  return d->usable ? d : nullptr;
}

}  // namespace

Result<bool> RunDnnlMatMul(KernelContext& c, const Tensor& a, const Tensor& b, bool b_transposed, const Tensor* bias, Tensor& out) try {
  const bool int8 = a.dtype() == DType::kI8 && b.dtype() == DType::kI8;
  if (int8 ? !ExactInt8Products() : a.dtype() != DType::kF32 || b.dtype() != DType::kF32) return false;
  if (a.rank() < 2 || b.rank() != 2) return false;
  const DType out_dtype = int8 ? DType::kI32 : DType::kF32;
  if (bias && (bias->dtype() != out_dtype || bias->numel() != (b_transposed ? b.shape()[0] : b.shape()[1]))) return false;
  const int64_t K = a.shape().back(), N = b_transposed ? b.shape()[0] : b.shape()[1], M = a.numel() / std::max<int64_t>(1, K);
  if ((b_transposed ? b.shape()[1] : b.shape()[0]) != K || M == 0 || N == 0 || K == 0) return false;
  omp_set_num_threads(c.pool.size());  // before building: the primitive plans its split for this count
  const Geometry g{0, M, K, N, b_transposed, bias != nullptr && !int8, int8, c.pool.size()};  // int8: the bias after (FinishInt8Sums)
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
