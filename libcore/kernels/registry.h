// Kernel registry: op type -> one KernelDef, the function computing the op's outputs on the host (fp32 reference
// numerics; other dtypes where ONNX defines them) and how the runtime calls it. The ops' schemas register apart
// (ops/schemas.h), as ONNX Runtime keeps ONNX's schemas apart from its execution providers: importers and
// inference need no kernel. Running a node (RunKernel and the fused epilogue and residual) is run_kernel.cc's.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "ir/graph.h"
#include "ir/node_attrs.h"
#include "ir/op_schema.h"
#include "kernels/numerics.h"

namespace npu {

// An elementwise op as an in-place pass over fp32 values, with the same arithmetic as its kernel: how a
// fused activation (UB fusion's epilogue) runs inside the kernel that makes the values, while they are
// still in cache, instead of as a second pass over the whole tensor.
using InPlaceFn = std::function<void(std::span<float>)>;

// What a kernel keeps between runs of one task of a session (one per task): primitives built and weights
// reordered once, for the input shapes the kernel saw last.
struct KernelState {
  virtual ~KernelState() = default;
};

// The task's state of type S (KernelRunOptions::state; without a slot, `local`, for this run only): the one kept
// there when it is an S that `fits` takes, else a new S in its place, which `fresh` flags for the caller to build.
template <class S, class Fits>
S* TaskState(std::unique_ptr<KernelState>* task_slot, std::unique_ptr<KernelState>& local, Fits fits, bool& fresh) {
  std::unique_ptr<KernelState>& slot = task_slot ? *task_slot : local;
  auto* kept = dynamic_cast<S*>(slot.get());
  fresh = !kept || !fits(*kept);
  if (fresh) {
    slot = std::make_unique<S>();
    kept = static_cast<S*>(slot.get());
  }
  return kept;
}

// The elements of `base` that a strided selection (a Slice's) picks, as a tensor of `shape` would hold them:
// element i of that tensor, at index (i_0, ..., i_n), is base's element offset + sum of i_d * strides[d].
struct StridedSource {
  Tensor base;
  int64_t offset = 0;
  std::vector<int64_t> strides;
  Shape shape;
};

// What the runtime offers a kernel beyond its inputs.
struct KernelRunOptions {
  std::unique_ptr<KernelState>* state = nullptr;  // this task's slot; null: the kernel keeps nothing
  bool channels_last_out = false;  // every reader of output 0 takes a channels-last tensor (channels_last.h)
  DType residual_dtype = DType::kUndefined;  // a fused residual's dtype in the graph (it may come held in fp32)
  DType output_dtype = DType::kUndefined;    // output 0's dtype in the graph (a dual-output requant reads it as stored)
  // Output 0's 16-bit dtype when the runtime rounds the task's result to it, which a kernel may do itself
  // (KernelContext::TakeChunkFinish); then *output_rounded is set and the runtime's pass is skipped.
  DType round_output_to = DType::kUndefined;
  bool* output_rounded = nullptr;
  // Input 0 as the pieces of the channel Concat that made it, which the runtime left to this task
  // (KernelDef::reads_concat_pieces): fp32 4-D maps in channels-last memory order, in concat order; input 0 itself
  // is then undefined. Empty: input 0 is as given.
  std::span<const Tensor> concat_pieces = {};
  // Input 0 as the strided selection that would have been copied into it, which the runtime left to this task
  // (KernelDef::reads_strided_input); input 0 itself is then undefined. Null: input 0 is as given.
  const StridedSource* strided_input = nullptr;
  // An input may hold an Inf or a NaN: a task before this one met one in its result (the runtime's 16-bit rounding
  // records them). Kernels whose fast path spreads them over whole tiles (npukit's Winograd kernel) take their direct
  // path instead of computing both.
  bool inputs_may_hold_non_finite = false;
  // The next task's activation, when the runtime runs it inside this task (Session::PlanActivationsInProducers): a
  // kernel that finishes output 0 chunk by chunk runs it on each chunk after this task's own activation and
  // rounding, then rounds the chunk to then_round_to (a 16-bit dtype; else none), and *then_applied is set. Else
  // the next task runs as it is.
  const InPlaceFn* then_act = nullptr;
  DType then_round_to = DType::kUndefined;
  bool* then_applied = nullptr;
  // then_act is the SiLU pair with an fp16 Sigmoid and then_round_to fp16: a finish may run it and the roundings
  // around it in one walk (HalfSiluWhileFinite, kernels/logistic.h).
  bool then_act_is_half_silu = false;
};

// What a kernel that writes output 0 (fp32) chunk by chunk runs on each chunk right after writing it, while it is
// in cache: the fused activation it took, then the runtime's 16-bit rounding it took, then the next task's
// activation and its rounding (KernelRunOptions::then_act). Empty: nothing.
// A kernel running a ChunkFinish over more values than this calls it on pieces of this many, so that each step
// (activation, rounding, the next task's activation and rounding) walks a piece before the next step does: 16 KiB,
// which the L1 cache holds through all of them.
constexpr size_t kFinishChunk = 1 << 12;
// Multiply-adds from which a kernel of npukit's own (the depthwise conv, the row product) runs on every thread: below
// it the fork (about 2 us, bench/fork_join) costs more than the split saves. oneDNN splits even ShuffleNet's
// 14 x 14 x 116 depthwise conv (204K), 7 us on 2 threads, where one took 13.
constexpr int64_t kParallelMultiplyAdds = 1 << 16;
struct ChunkFinish {
  const InPlaceFn* act = nullptr;
  ChunkRounding* round = nullptr;
  const InPlaceFn* then_act = nullptr;
  ChunkRounding* then_round = nullptr;
  bool then_half_silu = false;  // KernelRunOptions::then_act_is_half_silu
  explicit operator bool() const { return act || round || then_act; }
  void operator()(std::span<float> chunk, size_t at) const;  // `at`: the chunk's first flat index in output 0
};

struct KernelContext {
  const Node& node;
  std::vector<Tensor> inputs;   // undefined Tensor for an omitted optional input
  std::vector<Tensor> outputs;  // filled by the kernel, one per node output
  ThreadPool& pool;
  const ExecContext& exec;  // SoC and overflow mode (the reference path's is IEEE, no SoC)
  FloatStatus status;       // what this task's float status word records
  // The node's fused activation, when a kernel may apply it to its fp32 results (see RunKernel); a kernel
  // that did sets epilogue_applied, else it runs as a pass of its own afterwards.
  InPlaceFn epilogue;
  bool epilogue_applied = false;
  // A fused residual (fp32, with fp32 inputs) the kernel may add to its result before the epilogue; a kernel
  // that did sets residual_applied. A kernel given one applies the epilogue only after adding it.
  Tensor residual;
  bool residual_applied = false;
  KernelRunOptions options;
  // The runtime's rounding of output 0 (options.round_output_to), offered when nothing runs on the result after
  // the kernel; a kernel that took it (TakeChunkFinish) sets output_rounded.
  ChunkRounding* round_output = nullptr;
  bool output_rounded = false;
  // The rounding of the next task's result (options.then_round_to); then_applied: a kernel took options.then_act.
  ChunkRounding* then_round = nullptr;
  bool then_applied = false;

