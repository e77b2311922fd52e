// --fusion_switch_file in both of CANN's forms (JSON and "PassName:off" lines).
#include "fuzz_input.h"
#include "passes/fusion.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  std::vector<std::string> warnings;
  (void)npu::LoadFusionSwitchFile(f.path(), warnings);
  return 0;
}
