#include "runtime/runtime.h"

#include <malloc.h>
#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <mutex>

#include "base/file_io.h"
#include "base/half.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"
#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "kernels/registry.h"
#include "lower/lower.h"

namespace npu {
namespace {

bool AllFinite(std::span<const Tensor> ts) {
  for (const Tensor& t : ts) {
    if (!t.defined() || !IsFloat(t.dtype())) continue;
    Tensor f = t.dtype() == DType::kF64 ? CastTensor(t, DType::kF32) : ToF32(t);
    for (float v : f.span<float>())
      if (!std::isfinite(v)) return false;
  }
  return true;
}

}  // namespace

Result<std::shared_ptr<const SocSpec>> ModelSoc(const OmModel& m) {
  if (auto ini = m.attrs.find("soc_spec_ini"); ini != m.attrs.end()) {
    NPU_ASSIGN_OR_RETURN(SocSpec s, ParseSocSpec(ini->second, "the .om's embedded soc_spec"));
    return std::make_shared<const SocSpec>(std::move(s));
  }
  auto name = m.attrs.find("soc_version");
  const SocSpec* builtin = name == m.attrs.end() ? nullptr : FindSoc(name->second);
  return std::shared_ptr<const SocSpec>(std::shared_ptr<const SocSpec>(), builtin);  // not owned: built-ins live forever
}

Result<Session> Session::FromOm(const std::string& path, size_t profile) {
  RegisterBuiltinOps();
  Session s;
  NPU_ASSIGN_OR_RETURN(s.model_, LoadOm(path, profile));
  if (!s.model_.unrunnable.empty())
    return Status::Error("E10003", "--model", path, "npukit has no kernel for " + std::to_string(s.model_.unrunnable.size()) + " of its ops:" + UnsupportedList(s.model_.unrunnable),
                         "Convert the source model with npukit's atc, which maps each op to a kernel.");
  for (const Task& t : s.model_.tasks)
    if (!KernelRegistry::Get().Find(s.model_.graph.nodes[t.op_index].op_type))
      return Status::Error("E10003", "--model", path, "op type " + s.model_.graph.nodes[t.op_index].op_type + " has no kernel in this build");
  // The cost model and the kernels read a node's inputs by position: a node with fewer than its schema asks
  // for (a damaged file) stops here, named, instead of being read past its end.
  for (const Node& n : s.model_.graph.nodes)
    if (const OpSchema* schema = OpSchemaRegistry::Get().Find(n.op_type))
      if (std::string why = ArityProblem(*schema, s.model_.graph, n); !why.empty())
        return Status::Error("E10003", "--model", path, "op '" + n.name + "' (" + n.op_type + ") " + why);
  NPU_ASSIGN_OR_RETURN(s.own_soc_, ModelSoc(s.model_));
  s.exec_ = ExecContext::ForSoc(s.own_soc_.get(), false);
  s.PlanLifetimes();
  s.WidenConstants();
  s.Schedule();
  return s;
}

void Session::SetSoc(std::shared_ptr<const SocSpec> soc) {
  own_soc_ = std::move(soc);
  exec_ = ExecContext::ForSoc(own_soc_.get(), exec_.track_status);
  Schedule();
}

void Session::Schedule() {
  timing_.reset();
  retiled_ = 0;
  if (!exec_.soc) return;
  // A tiling the chip cannot hold (an .om from before tilings existed, or one tiled for another chip and run
  // with --soc_spec) is replaced by the built-in tiling for this chip.
  for (Task& t : model_.tasks) {
    if (!t.on_device()) continue;
    Work w = TaskWork(model_.graph, t, exec_.soc);
    if (w.kind == t.kind && CheckTiling(w, t.tiling, *exec_.soc).ok()) continue;
    t.kind = w.kind;
    t.tiling = DefaultTiling(w, *exec_.soc);
    t.block_dim = static_cast<uint32_t>(t.tiling.block_dim);
    t.tiling_source = "builtin";
    ++retiled_;
  }
  timing_ = ScheduleIteration(model_.graph, model_.tasks, *exec_.soc);
}

TaskEvent Session::EventFor(size_t k, std::span<const Tensor> ins, std::span<const Tensor> outs) const {
  const Task& task = model_.tasks[k];
  TaskEvent e{task, model_.graph.nodes[task.op_index], ins, outs};
  e.iteration = iterations_;
  if (timing_) {
    e.timing = &timing_->tasks[k];
    e.sim_start_ns = clock_ns_ + e.timing->start_ns;
  }
  return e;
}

void Session::EndIteration() {
  double start = clock_ns_;
  if (timing_) clock_ns_ += timing_->total_ns;
  for (TaskObserver* o : observers_) o->AfterIteration(iterations_, start, clock_ns_);
  ++iterations_;
}

Status Session::RunTiming() {
  for (size_t k = 0; k < model_.tasks.size(); ++k) {
    TaskEvent e = EventFor(k, {}, {});
    for (TaskObserver* o : observers_) o->BeforeTask(e);
    for (TaskObserver* o : observers_) o->AfterTask(e);
  }
  EndIteration();
  return Status::Ok();
}

Result<Session> Session::FromGraph(Graph g) {
  RegisterBuiltinOps();
  Session s;
  s.model_.graph = std::move(g);
  s.model_.tasks = LowerToTasks(s.model_.graph, nullptr);
  s.PlanLifetimes();
  s.WidenConstants();
  return s;
}

namespace {

// Activations are allocated and freed op by op, hundreds of times per inference. By default glibc serves blocks
// over its mmap threshold with fresh mappings (every page faulted in again) and trims the heap top back to the
// OS; keeping both in the heap lets each inference reuse the previous one's pages. Measured at 2 threads:
// efficientnet_b0 31.5 -> 25.7 ms, resnet50 78.8 -> 71.5 ms. 32 MiB is the largest threshold glibc accepts;
// larger blocks are rare (whole-tensor scratch is kept per thread).
constexpr int kMmapThresholdBytes = 32 << 20;
constexpr int kTrimThresholdBytes = 1 << 30;

void KeepFreedActivationsInHeap() {
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes);
    mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes);
  });
}

