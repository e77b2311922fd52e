// What npukit's own tools ask of AscendCL beyond its C interface. msame runs its models through the C interface,
// as CANN's msame does, and reports more than a program can ask for: coded errors, the simulated time, the
// dump counts. These calls are not exported from libascendcl.so; msame links the library's objects.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "acl/acl_base.h"
#include "base/status.h"
#include "runtime/runtime.h"

namespace npu::acl {

// The Status behind the thread's last failed call: libcore's own (code, parameter, value) where libcore explained
// the failure, else E19999 naming the call and its AscendCL code.
Status RecentStatus();
// Models loaded from now on are simulated on `soc` instead of the SoC they were converted for (msame --soc_spec);
// null: their own.
void SimulateOn(std::shared_ptr<const SocSpec> soc);
// Shape profile `profile`'s session of loaded model `id` (every profile loads with the model), or null.
const Session* LoadedSession(uint32_t id, size_t profile);
// The dump step of model `id`'s next execution (msame --shard numbers a shard's steps as one whole run would).
aclError SetDumpStep(uint32_t id, uint64_t step);
// What model `id`'s dumps wrote so far (over every profile).
struct DumpTally {
  bool on = false;        // a dump section applies to the model
  bool overflow = false;  // ... for overflow detection (dump_debug)
  uint64_t files = 0, overflows = 0;
  std::string path;  // the dump_path
};
DumpTally DumpTallyOf(uint32_t id);
// The running collection's PROF_* folder ("" when none runs).
std::string ProfilingDir();

}  // namespace npu::acl
