// MindSpore AIR import: the ModelDef parse, the GE reader (descs, inline Const data, restored reshapes, op inputs)
// and every GE op mapping (frontend/ge/ge_ops.cc).
#include "frontend/ge/air_importer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::ImportAir(f.path(), {});
  return 0;
}
