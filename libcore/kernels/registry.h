// Kernel registry: op type -> function computing the op's outputs on the host (fp32 reference numerics;
// other dtypes where ONNX defines them). Each kernel family file registers its schemas and kernels together.
#pragma once
#include <functional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "ir/graph.h"
#include "ir/op_schema.h"

namespace npu {

struct KernelContext {
  const Node& node;
  std::vector<Tensor> inputs;   // undefined Tensor for an omitted optional input
  std::vector<Tensor> outputs;  // filled by the kernel, one per node output
  ThreadPool& pool;

  bool has(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  const Tensor& in(size_t i) const { return inputs[i]; }
  Status Fail(std::string reason) const;  // EH0002 naming the node
};
using KernelFn = std::function<Status(KernelContext&)>;

class KernelRegistry {
 public:
  static KernelRegistry& Get();
  void Register(std::string_view type, KernelFn fn);
  const KernelFn* Find(std::string_view type) const;

 private:
  std::vector<std::pair<std::string, KernelFn>> kernels_;
};

// Registers a schema and its kernel in one call (what each family file does per op).
void RegisterOp(OpSchema schema, KernelFn kernel);
// Registers every built-in op family. Idempotent; tools call it once at start-up.
void RegisterBuiltinOps();

// Runs one node's kernel on concrete inputs.
Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool);

}  // namespace npu
