// A whole PROF_* folder (info.json, sample.json, sliced records, done markers) exported by profparse.
#include "fuzz_input.h"
#include "profparse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!npu::fuzz::UnpackDirImage({data, size}, "PROF_000001_20260101000000000_FUZZ")) return 0;
  npu::profparse::Options o;
  o.exp = "on";
  o.stamp = "20260101000000";
  (void)npu::profparse::ExportProfile(npu::fuzz::ScratchDir() + "/PROF_000001_20260101000000000_FUZZ", o);
  return 0;
}
