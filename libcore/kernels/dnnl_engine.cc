#include "kernels/dnnl_engine.h"

#include <algorithm>
#include <atomic>

#include "kernels/kernel_util.h"

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

bool FinishInt8Sums(Tensor& y, const Tensor* bias, ThreadPool& pool) {
  constexpr int32_t kExactInFp32 = 1 << 24;  // fp32 holds every integer up to 2^24
  const int64_t n = bias ? bias->numel() : 1;
  if (n == 0 || y.numel() % n != 0) return false;
  const int32_t* b = bias ? bias->data<int32_t>() : nullptr;
  int32_t* p = y.mutable_data<int32_t>();
  std::atomic<bool> exact = true;
  pool.ParallelFor(static_cast<size_t>(y.numel() / n), std::max<size_t>(1, kElementwiseGrain / n), [&](size_t r0, size_t r1) {
    int32_t lo = 0, hi = 0;
    for (size_t r = r0; r < r1; ++r) {
      int32_t* row = p + static_cast<int64_t>(r) * n;
      for (int64_t c = 0; c < n; ++c) {
        lo = std::min(lo, row[c]);
        hi = std::max(hi, row[c]);
        // two's complement wrap, as the cube's int32 accumulator (see ConvInt8)
        if (b) row[c] = static_cast<int32_t>(static_cast<uint32_t>(row[c]) + static_cast<uint32_t>(b[c]));
      }
    }
    if (hi >= kExactInFp32 || lo <= -kExactInFp32) exact = false;
  });
  return exact;
}

}  // namespace npu
