// TensorFlow import: the weight cut, the GraphDef parse (binary, or text when it looks like text), the graph
// walk (names, edges, cycles) and every op converter, then the layout pass.
#include "frontend/tf/tf_importer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::ImportTensorFlow(f.path(), {});
  return 0;
}
