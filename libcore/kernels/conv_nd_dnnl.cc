// 1-D and 3-D fp32 convolutions (speech nets' Conv1d, video nets' Conv3d) on oneDNN's direct kernels. They read
// channels-last maps, which the runtime keeps for 4-D tensors only, so the input goes to (N, D, H, W, C) order and
// the result comes back around the primitive. Why: the im2col matrix and Eigen's GEMM (ConvCompute) took r3d_18,
// 8 frames of 112 x 112, 355 ms against ONNX Runtime's 224, a fifth of it packing the im2col matrix again; oneDNN's
// brgemm kernel takes its 64 -> 64 3x3x3 conv on 8 x 56 x 56 in 22 ms channels-last, 52 ms on (N, C, D, H, W)
// through its own im2col (2 threads, AVX-512 host).
#include <omp.h>

#include <memory>
#include <unordered_map>

#include "kernels/conv_dnnl.h"
#include "kernels/channels_last.h"
#include "kernels/dnnl_engine.h"

namespace npu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

// A conv's primitive and weights in its layout, built for one geometry, with the memory objects it runs on.
struct DnnlConvNd final : KernelState {
  Shape x_shape, w_shape;
  bool has_bias = false;
  int threads = 0;
  bool usable = false;  // false: oneDNN offers only its reference kernel here
  dnnl::convolution_forward prim;
  ReorderedWeights weights;
  memory src, dst, bias;
  std::unordered_map<int, memory> args;
};

bool SameBuild(const DnnlConvNd& d, const KernelContext& c) {
  return d.x_shape == c.in(0).shape() && d.w_shape == c.in(1).shape() && d.has_bias == c.has(2) && d.threads == c.pool.size();
}

// (N, C, D, H, W) dims of a map with `channels` channels and `extent` pixels per spatial dim.
memory::dims MapDims(int64_t n, int64_t channels, const Dims3& extent) { return {n, channels, extent[0], extent[1], extent[2]}; }

void Build(DnnlConvNd& d, const KernelContext& c, const ConvGeom& p) {
  d.x_shape = c.in(0).shape();
  d.w_shape = c.in(1).shape();
  d.has_bias = c.has(2);
  d.threads = c.pool.size();
  d.usable = false;
  const int64_t N = d.x_shape[0];
  const memory::desc src(MapDims(N, p.C, p.in), kF32, Tag::ndhwc), dst(MapDims(N, p.M, p.out), kF32, Tag::ndhwc);
  const memory::desc bias({p.M}, kF32, Tag::a);
  const memory::dims w_dims = p.G == 1 ? memory::dims{p.M, p.C, p.k[0], p.k[1], p.k[2]}
                                       : memory::dims{p.G, p.Mg(), p.Cg(), p.k[0], p.k[1], p.k[2]};
  memory::dims strides, dilations, pad_before, pad_after;
  for (size_t i = 0; i < 3; ++i) {
    strides.push_back(p.stride[i]);
    dilations.push_back(p.dil[i] - 1);  // oneDNN counts the taps skipped
    pad_before.push_back(p.pad[i]);
    pad_after.push_back(PadAfter(p.in[i], p.out[i], p.k[i], p.stride[i], p.dil[i], p.pad[i]));
  }
  try {
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                               memory::desc(w_dims, kF32, Tag::any), d.has_bias ? bias : memory::desc(), dst, strides,
                                               dilations, pad_before, pad_after);
    const dnnl::convolution_forward::primitive_desc pd(desc, DnnlEngine());
    if (IsReferenceImpl(pd)) return;
    d.prim = dnnl::convolution_forward(pd);
    d.weights = ReorderedWeights(pd.weights_desc(), memory::desc(w_dims, kF32, p.G == 1 ? Tag::oidhw : Tag::goidhw));
  } catch (const dnnl::error&) {
    return;  // a geometry oneDNN does not take: the caller's path
  }
  MakeConvArgs(d, src, dst, bias);
  d.usable = true;
}

}  // namespace

Result<bool> RunDnnlConvNd(KernelContext& c, const ConvGeom& p) try {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() != DType::kF32 || w.dtype() != DType::kF32 || (c.has(2) && c.in(2).dtype() != DType::kF32)) return false;
  if (x.rank() != 3 && x.rank() != 5) return false;
  omp_set_num_threads(c.pool.size());  // before the build: the primitive plans its work for the threads it sees
  std::unique_ptr<KernelState> local;
  std::unique_ptr<KernelState>& slot = c.options.state ? *c.options.state : local;
  auto* d = dynamic_cast<DnnlConvNd*>(slot.get());
  if (!d || !SameBuild(*d, c)) {
    slot = std::make_unique<DnnlConvNd>();
    d = static_cast<DnnlConvNd*>(slot.get());
    Build(*d, c, p);
  }
  if (!d->usable) return false;
  const int64_t N = x.shape()[0];
  const size_t elem = sizeof(float);
  // (N, C, pixels) -> (N, pixels, C), and back for the result.
  Tensor x_last = Tensor::Empty(DType::kF32, {N, p.InSize(), p.C});
  TransposeMatrices(x.raw(), x_last.mutable_raw(), elem, N, p.C, p.InSize(), c.pool);
  Tensor y_last = Tensor::Empty(DType::kF32, {N, p.OutSize(), p.M});
  dnnl::stream& st = DnnlStream();
  d->weights.Update(w, st);
  d->src.set_data_handle(x_last.mutable_raw());
  d->dst.set_data_handle(y_last.mutable_raw());
  if (d->has_bias) d->bias.set_data_handle(const_cast<std::byte*>(c.in(2).raw()));
  d->prim.execute(st, d->args);
  st.wait();
  Tensor y = Tensor::Empty(DType::kF32, p.OutShape(N));
  TransposeMatrices(y_last.raw(), y.mutable_raw(), elem, N, p.OutSize(), p.M, c.pool);
  c.outputs[0] = std::move(y);
  return true;
} catch (const dnnl::error& e) {
  return c.Fail(std::string("oneDNN failed: ") + e.what());
}

}  // namespace npu
