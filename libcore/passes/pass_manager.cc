#include "passes/pass_manager.h"

#include <chrono>

#include "base/log.h"
#include "ir/op_schema.h"

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
  }
  return Status::Ok();
}

Status InferShapesPass(Graph& g) { return InferGraph(g); }

PassManager DefaultPipeline() {
  PassManager pm;
  pm.Add({"FoldConstants", FoldConstantsPass});
  pm.Add({"InferShapes", InferShapesPass});
  return pm;
}

}  // namespace npu
