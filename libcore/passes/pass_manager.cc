#include "passes/pass_manager.h"

#include <chrono>

#include "base/log.h"

namespace npu {

Status PassManager::Run(Graph& g) {
  for (const auto& p : passes_) {
    if (disabled_.count(p.name)) continue;
    size_t before = g.nodes.size();
    auto t0 = std::chrono::steady_clock::now();
    Status s = p.run(g);
    double ms = log::MsSince(t0);
    timings_.push_back({p.name, ms, before, g.nodes.size()});
    NPU_LOG(kInfo, "PASS", p.name << ": " << ms << " ms, nodes " << before << " -> " << g.nodes.size());
    if (!s.ok()) return s;
    if (after_) NPU_RETURN_IF_ERROR(after_(p.name, g));
  }
  return Status::Ok();
}

}  // namespace npu
