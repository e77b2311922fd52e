// atc --insert_op_conf: the aipp_op {} prototxt.
#include "frontend/aipp/aipp.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::LoadAippConfig(f.path());
  return 0;
}
