// A whole PROF_* folder (info.json, sample.json, sliced records, done markers) exported by profparse: the tables
// and timeline, then msprof_<ts>.db.
#include "fuzz_input.h"
#include "msprof_db.h"
#include "profparse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!npu::fuzz::UnpackDirImage({data, size}, "PROF_000001_20260101000000000_FUZZ")) return 0;
  npu::profparse::Options o;
  o.exp = "on";
  o.stamp = "20260101000000";
  const std::string dir = npu::fuzz::ScratchDir() + "/PROF_000001_20260101000000000_FUZZ";
  (void)npu::profparse::ExportProfile(dir, o);
  (void)npu::profparse::ExportDb(dir, o);
  return 0;
}
