#include "kernels/dnnl_engine.h"

#include "base/file_io.h"

namespace npu {

dnnl::engine& DnnlEngine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

void ReorderedWeights::Update(const Tensor& w, const dnnl::memory::desc& plain, dnnl::stream& st) {
  if (from.defined() && from.raw() == w.raw()) return;
  dnnl::memory source(plain, DnnlEngine(), const_cast<std::byte*>(w.raw()));
  dnnl::reorder(source, memory).execute(st, source, memory);
  st.wait();
  from = w;
  MappedFile::DropResidentPages(w.owner(), w.bytes());
}

}  // namespace npu
