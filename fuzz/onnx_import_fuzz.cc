// ONNX import: protobuf parse, checks, shape inference and conversion to the Ascend IR graph.
#include "frontend/onnx/onnx_importer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::ImportOnnx(f.path(), {});
  return 0;
}
