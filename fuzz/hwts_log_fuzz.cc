// CANN's own HWTS task log, as profparse reads a device folder: the bytes become hwts.data.0.slice_0 (a folder
// image may add an info.json.0 and the GE task descriptions), then decode, start/end pairing and task_time.
#include <fstream>

#include "fuzz_input.h"
#include "hwts_export.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string root = "hwts_device";
  if (!npu::fuzz::UnpackDirImage({data, size}, root)) return 0;
  npu::profparse::Options o;
  o.exp = "on";
  o.stamp = "20260101000000";
  (void)npu::profparse::ExportHwtsLog(npu::fuzz::ScratchDir() + "/" + root, o);
  return 0;
}
