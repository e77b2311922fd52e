#include "kernels/dnnl_engine.h"

#include "base/file_io.h"

namespace npu {

dnnl::engine& DnnlEngine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& DnnlStream() {
  thread_local dnnl::stream s(DnnlEngine());
  return s;
}

dnnl::memory Unbound(const dnnl::memory::desc& desc) { return dnnl::memory(desc, DnnlEngine(), DNNL_MEMORY_NONE); }

ReorderedWeights::ReorderedWeights(const dnnl::memory::desc& layout, const dnnl::memory::desc& plain)
    : memory_(layout, DnnlEngine()), plain_(plain) {}

void ReorderedWeights::Update(const Tensor& w, dnnl::stream& st) {
  if (from_.defined() && from_.raw() == w.raw()) return;
  dnnl::memory source(plain_, DnnlEngine(), const_cast<std::byte*>(w.raw()));
  dnnl::reorder(source, memory_).execute(st, source, memory_);
  st.wait();
  from_ = w;
  MappedFile::DropResidentPages(w.owner(), w.bytes());
}

// Whether oneDNN's int8 products (convolution, matmul) are exact here: with VNNI they multiply and add int8
// pairs into int32 directly; without it their s8 x s8 path goes through saturating 16-bit pair sums
// (vpmaddubsw) and may scale the weights, so the results could differ from the integer arithmetic the device does.
bool ExactInt8Products() {
  static const bool exact = [] {
    const auto isa = dnnl::get_effective_cpu_isa();
    return isa == dnnl::cpu_isa::avx2_vnni || isa == dnnl::cpu_isa::avx512_core_vnni || isa == dnnl::cpu_isa::avx512_core_bf16 ||
           isa == dnnl::cpu_isa::avx512_core_amx;
  }();
  return exact;
}

}  // namespace npu