// The heap the activations come from is advised huge (MADV_HUGEPAGE, as glibc's glibc.malloc.hugetlb=1 tunable
// does for a whole process): a conv writing a map of megabytes then walks a few 2 MiB pages rather than a thousand
// 4 KiB ones. Interleaved rounds, AVX-512 machine: mnasnet1_0 0.96-0.99 of its time, efficientnet_b2 and resnet50
// 0.98 (docs/performance.md). Where the kernel's THP setting is "never" the advice changes nothing.
constexpr size_t kHeapGrowthBlock = 16 << 20;  // under the mmap threshold, so served from the heap
// The host holds a 16-bit activation in fp32: up to twice the device's feature-map bytes (FeatureMapBytes), and
// kernels' scratch beside it.
constexpr size_t kHostBytesPerDeviceByte = 2;
constexpr size_t kScratchBytes = 64 << 20;

// Grows the heap to hold `bytes` of activations, advises the new part huge and frees it again: the trim threshold
// keeps it, and later allocations are carved from it. Each process reserves once per size it has not reached yet.
void ReserveHugePageHeap(size_t bytes) {
  static std::mutex mu;
  static size_t reserved = 0;
  std::lock_guard lock(mu);
  if (bytes <= reserved) return;
  std::vector<void*> blocks;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (; reserved < bytes; reserved += kHeapGrowthBlock) {
    void* p = std::malloc(kHeapGrowthBlock);
    if (!p) break;  // what was reserved stays so; a later session tries for the rest
    blocks.push_back(p);
    lo = std::min(lo, reinterpret_cast<uintptr_t>(p));
    hi = std::max(hi, reinterpret_cast<uintptr_t>(p) + kHeapGrowthBlock);
  }
  lo = (lo + kHugePage - 1) / kHugePage * kHugePage;  // whole huge pages inside the blocks
  hi = hi / kHugePage * kHugePage;
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);  // advice: a refusal costs speed only
  for (void* p : blocks) std::free(p);
}

}  // namespace

void Session::PlanLifetimes() {
  KeepFreedActivationsInHeap();
  const Graph& g = model_.graph;
  ReserveHugePageHeap(kHostBytesPerDeviceByte * FeatureMapBytes(g, model_.tasks) + kScratchBytes);
  last_use_.assign(g.values.size(), -1);
  for (size_t k = 0; k < model_.tasks.size(); ++k)
    for (int i : g.nodes[model_.tasks[k].op_index].inputs)
      if (i >= 0) last_use_[i] = static_cast<int>(k);
  for (int o : g.outputs) last_use_[o] = static_cast<int>(model_.tasks.size());
  states_.clear();
  states_.resize(model_.tasks.size());
  PlanTasks();
}

namespace {

// The op runs as it is: no fused activation, residual or requant.
bool RunsAsIs(const Node& n, const PreparedKernel& kernel) { return !kernel.act && !kernel.residual_at && !n.has_attr(kDualQuantOutput); }

// Whether a Clip's bounds are both given and values of `held`: then it gives its input's value or a bound. A bound
// left out is fp32's extreme (the kernel computes in fp32), which clips an infinity to a value fp16 does not hold.
// Bounds given as inputs are checked with the other inputs (they must hold `held`); opset 6 gives them as attributes.
bool ClipBoundsHeld(const Node& n, DType held) {
  if (n.opset >= 11) return n.inputs.size() == 3 && n.inputs[1] >= 0 && n.inputs[2] >= 0;
  for (const char* bound : {"min", "max"}) {
    if (!n.has_attr(bound)) return false;
    const float v = n.attr_float(bound, 0.0f);
    if ((held == DType::kF16 ? HalfToFloat(FloatToHalf(v)) : BF16ToFloat(FloatToBF16(v))) != v) return false;  // NaN too
  }
  return true;
}

// A value-selecting op (OpSchema::selects_values) run as it is on float inputs that all hold its float outputs'
// dtype: its results are values of that dtype already (a MaxPool of fp16 values), so rounding them would be a
// pass that changes nothing.
bool SelectsHeldValues(const Graph& g, const Node& n, const PreparedKernel& kernel) {
  if (!RunsAsIs(n, kernel)) return false;
  std::optional<DType> held;
  for (int o : n.outputs) {
    if (o < 0 || !IsFloat(g.values[o].dtype)) continue;
    if (held && *held != g.values[o].dtype) return false;
    held = g.values[o].dtype;
  }
  if (!held || !IsHalfLike(*held)) return false;
  if (n.op_type == "Clip" && !ClipBoundsHeld(n, *held)) return false;
  return std::all_of(n.inputs.begin(), n.inputs.end(), [&](int i) { return i < 0 || !IsFloat(g.values[i].dtype) || g.values[i].dtype == *held; });
}

// Whether op `n`, which only moves bytes, gives only values that earlier tasks computed (`from_task`, per value),
// which RunTask has settled (SettleFloat32) already: then its own results need no scan. Not so for a value an
// attribute brings in (Pad's or ConstantOfShape's `value`), nor for graph inputs and constants, never settled.
bool MovesSettledValues(const Graph& g, const Node& n, const std::vector<char>& from_task) {
  if (n.has_attr("value")) return false;
  bool any_float = false;
  for (int i : n.inputs) {
    if (i < 0 || !IsFloat(g.values[i].dtype)) continue;
    if (!from_task[i]) return false;
    any_float = true;
  }
  return any_float;
}

}  // namespace

