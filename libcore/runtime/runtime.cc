#include "runtime/runtime.h"

#include "kernels/registry.h"

namespace npu {

Result<Session> Session::FromOm(const std::string& path) {
  RegisterBuiltinOps();
  Session s;
  NPU_ASSIGN_OR_RETURN(s.model_, LoadOm(path));
  for (const Task& t : s.model_.tasks)
    if (!KernelRegistry::Get().Find(s.model_.graph.nodes[t.op_index].op_type))
      return Status::Error("E10003", "--model", path, "op type " + s.model_.graph.nodes[t.op_index].op_type + " has no kernel in this build");
  s.PlanLifetimes();
  return s;
}

Result<Session> Session::FromGraph(Graph g) {
  RegisterBuiltinOps();
  Session s;
  s.model_.graph = std::move(g);
  s.model_.tasks = LowerToTasks(s.model_.graph);
  s.PlanLifetimes();
  return s;
}

void Session::PlanLifetimes() {
  const Graph& g = model_.graph;
  last_use_.assign(g.values.size(), -1);
  for (size_t k = 0; k < model_.tasks.size(); ++k)
    for (int i : g.nodes[model_.tasks[k].op_index].inputs)
      if (i >= 0) last_use_[i] = static_cast<int>(k);
  for (int o : g.outputs) last_use_[o] = static_cast<int>(model_.tasks.size());
}

Status Session::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const Graph& g = model_.graph;
  if (inputs.size() != g.inputs.size())
    return Status::Error("EH0001", "--input", std::to_string(inputs.size()) + " file(s)",
                         "the model has " + std::to_string(g.inputs.size()) + " input(s)");
  std::vector<Tensor> vals(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].constant) vals[i] = *g.values[i].constant;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Value& v = g.values[g.inputs[k]];
    const Tensor& t = inputs[k];
    bool dims_ok = !v.has_shape || v.shape.size() == t.shape().size();
    for (size_t d = 0; dims_ok && v.has_shape && d < v.shape.size(); ++d) dims_ok = v.shape[d] < 0 || v.shape[d] == t.shape()[d];
    if (t.dtype() != v.dtype || !dims_ok)
      return Status::Error("EH0001", "--input", "input " + std::to_string(k) + " (" + v.name + ")",
                           "got " + std::string(DTypeName(t.dtype())) + ShapeToString(t.shape()) + ", the model expects " +
                               std::string(DTypeName(v.dtype)) + ShapeToString(v.shape));
    vals[g.inputs[k]] = t;
  }
  ThreadPool& pool = ThreadPool::Global();
  for (size_t k = 0; k < model_.tasks.size(); ++k) {
    const Task& task = model_.tasks[k];
    const Node& n = g.nodes[task.op_index];
    std::vector<Tensor> ins;
    ins.reserve(n.inputs.size());
    for (int i : n.inputs) ins.push_back(i >= 0 ? vals[i] : Tensor());
    for (TaskObserver* o : observers_) o->BeforeTask({task, n, ins, {}});
    std::vector<Tensor> outs;
    Status s = RunKernel(n, ins, outs, pool);
    if (!s.ok()) return s;
    for (TaskObserver* o : observers_) o->AfterTask({task, n, ins, outs});
    for (size_t j = 0; j < n.outputs.size(); ++j) vals[n.outputs[j]] = std::move(outs[j]);
    for (int i : n.inputs)  // release intermediates after their last reader
      if (i >= 0 && last_use_[i] == static_cast<int>(k) && !g.values[i].constant) vals[i] = Tensor();
  }
  outputs.clear();
  for (int o : g.outputs) outputs.push_back(vals[o]);
  return Status::Ok();
}

}  // namespace npu
