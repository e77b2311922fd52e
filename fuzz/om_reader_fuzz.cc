// The .om reader: header, partition table, MODEL_DEF, TASK_INFO and weights, then the SoC it names.
#include "fuzz_input.h"
#include "om/om_model.h"
#include "runtime/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  auto m = npu::LoadOm(f.path());
  if (m.ok()) (void)npu::ModelSoc(*m);
  return 0;
}