// Per task, what RunTask needs that the graph alone decides: the prepared kernel, the op's flags, and whether
// it may hand its output 0 on channels-last (when every task reading it takes that order; the net's outputs
// are converted at the end of Run).
void Session::PlanTasks() {
  const Graph& g = model_.graph;
  plans_.assign(model_.tasks.size(), {});
  std::vector<char> takes(g.values.size(), 1);  // per value: every task reading it takes channels-last
  std::vector<char> from_task(g.values.size(), 0);  // per value: an earlier task's result
  for (size_t k = 0; k < model_.tasks.size(); ++k) {
    const Node& n = g.nodes[model_.tasks[k].op_index];
    const OpSchema* schema = OpSchemaRegistry::Get().Find(n.op_type);
    TaskPlan& p = plans_[k];
    p.kernel = PrepareKernel(n);
    p.takes_channels_last = KernelRegistry::Get().TakesChannelsLast(n.op_type);
    p.moves_bytes = schema && schema->moves_bytes;
    p.moves_settled_values = p.moves_bytes && MovesSettledValues(g, n, from_task);
    p.result_is_rounded = schema && schema->selects_values && SelectsHeldValues(g, n, p.kernel);
    for (int i : n.inputs)
      if (i >= 0 && !p.takes_channels_last) takes[i] = 0;
    for (int o : n.outputs)
      if (o >= 0) from_task[o] = 1;
  }
  for (size_t k = 0; k < model_.tasks.size(); ++k) {
    const Node& n = g.nodes[model_.tasks[k].op_index];
    plans_[k].channels_last_out = !n.outputs.empty() && n.outputs[0] >= 0 && takes[n.outputs[0]];
  }
  PlanSiluPairs();
  PlanConcatPairs();
  PlanStridedViews();
  PlanActivationsInProducers();
}

namespace {

// Per value: how many node inputs and graph outputs read it.
std::vector<int> ReaderCounts(const Graph& g) {
  std::vector<int> readers(g.values.size(), 0);
  for (const Node& n : g.nodes)
    for (int i : n.inputs)
      if (i >= 0) ++readers[i];
  for (int o : g.outputs) ++readers[o];
  return readers;
}

// Concat's inputs as a reader may take them in place of its result (KernelRunOptions::concat_pieces): fp32
// 4-D maps of one batch and size, each in channels-last memory order (a map of one channel or one pixel is in
// both orders).
bool ReadableAsPieces(std::span<const Tensor> ins) {
  if (ins.empty()) return false;
  const Shape& first = ins.front().shape();
  return std::all_of(ins.begin(), ins.end(), [&](const Tensor& t) {
    const Shape& s = t.shape();
    return t.defined() && t.dtype() == DType::kF32 && s.size() == 4 && s[0] == first[0] && s[2] == first[2] && s[3] == first[3] &&
           (t.channels_last || !OrdersDiffer(s));
  });
}

}  // namespace

// DenseNet concatenates every earlier map before each BatchNormalization: on the host a Concat whose only reader
// is the task right after it, one that may take input 0 as the Concat's pieces (KernelDef::reads_concat_pieces),
// is not written out; its reader reads the pieces where they lie (one pass over the maps instead of two). The
// device runs both tasks and dumps show both, so only when no observer is attached (RunTask checks), and only on
// the runs whose pieces suit (ReadableAsPieces); otherwise the Concat runs as it is.
void Session::PlanConcatPairs() {
  const Graph& g = model_.graph;
  const std::vector<int> readers = ReaderCounts(g);
  for (size_t k = 0; k + 1 < model_.tasks.size(); ++k) {
    const Node& cat = g.nodes[model_.tasks[k].op_index];
    const Node& next = g.nodes[model_.tasks[k + 1].op_index];
    if (cat.op_type != "Concat" || plans_[k].runs_in_next || !RunsAsIs(cat, plans_[k].kernel) || cat.outputs.size() != 1) continue;
    const int out = cat.outputs[0];
    const KernelDef* def = plans_[k + 1].kernel.def;
    if (out < 0 || readers[out] != 1 || next.inputs.empty() || next.inputs[0] != out || !def || !def->reads_concat_pieces || !def->reads_concat_pieces(next))
      continue;
    const Value& v = g.values[out];
    if (!v.has_shape || v.shape.size() != 4 || NormalizeAxis(cat.attr_int("axis", 0), 4) != 1) continue;
    plans_[k].concat_to_next = true;
    plans_[k + 1].reads_concat = true;
  }
}

