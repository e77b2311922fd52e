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
  memory src, dst, bias;
  std::unordered_map<int, memory> args;
};

void Build(DnnlMatMul& d, const Geometry& g) {
  d.geometry = g;
  const auto in_dt = g.int8 ? kS8 : kF32, out_dt = g.int8 ? kS32 : kF32;
  const memory::desc src({g.M, g.K}, in_dt, Tag::ab), dst({g.M, g.N}, out_dt, Tag::ab), bias({1, g.N}, out_dt, Tag::ab);
  try {
    dnnl::matmul::desc desc(src, memory::desc({g.K, g.N}, in_dt, Tag::any), g.has_bias ? bias : memory::desc(), dst);
    dnnl::matmul::primitive_desc pd(desc, DnnlEngine());
    if (IsReferenceImpl(pd)) return;
    d.prim = dnnl::matmul(pd);
    d.weights = ReorderedWeights(pd.weights_desc(), memory::desc({g.K, g.N}, in_dt, g.b_transposed ? Tag::ba : Tag::ab));
  } catch (const dnnl::error&) {
    return;  // a geometry oneDNN does not take: the caller's path
  }
  d.src = Unbound(src);
  d.dst = Unbound(dst);
  d.args = {{DNNL_ARG_SRC, d.src}, {DNNL_ARG_WEIGHTS, d.weights.memory()}, {DNNL_ARG_DST, d.dst}};
  if (g.has_bias) {
    d.bias = Unbound(bias);
    d.args.emplace(DNNL_ARG_BIAS, d.bias);
  }
  d.usable = true;
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
  const Geometry g{M, K, N, b_transposed, bias != nullptr && !int8, int8, c.pool.size()};  // int8: the bias after (FinishInt8Sums)
  std::unique_ptr<KernelState> local;
  std::unique_ptr<KernelState>& slot = c.options.state ? *c.options.state : local;
  auto* d = dynamic_cast<DnnlMatMul*>(slot.get());
  if (!d || d->geometry != g) {
    slot = std::make_unique<DnnlMatMul>();
    d = static_cast<DnnlMatMul*>(slot.get());
    Build(*d, g);
  }
  if (!d->usable) return false;
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

}  // namespace npu
