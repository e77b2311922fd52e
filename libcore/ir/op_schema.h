// Operator schemas: arity, engine and shape/dtype inference. Adding an op means
// registering a schema (ops/<family>.cc, in this registry) and a kernel (kernels/registry.h), nothing else.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

enum class Engine { kCube, kVector, kAiCpu };

// What inference sees of one node: its inputs (dtype, shape, constant value if known) and the outputs to fill.
struct InferContext {
  const Node& node;
  std::vector<const Value*> in;  // nullptr for omitted optional inputs
  std::vector<Value*> out;

  size_t num_inputs() const { return in.size(); }
  bool has_input(size_t i) const { return i < in.size() && in[i] != nullptr; }
  const Tensor* const_input(size_t i) const { return has_input(i) && in[i]->constant ? &*in[i]->constant : nullptr; }
  // Sets output i; pass has_shape=false when only the dtype is known.
  void set_output(size_t i, DType t, Shape s, bool has_shape = true);
  Status Fail(std::string reason) const;  // E10001-style error naming the node
};
using InferFn = std::function<Status(InferContext&)>;

struct OpSchema {
  std::string type;
  int min_inputs = 1, max_inputs = 1;
  int min_outputs = 1, max_outputs = 1;
  Engine engine = Engine::kVector;
  // (Mixed-precision list membership is data per SoC family: passes/mixlist/<family>.json.)
  InferFn infer;
  // Moves bytes without arithmetic (Reshape, Transpose, Concat, ...): runs on fp16/bf16 as they are. Other
  // kernels see fp16/bf16 inputs widened to fp32 and their results narrowed once (correct rounding).
  bool moves_bytes = false;
  // Float inputs whose dtype precision assignment never changes (Resize scales, Dropout ratio).
  std::vector<int> fixed_dtype_inputs = {};
  // Draws random numbers (TF's RandomUniform): never folded into a constant, it runs in every inference.
  bool random = false;
  // Its attributes decide its outputs' dtype (AscendDequant's `dtype`): precision modes leave the outputs alone.
  bool output_dtype_from_attrs = false;
  // Each float output element is one of its float inputs' elements, or a value every float dtype holds (0, -inf):
  // MaxPool, Relu, Max, ReduceMax, Abs, Clip (of bounds the dtype holds)... Where its float inputs already hold its
  // output's 16-bit dtype, the result is already that dtype's values and the runtime does not round it again.
  // Last, and set by name: schemas initialise the fields above by position.
  bool selects_values = false;
};

class OpSchemaRegistry {
 public:
  static OpSchemaRegistry& Get();
  void Register(OpSchema schema);
  const OpSchema* Find(std::string_view type) const;
  std::vector<std::string> Types() const;

 private:
  std::vector<OpSchema> schemas_;
};

// Whether `n` has the inputs and outputs its schema allows: every input below min_inputs present, the
// counts in range. The reason when not (empty when fine); InferNode checks it before any inference runs.
std::string ArityProblem(const OpSchema& s, const Graph& g, const Node& n);

// Runs each node's inference in order, filling Value dtype/shape (and constants where inference can
// compute them, such as Shape of a static tensor). Errors name the node.
Status InferGraph(Graph& g);
// Inference for one node (used by passes that interleave inference with folding).
Status InferNode(Graph& g, const Node& n);

// Inference helpers shared by many ops.
Status InferSameAsInput0(InferContext& c);
Status InferBroadcast(InferContext& c);        // numpy broadcasting, dtype of input 0
Status InferBroadcastBool(InferContext& c);    // same shape, bool result
Result<Shape> BroadcastShapes(const Shape& a, const Shape& b);
int64_t NormalizeAxis(int64_t axis, int64_t rank);  // negative axes count from the end

}  // namespace npu
