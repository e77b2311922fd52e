#include "tool_hooks.h"

#include "models.h"
#include "runtime.h"

namespace npu::acl {

void SimulateOn(std::shared_ptr<const SocSpec> soc) {
  std::lock_guard lock(Runtime::Get().mu);
  Runtime::Get().simulated_soc = std::move(soc);
}

const Session* LoadedSession(uint32_t id, size_t profile) {
  std::lock_guard lock(Runtime::Get().mu);
  return Models::Get().SessionOf(id, profile);
}

aclError SetDumpStep(uint32_t id, uint64_t step) {
  std::lock_guard lock(Runtime::Get().mu);
  return Models::Get().SetStep(id, step, "SetDumpStep");
}

DumpTally DumpTallyOf(uint32_t id) {
  std::lock_guard lock(Runtime::Get().mu);
  return Models::Get().Tally(id);
}

std::string ProfilingDir() {
  std::lock_guard lock(Runtime::Get().mu);
  const prof::Collector* c = Runtime::Get().collector();
  return c ? c->dir() : std::string();
}

}  // namespace npu::acl
