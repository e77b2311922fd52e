// The .om reader: header (every generation), partition table, MODEL_DEF (npukit's, or CANN's ge.proto.ModelDef
// in a file CANN's ATC wrote), TASK_INFO and weights, then the SoC it names; and atc --mode=1's printer of the
// ModelDef (om/ge_json.h), whatever the mutated message holds.
#include "fuzz_input.h"
#include "base/json.h"
#include "om/ge_json.h"
#include "om/om_model.h"
#include "runtime/runtime.h"

#include <vector>

#include "om/om_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // A mutated file almost never matches its XXH3 checksum; clearing the header's checksum flag lets the
  // mutations reach the partition table, MODEL_DEF and TASK_INFO parsers behind it.
  std::vector<uint8_t> bytes(data, data + size);
  if (bytes.size() > npu::om::kOffIsChecksum) bytes[npu::om::kOffIsChecksum] = 1;
  npu::fuzz::MemFile f(bytes);
  auto m = npu::LoadOm(f.path());
  if (m.ok()) (void)npu::ModelSoc(*m);
  if (auto j = npu::OmModelDefJson(f.path()); j.ok()) (void)npu::DumpJson(j.value());
  return 0;
}
