// fp32 convolutions outside RunDnnlConv's 2-D path on oneDNN's direct kernels: 3-D Conv (video nets' Conv3d; conv.cc
// keeps 1-D ones on its own path, and says why) and 2-D and 3-D ConvTranspose (GAN generators, segmentation decoders). oneDNN's kernels
// read channels-last maps, which the runtime keeps for 4-D Conv results only, so the input goes to (N, spatial..., C)
// order and the result comes back around the primitive. Why: the im2col matrix and Eigen's GEMM (ConvCompute) took
// r3d_18, 8 frames of 112 x 112, 355 ms against ONNX Runtime's 224, a fifth of it packing the im2col matrix again;
// oneDNN's brgemm kernel takes its 64 -> 64 3x3x3 conv on 8 x 56 x 56 in 22 ms channels-last, 52 ms on
// (N, C, D, H, W) through its own im2col (2 threads, AVX-512 host). ConvTranspose was a GEMM and a scatter-add
// (Col2Im): a DCGAN generator took 3.3 times ONNX Runtime's time (docs/performance.md).
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
  bool usable = false;  // false: oneDNN offers only its reference kernel here, or no kernel
  dnnl::primitive prim;  // a convolution_forward, or a deconvolution_forward for ConvTranspose
  ReorderedWeights weights;
  memory src, dst, bias;
  std::unordered_map<int, memory> args;
};

bool SameBuild(const DnnlConvNd& d, const KernelContext& c) {
  return d.x_shape == c.in(0).shape() && d.w_shape == c.in(1).shape() && d.has_bias == c.has(2) && d.threads == c.pool.size();
}

// The memory layouts of one spatial rank: the maps channels-last, the weights as ONNX stores them (Conv's
// (M, C/G, k...), ConvTranspose's (C, M/G, k...)), without and with groups.
struct RankTags {
  Tag map, conv_weights, grouped_conv_weights, transposed_weights, grouped_transposed_weights;
};
RankTags TagsOf(size_t rank) {
  if (rank == 2) return {Tag::nhwc, Tag::oihw, Tag::goihw, Tag::iohw, Tag::giohw};
  return {Tag::ndhwc, Tag::oidhw, Tag::goidhw, Tag::iodhw, Tag::giodhw};
}

// (N, channels, spatial...) dims of a map of the geometry's rank, `extent` per spatial dim.
memory::dims MapDims(int64_t n, int64_t channels, const Dims3& extent, size_t rank) {
  memory::dims dims = {n, channels};
  for (size_t i = rank == 2 ? 1 : 0; i < 3; ++i) dims.push_back(extent[i]);
  return dims;
}

// Takes the primitive of `pd` and its weights' layout, unless oneDNN offers only its reference kernel.
template <class Primitive>
bool Adopt(DnnlConvNd& d, const typename Primitive::primitive_desc& pd, const memory::desc& plain_weights) {
  if (IsReferenceImpl(pd)) return false;
  d.prim = Primitive(pd);
  d.weights = ReorderedWeights(pd.weights_desc(), plain_weights);
  return true;
}

void Build(DnnlConvNd& d, const KernelContext& c, const ConvGeom& p, bool transposed) {
  d.x_shape = c.in(0).shape();
  d.w_shape = c.in(1).shape();
  d.has_bias = c.has(2);
  d.threads = c.pool.size();
  d.usable = false;
  const int64_t N = d.x_shape[0];
  const RankTags tags = TagsOf(p.rank);
  const memory::desc src(MapDims(N, p.C, p.in, p.rank), kF32, tags.map), dst(MapDims(N, p.M, p.out, p.rank), kF32, tags.map);
  const memory::desc bias({p.M}, kF32, Tag::a);
  memory::dims w_dims = p.G == 1 ? memory::dims{p.M, p.C} : memory::dims{p.G, p.Mg(), p.Cg()};
  memory::dims strides, dilations, pad_before, pad_after;
  for (size_t i = p.rank == 2 ? 1 : 0; i < 3; ++i) {
    w_dims.push_back(p.k[i]);
    strides.push_back(p.stride[i]);
    dilations.push_back(p.dil[i] - 1);  // oneDNN counts the taps skipped
    pad_before.push_back(p.pad[i]);
    // ConvTranspose: what makes oneDNN's output size the op's (output_padding lowers it; oneDNN may refuse below 0).
    pad_after.push_back(transposed ? (p.in[i] - 1) * p.stride[i] + (p.k[i] - 1) * p.dil[i] + 1 - p.pad[i] - p.out[i]
                                   : PadAfter(p.in[i], p.out[i], p.k[i], p.stride[i], p.dil[i], p.pad[i]));
  }
  const memory::desc any_weights(w_dims, kF32, Tag::any), none;
  try {
    if (transposed) {
      const memory::desc plain(w_dims, kF32, p.G == 1 ? tags.transposed_weights : tags.grouped_transposed_weights);
      const dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src, any_weights,
                                                   d.has_bias ? bias : none, dst, strides, dilations, pad_before, pad_after);
      if (!Adopt<dnnl::deconvolution_forward>(d, {desc, DnnlEngine()}, plain)) return;
    } else {
      const memory::desc plain(w_dims, kF32, p.G == 1 ? tags.conv_weights : tags.grouped_conv_weights);
      const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, any_weights,
                                                 d.has_bias ? bias : none, dst, strides, dilations, pad_before, pad_after);
      if (!Adopt<dnnl::convolution_forward>(d, {desc, DnnlEngine()}, plain)) return;
    }
  } catch (const dnnl::error&) {
    return;  // a geometry oneDNN does not take: the caller's path
  }
  MakeConvArgs(d, src, dst, bias);
  d.usable = true;
}

}  // namespace

Result<bool> RunDnnlConvNd(KernelContext& c, const ConvGeom& p, bool transposed) try {
  const Tensor &x = c.in(0), &w = c.in(1);
  if (x.dtype() != DType::kF32 || w.dtype() != DType::kF32 || (c.has(2) && c.in(2).dtype() != DType::kF32)) return false;
  if (transposed ? x.rank() != 4 && x.rank() != 5 : x.rank() != 5) return false;
  omp_set_num_threads(c.pool.size());  // before the build: the primitive plans its work for the threads it sees
  std::unique_ptr<KernelState> local;
  bool fresh = false;
  auto* d = TaskState<DnnlConvNd>(c.options.state, local, [&](const DnnlConvNd& kept) { return SameBuild(kept, c); }, fresh);
  if (fresh) Build(*d, c, p, transposed);
  if (!d->usable) return false;
  const Tensor in = ToChannelsFirst(x, c.pool);
  const int64_t N = in.shape()[0];
  const size_t elem = sizeof(float);
  // (N, C, pixels) -> (N, pixels, C), and back for the result.
  Tensor x_last = Tensor::Empty(DType::kF32, {N, p.InSize(), p.C});
  TransposeMatrices(in.raw(), x_last.mutable_raw(), elem, N, p.C, p.InSize(), c.pool);
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
