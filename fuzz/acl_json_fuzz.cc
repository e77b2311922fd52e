// msame's acl.json: the profiler section and the dump section.
#include "debug/dump_config.h"
#include "fuzz_input.h"
#include "prof/collector.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  (void)npu::prof::ParseProfilerConfig(f.path());
  (void)npu::debug::ParseDumpConfig(f.path());
  return 0;
}
