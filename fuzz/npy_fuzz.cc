// numpy .npy: magic, version, header dict (descr, fortran_order, shape), data.
#include "dump/npy.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::ReadNpy(f.path());
  return 0;
}