  // For a kernel that writes output 0 in fp32 chunk by chunk: the fused activation (when `take_act` and one is
  // offered) and after it the 16-bit rounding (when offered and no activation is left for later), to run on every
  // chunk; and once all of that is in the finish, the next task's activation and rounding (options.then_act).
  // Taking them commits the kernel to run the result on every element of output 0.
  ChunkFinish TakeChunkFinish(bool take_act);

  bool has(size_t i) const { return i < inputs.size() && inputs[i].defined(); }
  const Tensor& in(size_t i) const { return inputs[i]; }
  Status Fail(std::string reason) const;  // EH0002 naming the node
  // The task faulted on its data (an index out of range, a read past a tensor): on a device, the AI Core (or AI
  // CPU) exception. EH0003 (kTaskFaultCode) naming the node; the runtime adds the stream and task.
  Status Fault(std::string reason) const;
  // Narrows an fp32 result to fp16/bf16 with the context's overflow mode, recording into `status`.
  Tensor Narrow(const Tensor& f32, DType to, int output = 0) { return NarrowFloat(f32, to, exec, &status, output); }
};
using KernelFn = std::function<Status(KernelContext&)>;
inline constexpr std::string_view kTaskFaultCode = "EH0003";

// How a kernel takes fp16/bf16 inputs.
enum class Halves {
  kNative,  // as they are: it computes in them, only moves bytes, or decides per call (then it calls WithWidenedHalves)
  kWiden,   // widened to fp32 and its outputs narrowed back under the context's overflow mode (WithWidenedHalves)
};

// Everything the runtime knows of an op type's kernel, registered once (ONNX Runtime's KernelDefBuilder).
struct KernelDef {
  KernelFn fn;
  Halves halves = Halves::kNative;
  bool channels_last = false;  // takes channels-last inputs as they come (channels_last.h); else they are converted
  std::function<InPlaceFn(const Node&)> in_place = {};  // its form as a fused epilogue (elementwise ops), when it has one
  // Whether a node of the type may read input 0 as the pieces of a channel Concat (KernelRunOptions::concat_pieces)
  // rather than as one tensor; empty: never.
  std::function<bool(const Node&)> reads_concat_pieces = {};
  // Output 0 as a strided selection of input 0 (a Slice of a row's columns), for a reader that copies anyway to
  // take in place of the copy; nullopt where this run's result is not one (or is a view already). Empty: never.
  std::function<std::optional<StridedSource>(const Node&, std::span<const Tensor>)> strided_view = {};
  // Whether a node of the type may read input 0 as a StridedSource (KernelRunOptions::strided_input); empty: never.
  std::function<bool(const Node&)> reads_strided_input = {};
};

class KernelRegistry {
 public:
  static KernelRegistry& Get();
  void Register(std::string_view type, KernelDef def);  // a later registration of the type replaces the earlier
  const KernelDef* Find(std::string_view type) const;   // null when the type has no kernel; stable while the process runs
  bool TakesChannelsLast(std::string_view type) const;
  InPlaceFn InPlaceForm(const Node& op) const;  // empty when the op type has none

