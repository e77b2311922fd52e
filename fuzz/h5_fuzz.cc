// msaccucmp's golden-data reader over libhdf5: list every dataset, read the first few.
#include "fuzz_input.h"
#include "h5_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kMaxDatasets = 8;
  npu::fuzz::MemFile f({data, size});
  auto sets = npu::cmp::ListH5Datasets(f.path());
  if (!sets.ok()) return 0;
  for (size_t i = 0; i < sets->size() && i < kMaxDatasets; ++i) (void)npu::cmp::ReadH5Dataset(f.path(), (*sets)[i].path);
  return 0;
}
