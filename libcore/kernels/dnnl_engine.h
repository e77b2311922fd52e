// What the oneDNN kernels (conv_dnnl.cc, matmul_dnnl.cc) share: the one CPU engine, the test for a
// reference-only build, and weights reordered once into a primitive's layout. Included only by those
// files: dnnl.hpp is a large header.
#pragma once
#include <oneapi/dnnl/dnnl.hpp>
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

// Whether oneDNN's s8 x s8 -> s32 kernels compute exact integer sums on this CPU (they do with VNNI).
bool ExactInt8Products();
// Their output stage takes the int32 sums through fp32 (for the bias and the output scale, even a scale of 1), so a
// sum is exact only below 2^24 in magnitude: int8 primitives run without a bias, and FinishInt8Sums, in one pass
// over the int32 result `y` (its innermost dim the channel), checks every sum is below 2^24 (a rounded sum cannot
// come back below it) and adds `bias` (optional, one per channel) in int32. False: some sum was not exact, and `y`
// must be computed another way.
bool FinishInt8Sums(Tensor& y, const Tensor* bias, ThreadPool& pool);

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
  dnnl::memory memory_;
  dnnl::memory::desc plain_;
  // The weights last reordered, held so that their storage cannot be freed and reused for other bytes at
  // the same address.
  Tensor from_;
};

}  // namespace npu