// A transformer slices q, k and v out of its in-projection (columns of every row: a strided copy) and splits each
// into heads (a Transpose, another copy). On the host a Slice whose only reader copies anyway
// (KernelDef::reads_strided_input) is not copied out: the reader reads the selection where it lies
// (KernelRunOptions::strided_input), one copy instead of two. Moved bytes are the same bits either way; the device
// runs both tasks and dumps show both, so only when no observer is attached (RunTask checks), and only on the runs
// whose selection is strided (KernelDef::strided_view); otherwise the Slice runs as it is.
void Session::PlanStridedViews() {
  const Graph& g = model_.graph;
  const std::vector<int> readers = ReaderCounts(g);
  std::vector<int> reader_task(g.values.size(), -1);
  for (size_t k = 0; k < model_.tasks.size(); ++k)
    for (int i : g.nodes[model_.tasks[k].op_index].inputs)
      if (i >= 0) reader_task[i] = static_cast<int>(k);
  for (size_t k = 0; k < model_.tasks.size(); ++k) {
    const Node& n = g.nodes[model_.tasks[k].op_index];
    const KernelDef* def = plans_[k].kernel.def;
    if (!def || !def->strided_view || !RunsAsIs(n, plans_[k].kernel) || n.outputs.size() != 1 || n.outputs[0] < 0) continue;
    const int out = n.outputs[0], r = reader_task[out];
    if (readers[out] != 1 || r < 0 || plans_[r].reads_concat) continue;
    const Node& reader = g.nodes[model_.tasks[r].op_index];
    const KernelDef* rdef = plans_[r].kernel.def;
    if (reader.inputs.empty() || reader.inputs[0] != out || !rdef || !rdef->reads_strided_input || !rdef->reads_strided_input(reader) ||
        !RunsAsIs(reader, plans_[r].kernel))
      continue;
    plans_[k].view_to_reader = true;
    plans_[r].reads_view = true;
  }
}

namespace {

// Activations whose in-place form gives the bits of their kernel on any chunks (scalar functions of one element).
constexpr std::string_view kMergeableActivations[] = {"Relu", "LeakyRelu", "Clip", "HardSwish"};

// An activation task as an in-place function of its one computed input: its kernel's in-place form (a Clip's
// constant bounds given as attributes, as UB fusion takes them). Empty: none.
InPlaceFn ActivationInPlace(const Graph& g, const Node& a) {
  if (std::find(std::begin(kMergeableActivations), std::end(kMergeableActivations), a.op_type) == std::end(kMergeableActivations)) return {};
  const std::optional<Node> op = ClipWithBoundAttributes(g, a);
  return op && op->inputs.size() == 1 ? KernelRegistry::Get().InPlaceForm(*op) : InPlaceFn{};
}

}  // namespace

// CANN fuses only a Relu into a depthwise conv (passes/fusion.cc), so MobileNet's ReLU6 and HardSwish after one are
// tasks of their own, and their dumps show them. On the host an activation task whose input is the previous task's
// only result, read by nothing else, runs inside that task (KernelRunOptions::then_act): on each chunk of the
// result after its own rounding, then rounded as the activation's task would round it. The same bits, one pass
// instead of two; only when no observer is attached (RunTask checks), and only where the producer's kernel finishes
// its result chunk by chunk (else the activation runs as it is).
void Session::PlanActivationsInProducers() {
  const Graph& g = model_.graph;
  const std::vector<int> readers = ReaderCounts(g);
  for (size_t k = 0; k + 1 < model_.tasks.size(); ++k) {
    TaskPlan &p = plans_[k], &a = plans_[k + 1];
    const Node& producer = g.nodes[model_.tasks[k].op_index];
    const Node& act = g.nodes[model_.tasks[k + 1].op_index];
    if (p.runs_in_next || p.concat_to_next || p.view_to_reader || p.pair_sigmoid || p.moves_bytes || a.pair_sigmoid || a.reads_concat ||
        a.reads_view || !RunsAsIs(producer, p.kernel) || !RunsAsIs(act, a.kernel) || producer.outputs.size() != 1 || act.outputs.size() != 1)
      continue;
    const int y = producer.outputs[0], z = act.outputs[0];
    if (y < 0 || z < 0 || act.inputs.empty() || act.inputs[0] != y || readers[y] != 1) continue;
    const Value &vy = g.values[y], &vz = g.values[z];
    if (vy.dtype != vz.dtype || (vy.dtype != DType::kF32 && !IsHalfLike(vy.dtype)) || !vy.has_shape || !vz.has_shape || vy.shape != vz.shape) continue;
    InPlaceFn fn = ActivationInPlace(g, act);
    if (!fn) continue;
    p.then_act = std::move(fn);
    p.then_round_to = IsHalfLike(vz.dtype) && !a.result_is_rounded ? vz.dtype : DType::kUndefined;
    ++k;  // the activation is taken
  }
  PlanSiluPairsInProducers(readers);
}

