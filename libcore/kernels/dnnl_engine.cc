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
    : storage_(HugePageStorage(layout.get_size())),
      memory_(storage_ ? dnnl::memory(layout, DnnlEngine(), storage_.get()) : dnnl::memory(layout, DnnlEngine())),
      plain_(plain) {}

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

int MaxAbsInt8(const Tensor& t, ThreadPool& pool) {
  const int8_t* p = t.data<int8_t>();
  std::atomic<int> found = 0;
  pool.ParallelFor(static_cast<size_t>(t.numel()), kElementwiseGrain, [&](size_t b, size_t e) {
    int m = 0;
    for (size_t i = b; i < e; ++i) m = std::max(m, std::abs(static_cast<int>(p[i])));
    int seen = found.load();
    while (m > seen && !found.compare_exchange_weak(seen, m)) {
    }
  });
  return found.load();
}

void Int8ToFloat(const Tensor& from, Tensor& to, ThreadPool& pool) {
  const int8_t* in = from.data<int8_t>();
  float* out = to.mutable_data<float>();
  pool.ParallelFor(static_cast<size_t>(from.numel()), kElementwiseGrain, [&](size_t b, size_t e) { std::copy(in + b, in + e, out + b); });
}

void JoinInt8Sums(const float* f, int64_t rows, int64_t groups, int64_t per_group, bool split, const int32_t* bias, int32_t* y,
                  ThreadPool& pool) {
  const int64_t columns = groups * per_group, width = split ? 2 * columns : columns;
  pool.ParallelFor(static_cast<size_t>(rows), std::max<size_t>(1, kElementwiseGrain / static_cast<size_t>(width)), [&](size_t b, size_t e) {
    for (auto r = static_cast<int64_t>(b); r < static_cast<int64_t>(e); ++r) {
      const float* in = f + r * width;
      int32_t* row = y + r * columns;
      if (split) {
        for (int64_t g = 0; g < groups; ++g) {
          const float* hi = in + g * 2 * per_group;
          for (int64_t j = 0; j < per_group; ++j)
            row[g * per_group + j] = kInt8Split * static_cast<int32_t>(hi[j]) + static_cast<int32_t>(hi[per_group + j]);
        }
      } else {
        for (int64_t j = 0; j < columns; ++j) row[j] = static_cast<int32_t>(in[j]);
      }
      if (bias)
        for (int64_t j = 0; j < columns; ++j) row[j] = static_cast<int32_t>(static_cast<uint32_t>(row[j]) + static_cast<uint32_t>(bias[j]));
    }
  });
}

}  // namespace npu
