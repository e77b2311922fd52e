// aclInit's configuration file (acl.json: dump, profiler, dump_scene), read by libascendcl through its C interface.
#include "acl/acl.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  if (aclInit(f.path().c_str()) == ACL_SUCCESS) (void)aclFinalize();
  return 0;
}