// A SiLU pair (PlanSiluPairs) of the previous task's only result, read by nothing else, runs inside that task as an
// activation does: EfficientNet's convolutions each write a map its SiLU then reads again (efficientnet_b0 force_fp16:
// the pairs were 1.3 ms against 0.8 in fp32, every map read and rounded in passes of its own). Only where the
// logistic values are the same in any chunk: the producer finishes its result in chunks of its own.
void Session::PlanSiluPairsInProducers(const std::vector<int>& readers) {
  if (!LogisticSameInAnyChunk()) return;
  const Graph& g = model_.graph;
  for (size_t k = 0; k + 2 < model_.tasks.size(); ++k) {
    TaskPlan& p = plans_[k];
    const Node& producer = g.nodes[model_.tasks[k].op_index];
    if (!plans_[k + 1].runs_in_next || !plans_[k + 2].pair_sigmoid || p.TasksTaken() || p.runs_in_next || p.concat_to_next ||
        p.view_to_reader || p.pair_sigmoid || p.moves_bytes || !RunsAsIs(producer, p.kernel) || producer.outputs.size() != 1)
      continue;
    const Node& sigmoid = g.nodes[model_.tasks[k + 1].op_index];
    const int y = producer.outputs[0], z = g.nodes[model_.tasks[k + 2].op_index].outputs[0];
    if (y < 0 || sigmoid.inputs[0] != y || readers[y] != 2) continue;  // the pair's Sigmoid and Mul read it, nothing else
    const Value &vy = g.values[y], &vz = g.values[z];
    if (vy.dtype != vz.dtype || !vy.has_shape || !vz.has_shape || vy.shape != vz.shape) continue;
    p.then_silu_sigmoid = g.values[sigmoid.outputs[0]].dtype;
    p.then_round_to = IsHalfLike(vz.dtype) ? vz.dtype : DType::kUndefined;
    k += 2;  // the pair is taken
  }
}

// torch's SiLU stays two tasks on the device (CANN has no fusion of the pair; see kernels/elementwise.cc), and
// their dumps show both. On the host, a Sigmoid whose only reader is the Mul right after it, of the Sigmoid's own
// input and the same shape and dtype, runs inside that Mul (SigmoidTimesInput): one pass over the map instead of
// two, the same bits. Only when no observer is attached (RunTask checks): observers see every task's tensors.
void Session::PlanSiluPairs() {
  const Graph& g = model_.graph;
  const std::vector<int> readers = ReaderCounts(g);
  auto same = [&](int a, int b) {
    const Value &va = g.values[a], &vb = g.values[b];
    return va.dtype == vb.dtype && va.has_shape && vb.has_shape && va.shape == vb.shape;
  };
  for (size_t k = 0; k + 1 < model_.tasks.size(); ++k) {
    const Node& s = g.nodes[model_.tasks[k].op_index];
    const Node& m = g.nodes[model_.tasks[k + 1].op_index];
    if (s.op_type != "Sigmoid" || m.op_type != "Mul" || !RunsAsIs(s, plans_[k].kernel) || !RunsAsIs(m, plans_[k + 1].kernel)) continue;
    if (s.inputs.size() != 1 || s.outputs.size() != 1 || m.inputs.size() != 2 || m.outputs.size() != 1) continue;
    const int x = s.inputs[0], sig = s.outputs[0], y = m.outputs[0];
    const int x_at = m.inputs[0] == x && m.inputs[1] == sig ? 0 : m.inputs[1] == x && m.inputs[0] == sig ? 1 : -1;
    if (x < 0 || sig < 0 || y < 0 || x_at < 0 || readers[sig] != 1 || !same(x, sig) || !same(sig, y)) continue;
    const DType t = g.values[x].dtype;
    if (t != DType::kF32 && !IsHalfLike(t)) continue;
    plans_[k].runs_in_next = true;
    plans_[k + 1].pair_sigmoid = true;
    plans_[k + 1].pair_x = x_at;
    ++k;  // the Mul is taken
  }
}

bool Session::HeldInF32(const std::vector<Tensor>& vals, int v) const {
  return v >= 0 && vals[v].defined() && vals[v].dtype() == DType::kF32 && IsHalfLike(model_.graph.values[v].dtype);
}

Tensor Session::AsStored(Tensor t, int v) const {
  DType want = v >= 0 ? model_.graph.values[v].dtype : DType::kUndefined;
  return t.defined() && t.dtype() == DType::kF32 && IsHalfLike(want) ? FromF32(t, want) : t;  // exact: see RunTask
}

// Weights stay fp16 in the model (and in dumps); kernels compute in fp32, so each is widened once here.
void Session::WidenConstants() {
  const Graph& g = model_.graph;
  widened_.assign(g.values.size(), Tensor());
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].constant && IsHalfLike(g.values[i].constant->dtype())) widened_[i] = ToF32(*g.values[i].constant);
}

