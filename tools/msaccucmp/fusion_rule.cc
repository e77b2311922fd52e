#include "fusion_rule.h"

#include "om/model_json.h"

namespace npu::cmp {

Result<FusionRule> ReadFusionRule(const std::string& path, const std::string& flag) {
  NPU_ASSIGN_OR_RETURN(ModelJson m, ReadModelJson(path, flag));
  const Graph& g = m.graph;
  FusionRule r;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    FusionOp op{m.ids[k], n.name, ShownType(n), {}, n.original_names, n.outputs.size()};
    for (int v : n.inputs) op.inputs.push_back(ValueRef(g, v));
    r.by_name.emplace(op.name, r.ops.size());
    r.ops.push_back(std::move(op));
  }
  return r;
}

}  // namespace npu::cmp