 private:
  struct NameHash {  // looks a string_view up without making a string
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, KernelDef, NameHash, std::equal_to<>> kernels_;  // node-based: Find's pointers stay valid
};

// UB fusion's epilogue and fused residual: see kEpilogueOp and kEpilogueResidualInput in ir/node_attrs.h.
// AddResidual may apply the activation's in-place form `act` (may be null) in the same pass, and then round the sum to
// the output's 16-bit dtype (`round_out`, may be null; given only when nothing runs on the result after it); it says
// which it did.
struct ResidualAdded {
  bool act_applied = false;
  bool rounded = false;  // round_out took every element; the caller merges its exceptions
};
Result<ResidualAdded> AddResidual(const Node& fused, std::vector<Tensor>& outputs, const Tensor& residual, DType residual_dtype,
                                  ThreadPool& pool, const ExecContext& exec, FloatStatus* status, const InPlaceFn* act,
                                  ChunkRounding* round_out = nullptr);
// Runs a fused op's absorbed activation, `act` (built from the op's _epilogue attributes), on its output 0: in place
// with `in_place` (its in-place form, when it has one) on an fp32 result nothing else holds, else as a kernel.
Status RunEpilogue(const Node& act, const InPlaceFn& in_place, std::vector<Tensor>& outputs, ThreadPool& pool, const ExecContext& exec,
                   FloatStatus* status);

// torch's SiLU, Sigmoid -> Mul(x, Sigmoid(x)), as the runtime runs the pair when nothing observes it: one pass
// over x instead of two. Each chunk is the Sigmoid's kernel on the chunks that kernel uses (so the same bits),
// rounded to `sigmoid_dtype` when that is a 16-bit dtype as its task's result would be, then multiplied by x.
// `x` is fp32 (16-bit values widened). The result is the Mul's; with a 16-bit `out_dtype` it is also rounded to
// it in the same pass, its exceptions recorded in `status` as the runtime's rounding would (the
// runtime then does not round it again). Given the only reference to x (moved in), it is written over x.
Tensor SigmoidTimesInput(Tensor x, DType sigmoid_dtype, DType out_dtype, const ExecContext& exec, FloatStatus* status, ThreadPool& pool);
// The same pair on any chunk, in place and before the Mul's rounding: for the task that produces x to run it as it
// finishes its result (KernelRunOptions::then_act; the caller rounds to the Mul's dtype). Its bits are
// SigmoidTimesInput's only where the logistic values are the same in any chunk (LogisticSameInAnyChunk).
InPlaceFn SigmoidTimesInputInPlace(DType sigmoid_dtype, const ExecContext& exec);

// Registers the kernel of an op type (what each family file does per op; its schema is ops/'s): a plain function
// (Halves::kNative, channels-first inputs, no in-place form), or the whole definition.
void RegisterKernel(std::string_view type, KernelFn kernel);
void RegisterKernel(std::string_view type, KernelDef def);
// Registers every built-in op: the schemas (ops/schemas.h) and the kernels. Idempotent; tools call it once.
void RegisterBuiltinOps();

// What running a node needs from its op type and attributes: found once per task by a session (a kernel
// lookup and an epilogue node per run were a tenth of a small net's time), per call by RunKernel.
struct PreparedKernel {
  const KernelDef* def = nullptr;  // null: no kernel registered for the op type (an error when run)
  std::optional<int64_t> residual_at;  // a fused residual's input index (kEpilogueResidualInput)
  std::optional<Node> act;  // the fused activation as a node of its own (kEpilogueOp)
  InPlaceFn in_place;  // act's in-place form, when it has one
};
PreparedKernel PrepareKernel(const Node& node);
// RunKernel with what PrepareKernel(node) returned.
Status RunPrepared(const Node& node, const PreparedKernel& kernel, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool,
                   const ExecContext& exec, FloatStatus* status, KernelRunOptions options = {});

// Runs one node's kernel on concrete inputs with the fp32 reference numerics.
Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool);
// Same, under an execution context; the kernel's float status is added to `status` when given.
Status RunKernel(const Node& node, std::vector<Tensor> inputs, std::vector<Tensor>& outputs, ThreadPool& pool,
                 const ExecContext& exec, FloatStatus* status, KernelRunOptions options = {});

}  // namespace npu