Status Session::CheckInput(size_t k, const Tensor& t) const {
  const Graph& g = model_.graph;
  if (k >= g.inputs.size())
    return Status::Error("EH0001", "--input", std::to_string(k + 1) + " file(s)", "the model has " + std::to_string(g.inputs.size()) + " input(s)");
  const Value& v = g.values[g.inputs[k]];
  const std::string which = "input " + std::to_string(k) + " (" + v.name + ")";
  auto expected = [&](const Shape& want, std::string_view format) {
    return Status::Error("EH0001", "--input", which,
                         "got " + std::string(DTypeName(t.dtype())) + ShapeToString(t.shape()) + ", the model expects " + std::string(DTypeName(v.dtype)) +
                             ShapeToString(want) + std::string(format));
  };
  if (v.device_format) {
    if (t.dtype() != v.dtype || t.shape() != DeviceShapeOf(v)) return expected(DeviceShapeOf(v), " " + std::string(FormatName(*v.device_format)));
    return Status::Ok();
  }
  bool dims_ok = !v.has_shape || v.shape.size() == t.shape().size();
  for (size_t d = 0; dims_ok && v.has_shape && d < v.shape.size(); ++d) dims_ok = v.shape[d] < 0 || v.shape[d] == t.shape()[d];
  if (t.dtype() != v.dtype || !dims_ok) return expected(v.shape, "");
  for (const InputRange& r : model_.input_ranges) {
    if (r.name != v.name || r.min.size() != t.shape().size()) continue;
    for (size_t d = 0; d < r.min.size(); ++d)
      if (t.shape()[d] < r.min[d] || (r.max[d] >= 0 && t.shape()[d] > r.max[d]))
        return Status::Error("EH0001", "--input", which,
                             "dim " + std::to_string(d) + " is " + std::to_string(t.shape()[d]) + ", outside the range " + std::to_string(r.min[d]) + "~" +
                                 std::to_string(r.max[d]) + " the model was converted with", "Give an input within the --input_shape ranges (atc --mode=6 shows them).");
  }
  if (v.name == kShapeDataInput && !model_.profiles.empty() && t.ToInt64Vector() != model_.profiles.values[model_.profile])
    return Status::Error("EH0001", "--input", std::string(kShapeDataInput),
                         "it selects a profile other than the loaded one (" + model_.profiles.Describe(model_.profile) + ")");
  return Status::Ok();
}

Status Session::Run(const std::vector<Tensor>& inputs, std::vector<Tensor>& outputs) {
  const Graph& g = model_.graph;
  BufferPool::Use activations(pool_);
  faulted_.reset();
  concats_read_in_place_ = 0;
  views_read_in_place_ = 0;
  results_over_inputs_ = 0;
  activations_in_producers_ = 0;
  activation_done_by_ = -1;
  concat_pieces_.clear();  // nothing a failed run left behind reaches this one's tasks
  views_.clear();
  if (inputs.size() != g.inputs.size())
    return Status::Error("EH0001", "--input", std::to_string(inputs.size()) + " file(s)",
                         "the model has " + std::to_string(g.inputs.size()) + " input(s)");
  std::vector<Tensor> vals(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].constant) vals[i] = *g.values[i].constant;
  may_hold_non_finite_.assign(g.values.size(), 0);
  for (size_t k = 0; k < inputs.size(); ++k) {
    NPU_RETURN_IF_ERROR(CheckInput(k, inputs[k]));
    const Value& v = g.values[g.inputs[k]];
    Tensor t = inputs[k];
    if (v.device_format) {  // handed over in the device layout (atc --is_input_adjust_hw_layout): kernels want the origin one
      NPU_ASSIGN_OR_RETURN(t, FromDevice(t, *v.device_format, v.shape, v.device_groups));
    }
    vals[g.inputs[k]] = t;
  }
  for (size_t k = 0; k < model_.tasks.size(); ++k) NPU_RETURN_IF_ERROR(RunTask(k, vals));
  EndIteration();
  outputs.clear();
  for (int o : g.outputs) {
    const Value& v = g.values[o];
    vals[o] = AsStored(ToChannelsFirst(vals[o], ThreadPool::Global()), o);
    if (!v.device_format) {
      outputs.push_back(vals[o]);
      continue;
    }
    NPU_ASSIGN_OR_RETURN(Tensor device, ToDevice(vals[o], *v.device_format, v.device_groups));  // atc --is_output_adjust_hw_layout
    outputs.push_back(std::move(device));
  }
  return Status::Ok();
}

