#include "sim/schedule.h"

#include <algorithm>
#include <cstdio>
#include <list>
#include <unordered_map>

namespace npu {
namespace {

// L2 as an LRU cache of whole tensors (values): what a task reads or writes becomes most recent; the least
// recent go when the total passes the capacity. Tensors larger than L2 never stay. L2 is write-back: what a task
// writes stays dirty in L2, and a dirty tensor pushed out is written back to DRAM then, on the DRAM bandwidth of
// the task whose accesses pushed it out ("the old data needs to be written back to the GM during the
// replacement (this process occupies the GM bandwidth)": CANN's Ascend C best practices, "Setting a Proper L2
// CacheMode").
class L2Model {
 public:
  explicit L2Model(double capacity) : capacity_(capacity) {}
  bool Resident(int value) const {
    auto p = pinned_.find(value);
    return where_.count(value) > 0 || (p != pinned_.end() && p->second);
  }
  // Reserves L2 for `value` outside the LRU part (it becomes resident when first touched).
  void Pin(int value, double bytes) {
    pinned_[value] = false;
    capacity_ -= bytes;
  }
  // A write that does not allocate: the value's old copy (a previous iteration's) is invalid.
  void Evict(int value) {
    if (auto it = where_.find(value); it != where_.end()) {
      used_ -= it->second->bytes;
      order_.erase(it->second);
      where_.erase(it);
    }
  }
  // Makes `value` most recent (`dirty`: just written); returns the dirty bytes this pushes out to DRAM.
  double Touch(int value, double bytes, bool dirty) {
    if (auto p = pinned_.find(value); p != pinned_.end()) {
      p->second = true;
      return 0;
    }
    if (auto it = where_.find(value); it != where_.end()) dirty = dirty || it->second->dirty;
    Evict(value);
    if (bytes > capacity_) return 0;
    order_.push_front({value, bytes, dirty});
    where_[value] = order_.begin();
    used_ += bytes;
    double written_back = 0;
    while (used_ > capacity_) {
      const Line& old = order_.back();
      used_ -= old.bytes;
      if (old.dirty) written_back += old.bytes;
      where_.erase(old.value);
      order_.pop_back();
    }
    return written_back;
  }

 private:
  struct Line {
    int value;
    double bytes;
    bool dirty;
  };
  double capacity_, used_ = 0;
  std::list<Line> order_;
  std::unordered_map<int, std::list<Line>::iterator> where_;
  std::unordered_map<int, bool> pinned_;  // value -> loaded yet
};

double ValueBytes(const Value& v) {
  double n = static_cast<double>(DTypeSize(v.dtype));
  if (v.has_shape)
    for (int64_t d : v.shape) n *= static_cast<double>(std::max<int64_t>(d, 1));
  return n;
}

L2State HitsOf(const Graph& g, const Node& n, const L2Model& l2) {
  double in = 0, in_hit = 0, w = 0, w_hit = 0;
  for (int i : n.inputs) {
    if (i < 0) continue;
    double b = ValueBytes(g.values[i]);
    bool hit = l2.Resident(i);
    if (g.values[i].constant) w += b, w_hit += hit ? b : 0;
    else in += b, in_hit += hit ? b : 0;
  }
  return {in > 0 ? in_hit / in : 0, w > 0 ? w_hit / w : 0};
}

// When each AI core is next free. A task's blocks go to the cores as they free up, as the hardware block scheduler
// dispatches them (simulator.md §1.7): a block starts on the earliest-free core once the task's launch is done, so
// another stream's task takes the cores this one leaves idle, and a task wider than the free cores runs part of its
// blocks when the others finish. With one stream every core is free when a task starts, so its blocks run in
// waves of `cores` and the task takes its cost model's time.
class CoreClock {
 public:
  explicit CoreClock(int cores) : free_(static_cast<size_t>(std::max(cores, 1)), 0.0) {}
  // Cores still busy at `t` (running other streams' blocks).
  int BusyAt(double t) const {
    return static_cast<int>(std::count_if(free_.begin(), free_.end(), [t](double f) { return f > t; }));
  }
  // The earliest a block may start on some core, from `ready` on.
  double FirstStart(double ready) const { return std::max(ready, *std::min_element(free_.begin(), free_.end())); }
  // Runs `blocks` blocks of `block_ns` each from `ready` on; returns when the last one ends.
  double Run(int blocks, double block_ns, double ready) {
    double end = ready;
    for (int b = 0; b < blocks; ++b) {
      auto core = std::min_element(free_.begin(), free_.end());
      *core = std::max(*core, ready) + block_ns;
      end = std::max(end, *core);
    }
    return end;
  }

