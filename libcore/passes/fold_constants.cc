#include "base/thread_pool.h"
#include "ir/op_schema.h"
#include "kernels/registry.h"
#include "passes/pass_manager.h"

namespace npu {

namespace {
// Folding these would bake large tensors into the model for no gain, or they have no inputs to fold.
bool Foldable(const Node& n, const Graph& g) {
  if (const OpSchema* s = OpSchemaRegistry::Get().Find(n.op_type); s && s->random) return false;
  if (n.op_type == "ConstantOfShape" || n.op_type == "Expand" || n.op_type == "Tile" || n.op_type == "Range") {
    // Only small results: they are typically shape arithmetic.
    for (int o : n.outputs)
      if (!g.values[o].has_shape || NumElements(g.values[o].shape) < 0 || NumElements(g.values[o].shape) > 4096) return false;
  }
  for (int i : n.inputs)
    if (i >= 0 && !g.values[i].constant) return false;
  return true;
}
}  // namespace

Status FoldConstantsPass(Graph& g) {
  std::vector<bool> folded(g.nodes.size(), false);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    NPU_RETURN_IF_ERROR(InferNode(g, n));
    bool all_const = true;
    for (int o : n.outputs) all_const &= g.values[o].constant.has_value();
    if (!all_const && Foldable(n, g)) {
      std::vector<Tensor> ins, outs;
      for (int i : n.inputs) ins.push_back(i >= 0 ? *g.values[i].constant : Tensor());
      Status s = RunKernel(n, std::move(ins), outs, ThreadPool::Global());
      if (!s.ok()) return s.with_context("constant folding of " + n.name);
      for (size_t j = 0; j < n.outputs.size(); ++j) {
        Value& v = g.values[n.outputs[j]];
        v.constant = outs[j];
        v.dtype = outs[j].dtype();
        v.shape = outs[j].shape();
        v.has_shape = true;
      }
      all_const = true;
    }
    folded[k] = all_const;
  }
  std::vector<Node> kept;
  for (size_t k = 0; k < g.nodes.size(); ++k)
    if (!folded[k]) kept.push_back(std::move(g.nodes[k]));
  g.nodes = std::move(kept);
  g.RemoveDeadNodes();
  return Status::Ok();
}

}  // namespace npu