// One task: kernels compute fp16/bf16 ops in fp32 (inputs widened exactly), and each result is narrowed
// once to the dtype atc assigned it, under the SoC's overflow mode: that is the NPU's rounding.
Status Session::RunTask(size_t k, std::vector<Tensor>& vals) {
  const Graph& g = model_.graph;
  const Task& task = model_.tasks[k];
  const Node& n = g.nodes[task.op_index];
  const TaskPlan& plan = plans_[k];
  const bool inputs_non_finite = std::any_of(n.inputs.begin(), n.inputs.end(), [&](int i) { return i >= 0 && may_hold_non_finite_[i]; });
  const auto flag_outputs = [&](bool non_finite) {
    for (int o : n.outputs)
      if (o >= 0) may_hold_non_finite_[o] = non_finite;
  };
  flag_outputs(inputs_non_finite);  // what a task read in place by its reader passes on
  if (plan.runs_in_next && observers_.empty()) return Status::Ok();  // computed by the next task (PlanSiluPairs)
  if (activation_done_by_ == static_cast<int>(k)) {  // computed by the task before it (PlanActivationsInProducers)
    activation_done_by_ = -1;
    ++activations_in_producers_;
    ReleaseLastUses(n, k, vals);
    return Status::Ok();
  }
  ThreadPool& pool = ThreadPool::Global();
  std::vector<Tensor> ins;
  ins.reserve(n.inputs.size());
  KernelRunOptions options{&states_[k], plan.channels_last_out};
  options.inputs_may_hold_non_finite = inputs_non_finite;
  if (!n.outputs.empty() && n.outputs[0] >= 0) options.output_dtype = g.values[n.outputs[0]].dtype;
  for (int i : n.inputs) {
    if (i >= 0 && !plan.takes_channels_last) vals[i] = ToChannelsFirst(vals[i], pool);  // converted once, for every later reader
    ins.push_back(i >= 0 ? vals[i] : Tensor());
  }
  if (plan.concat_to_next && observers_.empty() && ReadableAsPieces(ins)) {  // read by the next task (PlanConcatPairs)
    concat_pieces_ = std::move(ins);
    ++concats_read_in_place_;
    return Status::Ok();
  }
  const std::vector<Tensor> pieces = plan.reads_concat ? std::exchange(concat_pieces_, {}) : std::vector<Tensor>{};
  options.concat_pieces = pieces;
  if (plan.view_to_reader && observers_.empty())  // read where it lies by its reader (PlanStridedViews)
    if (auto view = plan.kernel.def->strided_view(n, ins)) {
      views_[n.outputs[0]] = std::move(*view);
      ++views_read_in_place_;
      return Status::Ok();
    }
  std::optional<StridedSource> view;
  if (plan.reads_view)
    if (auto it = views_.find(n.inputs[0]); it != views_.end()) {
      view = std::move(it->second);
      views_.erase(it);
      options.strided_input = &*view;
    }
  // Observers (dumps, overflow records) see every tensor in (N, C, H, W) and in its own dtype.
  auto seen = [&](std::span<const Tensor> ts, const std::vector<int>& ids) {
    std::vector<Tensor> v(ts.begin(), ts.end());
    for (size_t j = 0; j < v.size() && j < ids.size(); ++j) v[j] = AsStored(ToChannelsFirst(v[j], pool), ids[j]);
    return v;
  };
  std::vector<Tensor> ins_seen;
  if (!observers_.empty()) {
    ins_seen = seen(ins, n.inputs);
    for (TaskObserver* o : observers_) o->BeforeTask(EventFor(k, ins_seen, {}));
  }
  const bool moves_bytes = plan.moves_bytes;
  const int residual = plan.kernel.residual_at ? static_cast<int>(*plan.kernel.residual_at) : -1;  // keeps its dtype: see AddResidual
  if (residual >= 0 && static_cast<size_t>(residual) < n.inputs.size() && n.inputs[residual] >= 0)
    options.residual_dtype = g.values[n.inputs[residual]].dtype;
  // Compute kernels read fp32. An op that only moves bytes runs on the 16-bit tensors as they are, unless
  // one of them is held in fp32 (see RunTask's end): then on all of them in fp32, which moves the same values.
  bool widen = !moves_bytes || std::any_of(n.inputs.begin(), n.inputs.end(), [&](int i) { return HeldInF32(vals, i); });
  // Without observers the kernel gets the last reference to each intermediate read by nothing after this task, so
  // that a kernel that writes its result element for element over an input may (ResultOver).
  std::vector<Tensor> compute = observers_.empty() ? std::move(ins) : ins;
  for (size_t j = 0; widen && j < compute.size(); ++j)
    if (compute[j].defined() && IsHalfLike(compute[j].dtype()) && (moves_bytes || static_cast<int>(j) != residual))
      compute[j] = widened_[n.inputs[j]].defined() ? widened_[n.inputs[j]] : ToF32(compute[j]);
  handed_over_.clear();
  if (observers_.empty() && !moves_bytes) {
    for (size_t j = 0; j < compute.size() && j < n.inputs.size(); ++j)
      if (compute[j].defined() && ReadsLast(n.inputs[j], k)) handed_over_.push_back(compute[j].raw());
    ReleaseLastUses(n, k, vals);
  }
  std::vector<Tensor> outs;
  FloatStatus st;
  const bool pair = plan.pair_sigmoid && observers_.empty();
  // A 16-bit result is rounded below, or by the kernel as it writes it, where the kernel can (KernelRunOptions).
  auto rounds = [&](size_t j) { return IsHalfLike(g.values[n.outputs[j]].dtype) && !moves_bytes && !plan.result_is_rounded && !pair; };
  bool rounded_by_kernel = false;
  if (!n.outputs.empty() && n.outputs[0] >= 0 && rounds(0)) {
    options.round_output_to = g.values[n.outputs[0]].dtype;
    options.output_rounded = &rounded_by_kernel;
  }
  bool ran_next_activation = false;
  const InPlaceFn silu = plan.then_silu_sigmoid ? SigmoidTimesInputInPlace(*plan.then_silu_sigmoid, exec_) : InPlaceFn{};
  if (plan.TasksTaken() && observers_.empty()) {
    options.then_act = plan.then_silu_sigmoid ? &silu : &plan.then_act;
    options.then_round_to = plan.then_round_to;
    options.then_applied = &ran_next_activation;
    options.then_act_is_half_silu = plan.then_silu_sigmoid == DType::kF16 && plan.then_round_to == DType::kF16;
  }
  if (pair) {
    const DType sigmoid_dtype = g.values[n.inputs[static_cast<size_t>(1 - plan.pair_x)]].dtype;
    outs.push_back(SigmoidTimesInput(std::move(compute[static_cast<size_t>(plan.pair_x)]), sigmoid_dtype, g.values[n.outputs[0]].dtype, exec_, &st, pool));
  }
  if (Status run = pair ? Status::Ok() : RunPrepared(n, plan.kernel, std::move(compute), outs, pool, exec_, &st, options); !run.ok()) {
    if (run.code() != kTaskFaultCode) return run;
    // The device's exception: the runtime reports the op, the stream and the task.
    faulted_ = k;
    if (!observers_.empty()) {
      const TaskEvent e = EventFor(k, ins_seen, {});
      for (TaskObserver* o : observers_) o->OnTaskFault(e, run);
    }
    return run.with_context(std::string(task.engine == Engine::kAiCpu ? "AI CPU" : "AI Core") + " exception in task " + std::to_string(task.task_id) +
                            " on stream " + std::to_string(task.stream_id));
  }
  // A 16-bit result is rounded to its dtype's values but held in fp32 (one pass, no copy to convert back
  // for the next compute op); AsStored gives the 16-bit tensor where one is needed. Moved bytes are already
  // such values.
  for (size_t j = 0; j < outs.size() && j < n.outputs.size(); ++j) {
    DType want = g.values[n.outputs[j]].dtype;
    if (!outs[j].defined() || outs[j].dtype() != DType::kF32) continue;
    if (IsHalfLike(want)) {
      if (rounds(j) && !(j == 0 && rounded_by_kernel)) outs[j] = RoundToDTypeValues(std::move(outs[j]), want, exec_, &st, static_cast<int>(j));
    } else if (exec_.soc && !plan.moves_settled_values) {  // moved values were settled where they were computed
      SettleFloat32(outs[j], exec_, &st, static_cast<int>(j));
    }
  }
  // A saturating SoC's rounding (and SettleFloat32) leaves no Inf or NaN in a result: nothing to pass on there, else
  // every conv after a saturated value would leave its fast path.
  flag_outputs(!exec_.saturate() && (inputs_non_finite || st.out_of_range > 0 || st.non_finite > 0));
  if (st.first_index >= 0 && st.first_output >= 0 && static_cast<size_t>(st.first_output) < outs.size() && outs[st.first_output].channels_last)
    st.first_index = ChannelsFirstIndex(outs[st.first_output].shape(), st.first_index);  // recorded in memory order
  if (!observers_.empty()) {
    std::vector<Tensor> outs_seen = seen(outs, n.outputs);
    TaskEvent done = EventFor(k, ins_seen, outs_seen);
    done.status = &st;
    done.overflow = exec_.soc && (st.out_of_range || (st.non_finite && AllFinite(ins) && AllFinite(pieces)));
    for (TaskObserver* o : observers_) o->AfterTask(done);
  }
  if (!outs.empty() && outs[0].defined() && std::find(handed_over_.begin(), handed_over_.end(), outs[0].raw()) != handed_over_.end())
    ++results_over_inputs_;
  for (size_t j = 0; j < n.outputs.size(); ++j) vals[n.outputs[j]] = std::move(outs[j]);
  if (ran_next_activation) {  // output 0 holds the result of the task(s) taken: the only readers of it
    const size_t last = k + plan.TasksTaken();
    const int z = g.nodes[model_.tasks[last].op_index].outputs[0];
    vals[z] = vals[n.outputs[0]];
    may_hold_non_finite_[z] = may_hold_non_finite_[n.outputs[0]];
    activation_done_by_ = static_cast<int>(last);
  }
  ReleaseLastUses(n, k, vals);
  return Status::Ok();
}

bool Session::ReadsLast(int value, size_t k) const {
  return value >= 0 && last_use_[value] == static_cast<int>(k) && !model_.graph.values[value].constant;
}

// Releases the intermediates task k (node n) was the last reader of.
void Session::ReleaseLastUses(const Node& n, size_t k, std::vector<Tensor>& vals) const {
  for (int i : n.inputs)
    if (ReadsLast(i, k)) vals[i] = Tensor();
}

}  // namespace npu
