// A platform .ini given with --soc_spec.
#include <string_view>

#include "soc/soc_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)npu::ParseSocSpec(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.ini");
  return 0;
}
