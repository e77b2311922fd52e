// aclInit's configuration file (acl.json: dump, profiler, dump_scene), read by libascendcl through its C interface.
#include <unistd.h>

#include <cstdlib>
#include <string_view>

#include "acl/acl.h"
#include "fuzz_input.h"

namespace {

// aclInit starts the profiler, which makes its output folder, so every run happens inside the scratch folder
// (the seeds name relative paths). An input that could name a folder outside it is skipped: one with a '/', a
// backslash (a JSON escape can spell '/'), or "..". Before this, mutated seeds made folders all over / and /tmp.
bool StaysInScratch(std::string_view text) { return text.find_first_of("/\\") == text.npos && text.find("..") == text.npos; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool in_scratch = ::chdir(npu::fuzz::ScratchDir().c_str()) == 0;
  if (!in_scratch) std::abort();  // the harness cannot run without its scratch folder
  if (!StaysInScratch({reinterpret_cast<const char*>(data), size})) return 0;
  npu::fuzz::MemFile f({data, size});
  if (aclInit(f.path().c_str()) == ACL_SUCCESS) (void)aclFinalize();
  npu::fuzz::ClearScratch();
  return 0;
}