 private:
  std::vector<double> free_;
};

// What task `t` leaves in L2: its inputs and outputs become most recent. Returns the dirty bytes that pushes out.
double UpdateL2(const Graph& g, const Node& n, const Task& t, const SocSpec& soc, L2Model& l2) {
  if (!t.on_device()) {  // a view aliases its input's bytes: resident if they are
    if (!n.inputs.empty() && n.inputs[0] >= 0 && l2.Resident(n.inputs[0]))
      for (int o : n.outputs) l2.Touch(o, ValueBytes(g.values[o]), false);
    return 0;
  }
  double written_back = 0;
  for (int i : n.inputs)
    if (i >= 0) written_back += l2.Touch(i, ValueBytes(g.values[i]), false);
  bool bypass = n.attr_list_has(kL2PolicyAttr, kL2BypassOutputs);
  // The cost model writes an output to L2 when it fits half of it (cost_model.cc); a larger one goes to DRAM.
  for (int o : n.outputs) {
    double bytes = ValueBytes(g.values[o]);
    if (bypass) l2.Evict(o);
    else written_back += l2.Touch(o, bytes, bytes <= static_cast<double>(soc.l2) / 2);
  }
  return written_back;
}

bool UsesAiCores(const Work& w) { return w.kind == WorkKind::kCube || w.kind == WorkKind::kVector; }

// A dependency across streams is an event: recorded on the producer's stream, waited on by the consumer's. The
// wait is one more entry the consumer's stream dispatches: a task launch's worth of scheduler time [U].
double EventWaitNs(const SocSpec& soc) { return soc.task_launch_ns; }

// Pins the weights of the nodes whose L2 policy asks for it, in task order, while they fit the pinnable part.
double PinWeights(const Graph& g, std::span<const Task> tasks, const SocSpec& soc, L2Model& l2) {
  double budget = static_cast<double>(soc.l2) * kPinnableL2Fraction, pinned = 0;
  std::unordered_map<int, bool> seen;
  for (const Task& t : tasks) {
    const Node& n = g.nodes[t.op_index];
    if (!t.on_device() || !n.attr_list_has(kL2PolicyAttr, kL2PinWeights)) continue;
    for (int i : n.inputs) {
      if (i < 0 || !g.values[i].constant || seen[i]) continue;
      seen[i] = true;
      double b = ValueBytes(g.values[i]);
      if (pinned + b > budget) continue;
      l2.Pin(i, b);
      pinned += b;
    }
  }
  return pinned;
}

}  // namespace

std::string FormatSimulatedTime(double ns, int64_t batch, const SocSpec& soc) {
  char buf[256];
  double ms = ns * 1e-6;
  std::snprintf(buf, sizeof buf, "Simulated NPU time: %.6f ms per inference (%.1f fps at batch %lld, %s)", ms,
                ms > 0 ? static_cast<double>(batch) * 1e3 / ms : 0.0, static_cast<long long>(batch), soc.name.c_str());
  return buf;
}

int64_t BatchOf(const Graph& g) {
  if (g.inputs.empty()) return 1;
  const Value& v = g.values[g.inputs[0]];
  return v.has_shape && !v.shape.empty() && v.shape[0] > 0 ? v.shape[0] : 1;
}

IterationTiming ScheduleIteration(const Graph& g, std::span<const Task> tasks, const SocSpec& soc) {
  IterationTiming it;
  it.tasks.resize(tasks.size());
  L2Model l2(static_cast<double>(soc.l2));
  it.pinned_l2_bytes = PinWeights(g, tasks, soc, l2);
  std::vector<Work> works;
  for (const Task& t : tasks) works.push_back(TaskWork(g, t, &soc));
  std::vector<int> producer = ProducerTasks(g, tasks);
  for (int pass = 0; pass < 2; ++pass) {
    std::unordered_map<uint32_t, double> stream_clock;
    CoreClock cores(soc.ai_cores);
    std::vector<double> end(tasks.size(), 0);
    for (size_t k = 0; k < tasks.size(); ++k) {
      const Task& t = tasks[k];
      const Node& n = g.nodes[t.op_index];
      TaskTiming& tt = it.tasks[k];
      double& clock = stream_clock[t.stream_id];
      double start = clock;
      for (int i : n.inputs)  // inputs from another stream arrive through an event
        if (int p = i >= 0 ? producer[i] : -1; p >= 0)
          start = std::max(start, end[p] + (tasks[p].stream_id != t.stream_id ? EventWaitNs(soc) : 0));
      tt.work = works[k];
      tt.l2 = HitsOf(g, n, l2);
      tt.l2.writeback_bytes = UpdateL2(g, n, t, soc, l2);
      const bool on_cores = UsesAiCores(tt.work);
      // The launch is the stream's scheduler time; the cores are taken only by the blocks after it.
      const double blocks_ready = start + soc.task_launch_ns;
      if (on_cores) tt.l2.co_running_cores = cores.BusyAt(cores.FirstStart(blocks_ready));
      tt.cost = EstimateTask(tt.work, t.tiling, soc, tt.l2);
      tt.start_ns = start;
      if (on_cores) {
        const int blocks = std::max(t.tiling.block_dim, 1), waves = std::max(tt.cost.waves, 1);
        const double block_ns = tt.cost.exec_ns / waves;
        end[k] = cores.Run(blocks, block_ns, blocks_ready);
      } else {
        end[k] = start + tt.cost.duration_ns;
      }
      tt.duration_ns = end[k] - start;
      clock = end[k];
    }
    it.total_ns = 0;
    for (const auto& [stream, clock_end] : stream_clock) it.total_ns = std::max(it.total_ns, clock_end);
  }
  return it;
}

}  // namespace npu
