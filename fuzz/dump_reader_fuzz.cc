// A CANN dump file: u64 header length, DumpData protobuf, then the tensors it describes.
#include "dump/dump_file.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::ReadDumpFile(f.path());
  return 0;
}
