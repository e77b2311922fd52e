// What the oneDNN kernels (conv_dnnl.cc, conv_nd_dnnl.cc, matmul_dnnl.cc) share: the one CPU engine, the test for a
// reference-only build, and weights reordered once into a primitive's layout. Included only by those
// files: dnnl.hpp is a large header.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
#include <memory>
#include <string_view>

#include "base/thread_pool.h"
#include "ir/tensor.h"

namespace npu {

dnnl::engine& DnnlEngine();
// The calling thread's stream on that engine (made once per thread, not per primitive run).
dnnl::stream& DnnlStream();
// A memory object on the engine without data: a kernel keeps it with its primitive and points it at each
// run's tensor (set_data_handle), instead of creating one per run.
dnnl::memory Unbound(const dnnl::memory::desc& desc);
// A conv primitive's maps as such memory objects (src, dst and, where `state.has_bias`, bias: members of `state`)
// and its arguments with `state.weights`, in `state.args`. For the states of RunDnnlConv and RunDnnlConvNd.
template <class ConvState>
void MakeConvArgs(ConvState& state, const dnnl::memory::desc& src, const dnnl::memory::desc& dst, const dnnl::memory::desc& bias) {
  state.src = Unbound(src);
  state.dst = Unbound(dst);
  state.args = {{DNNL_ARG_SRC, state.src}, {DNNL_ARG_WEIGHTS, state.weights.memory()}, {DNNL_ARG_DST, state.dst}};
  if (state.has_bias) {
    state.bias = Unbound(bias);
    state.args.emplace(DNNL_ARG_BIAS, state.bias);
  }
}

// Whether oneDNN's s8 x s8 -> s32 kernels compute exact integer sums on this CPU (they do with VNNI).
bool ExactInt8Products();
// Their output stage takes the int32 sums through fp32 (for the bias and the output scale, even a scale of 1), so a
// sum is exact only below 2^24 in magnitude: int8 primitives run without a bias, and FinishInt8Sums, in one pass
// over the int32 result `y` (its innermost dim the channel), checks every sum is below 2^24 (a rounded sum cannot
// come back below it) and adds `bias` (optional, one per channel) in int32. False: some sum was not exact, and `y`
// must be computed another way.
bool FinishInt8Sums(Tensor& y, const Tensor* bias, ThreadPool& pool);

// int8 products as exact fp32 ones, where oneDNN's int8 kernels are not (RunSplitInt8Conv, RunDnnlMatMul): fp32
// holds every integer below kExactInFp32, so a sum of integer products is exact in any order while every partial
// sum stays below it. The weights as they are where max|x| * sum|w| per output stays below it, else split as
// kInt8Split * hi + lo (|hi| <= 8, 0 <= lo <= 15): products of at most 128 * 15, exact up to kMaxSplitProducts per
// output.
inline constexpr int kInt8Split = 16;
inline constexpr int64_t kExactInFp32 = int64_t{1} << 24;
inline constexpr int64_t kMaxSplitProducts = kExactInFp32 / (128 * (kInt8Split - 1));
// The high and low parts of an int8 weight: v = kInt8Split * hi + lo.
inline float SplitHigh(int v) { return static_cast<float>(v >> 4); }  // floor(v / 16): an arithmetic shift
inline float SplitLow(int v) { return static_cast<float>(v & (kInt8Split - 1)); }
// The largest |v| of an int8 tensor.
int MaxAbsInt8(const Tensor& t, ThreadPool& pool);
// `from` (int8) into `to` (fp32, as many elements), element by element.
void Int8ToFloat(const Tensor& from, Tensor& to, ThreadPool& pool);
// y (rows x groups * per_group int32) = each output's sum plus `bias` (optional, one per column; added with the
// accumulator's two's complement wrap, as FinishInt8Sums adds it), from fp32 sums `f`: per row, the groups' outputs
// in order, or, when `split`, per group its per_group hi sums then its per_group lo sums (kInt8Split * hi + lo).
void JoinInt8Sums(const float* f, int64_t rows, int64_t groups, int64_t per_group, bool split, const int32_t* bias, int32_t* y,
                  ThreadPool& pool);


// oneDNN 2.6 answers some geometries only with its reference kernels (a few GFLOP/s): we take ours there.
template <class PrimitiveDesc>
bool IsReferenceImpl(const PrimitiveDesc& pd) {
  return std::string_view(pd.impl_info_str()).starts_with("ref");
}

// A primitive's weights in its own (blocked) layout. Model constants are reordered once; weights computed
// per run, every run.
class ReorderedWeights {
 public:
  ReorderedWeights() = default;
  // `layout`: the primitive's weights_desc(); `plain`: how the weights tensor lays them out.
  ReorderedWeights(const dnnl::memory::desc& layout, const dnnl::memory::desc& plain);
  // Reorders `w` unless it holds the bytes reordered last time. Then lets the source's pages go when they
  // are a mapped model file's (MappedFile::DropResidentPages): the reordered copy is what the primitive
  // reads, and the weights need not be resident twice.
  void Update(const Tensor& w, dnnl::stream& st);
  const dnnl::memory& memory() const { return memory_; }

 private:
  // memory_'s bytes, advised huge where they span huge pages: a fully connected layer at batch 1 streams its
  // weights from memory once per inference (AlexNet's first: 151 MB), and walks 2 MiB pages rather than 4 KiB.
  std::shared_ptr<void> storage_;
  dnnl::memory memory_;
  dnnl::memory::desc plain_;
  // The weights last reordered, held so that their storage cannot be freed and reused for other bytes at
  // the same address.
  Tensor from_;
};

}  // namespace npu
