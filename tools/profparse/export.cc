// --export=on: raw records -> mindstudio_profiler_output/ (op_summary, op_statistic, task_time, step_trace,
// api_statistic, msprof timeline, README.txt), streaming the device records with bounded memory.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <thread>

#include "base/progress.h"
#include "msprof_tables.h"
#include "profparse.h"
#include "raw_profile.h"
#include "table_writer.h"

namespace npu::profparse {
namespace fs = std::filesystem;

namespace {

// op_summary's columns: msprof's for the chip and version, then npukit's roofline columns.
std::vector<std::string> OpSummaryColumns(CannVersion v, const DeviceInfo& d, const std::vector<PmuColumn>& pmu) {
  std::vector<std::string> c = TaskColumns(v, ChipClassOf(d.platform));
  for (const PmuColumn& m : pmu) c.push_back(m.name);
  for (const std::string& r : RooflineColumns()) c.push_back(r);
  return c;
}

// The PMU columns of one task (N/A where there is no record: AI CPU tasks, a lost PMU record), then the roofline.
void WriteMetrics(TableWriter& t, const std::vector<PmuColumn>& cols, const DeviceInfo& d, const PmuSample* p, const NodeInfo& n,
                  const PmuContext& ctx) {
  if (!p) {
    for (size_t i = 0, k = cols.size() + RooflineColumns().size(); i < k; ++i) t.Number("N/A");
    return;
  }
  for (const PmuColumn& c : cols) {
    std::optional<double> v = PmuValue(c, *p, d, ctx);
    if (!v) t.Number("N/A");
    else if (c.quantity == Quantity::kTotalCycles) t.Integer(static_cast<uint64_t>(*v + 0.5));
    else if (c.quantity == Quantity::kCubeUtilization) t.Fixed(*v, 3);  // msprof: fixed, three decimals
    else t.Metric(*v);
  }
  // The roofline from the op's work (npukit's node attribute): what the model asks of the chip, whatever
  // counters the aic_metrics group collected.
  const double duration_us = ctx.duration_us, flops = n.flops, bytes = n.bytes;
  duration_us > 0 && flops > 0 ? t.Fixed(flops / (duration_us * 1e6), 6) : t.Number("N/A");
  duration_us > 0 && bytes > 0 ? t.Fixed(bytes / (duration_us * 1e3), 3) : t.Number("N/A");
  if (d.cube_peak_flops <= 0 || d.memory_bandwidth <= 0 || duration_us <= 0 || (flops <= 0 && bytes <= 0)) return t.Text("N/A");
  double t_compute = flops / d.cube_peak_flops * 1e6, t_memory = bytes / d.memory_bandwidth * 1e6;
  t.Text(std::max(t_compute, t_memory) < 0.5 * duration_us ? "latency" : t_compute >= t_memory ? "compute" : "memory");
}

struct TypeStats {
  std::string core_type;
  std::vector<float> durations_us;  // for Med/StdDev; 4 bytes per task keeps millions of tasks in a few MB
  double total = 0, min = 1e300, max = 0;
};

// The timeline (msprof_*.json): a JSON array, written as tasks stream by.
class Timeline {
 public:
  Timeline(std::string dir, std::string stamp, uint32_t pid, double aic_mhz)
      : dir_(std::move(dir)), stamp_(std::move(stamp)), pid_(pid), aic_mhz_(aic_mhz) {}
  uint32_t HardwarePid() const { return (pid_ << 10) | (kHardwareSort << 5) | 0; }
  uint32_t CannPid() const { return (pid_ << 10) | (kCannSort << 5) | kHostDevice; }
  uint32_t StepPid() const { return (pid_ << 10) | (kStepSort << 5) | 0; }
  uint32_t OverlapPid() const { return (pid_ << 10) | (kOverlapSort << 5) | 0; }
  uint32_t FreqPid() const { return (pid_ << 10) | (kFreqSort << 5) | 0; }
  Status Open(const std::string& name) {
    NPU_ASSIGN_OR_RETURN(file_, OutFile::Create(dir_, name));
    name_ = name;
    open_ = true;
    first_ = true;
    for (auto [pid, label, sort, thread] : {std::tuple{HardwarePid(), "Ascend Hardware", kHardwareSort, "Stream 0"},
                                            std::tuple{CannPid(), "CANN", kCannSort, "Thread 0"},
                                            std::tuple{StepPid(), "Step Trace", kStepSort, "Iterations"}}) {
      Meta(pid, 0, "process_name", std::string("{\"name\":\"") + label + "\"}");
      Meta(pid, 0, "process_labels", pid == CannPid() ? "{\"labels\":\"CPU\"}" : "{\"labels\":\"NPU 0\"}");
      Meta(pid, 0, "process_sort_index", "{\"sort_index\":" + std::to_string(sort) + "}");
      Meta(pid, 0, "thread_name", std::string("{\"name\":\"") + thread + "\"}");
      Meta(pid, 0, "thread_sort_index", "{\"sort_index\":0}");
    }
    Meta(FreqPid(), 0, "process_name", "{\"name\":\"AI Core Freq\"}");
    Meta(FreqPid(), 0, "process_labels", "{\"labels\":\"NPU 0\"}");
    Meta(FreqPid(), 0, "process_sort_index", "{\"sort_index\":" + std::to_string(kFreqSort) + "}");
    Meta(OverlapPid(), 0, "process_name", "{\"name\":\"Overlap Analysis\"}");
    Meta(OverlapPid(), 0, "process_labels", "{\"labels\":\"NPU 0\"}");
    Meta(OverlapPid(), 0, "process_sort_index", "{\"sort_index\":" + std::to_string(kOverlapSort) + "}");
    for (uint32_t tid = 0; tid < std::size(kOverlapThreads); ++tid) {
      Meta(OverlapPid(), tid, "thread_name", std::string("{\"name\":\"") + kOverlapThreads[tid] + "\"}");
      Meta(OverlapPid(), tid, "thread_sort_index", "{\"sort_index\":" + std::to_string(tid) + "}");
    }
    return Status::Ok();
  }
  // A device task's span, for the Overlap Analysis layer. Spans are merged an iteration at a time (iterations do
  // not overlap), so memory stays at one iteration's tasks whatever the profile's size.
  // The first device task of each iteration: where the arrow from the iteration's aclmdlExecute lands.
  void NoteTask(uint32_t iteration, uint64_t start_ns, uint32_t stream) {
    auto [it, fresh] = first_task_.try_emplace(iteration, start_ns, stream);
    if (!fresh && start_ns < it->second.first) it->second = {start_ns, stream};
  }
  // msprof's HostToDevice flow: an "s" event on the API call and an "f" event on the device task it launched, with
  // the connection id in the id's high 32 bits (as msprof writes it).
  void Flow(uint64_t connection, uint32_t api_tid, uint64_t api_start_ns, uint32_t iteration) {
    auto it = first_task_.find(iteration);
    if (it == first_task_.end()) return;
    const std::string id = std::to_string(connection << 32);
    for (const bool start : {true, false}) {
      std::string& b = Begin();
      b += "{\"name\":\"HostToDevice" + id + "\",\"pid\":";
      AppendInt(b, start ? CannPid() : HardwarePid());
      b += ",\"tid\":";
      AppendInt(b, start ? api_tid : it->second.second);
      b += start ? ",\"ph\":\"s\"" : ",\"ph\":\"f\"";
      b += ",\"cat\":\"HostToDevice\",\"id\":\"" + id + "\",\"ts\":\"";
      AppendMicros(b, start ? api_start_ns : it->second.first);
      b += start ? "\"}" : "\",\"bp\":\"e\"}";
    }
  }
  void AddComputing(uint64_t start_ns, uint64_t end_ns, uint32_t iteration) {
    if (!first_task_ns_) {  // the AI Core clock: the simulated chip runs at its spec's frequency throughout
      first_task_ns_ = start_ns;
      FreqCounter(start_ns);
    }
    last_task_end_ns_ = std::max(last_task_end_ns_, end_ns);
    if (!busy_.empty() && iteration != busy_iteration_) FlushOverlap();
    busy_iteration_ = iteration;
    busy_.emplace_back(start_ns, end_ns);
  }
  // A complete event; args is a JSON object body without braces.
  void Slice(uint32_t pid, uint32_t tid, const std::string& name, uint64_t start_ns, uint64_t dur_ns, const std::string& args) {
    std::string& b = Begin();
    b += "{\"name\":\"";
    Escape(b, name);
    b += "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":\"";
    AppendMicros(b, start_ns);
    b += "\",\"dur\":";
    AppendFixed(b, static_cast<double>(dur_ns) / 1000, 3);
    b += ",\"ph\":\"X\",\"args\":{" + args + "}}";
    file_.MaybeFlush();
  }
  // One task on the Ascend Hardware layer, formatted in place (the hot path of the timeline).
  void TaskSlice(const DeviceTask& h, uint32_t block_dim, std::string_view type, const std::string& name, uint64_t start_ns, uint64_t dur_ns) {
    std::string& b = Begin();
    b += "{\"name\":\"";
    Escape(b, name);
    b += "\",\"pid\":";
    AppendInt(b, HardwarePid());
    b += ",\"tid\":";
    AppendInt(b, h.stream_id);
    b += ",\"ts\":\"";
    AppendMicros(b, start_ns);
    b += "\",\"dur\":";
    AppendFixed(b, static_cast<double>(dur_ns) / 1000, 3);
    b += ",\"ph\":\"X\",\"args\":{\"Model Id\":0,\"Task Type\":\"";
    b += type;
    b += "\",\"Physic Stream Id\":";
    AppendInt(b, h.stream_id);
    b += ",\"Task Id\":";
    AppendInt(b, h.task_id);
    b += ",\"Batch Id\":0,\"Subtask Id\":4294967295,\"Block Dim\":";
    AppendInt(b, block_dim);
    b += ",\"Iteration\":";
    AppendInt(b, h.iteration == kNoIteration ? 0 : uint64_t{h.iteration} + 1);
    b += "}}";
    file_.MaybeFlush();
  }
  Status Close(std::vector<std::string>& files) {
    if (!open_) return Status::Ok();
    FlushOverlap();
    if (first_task_ns_) FreqCounter(last_task_end_ns_);
    last_busy_end_.reset();
    first_task_ns_.reset();
    last_task_end_ns_ = 0;
    file_.Write("\n]\n");
    open_ = false;
    NPU_RETURN_IF_ERROR(file_.Commit(""));
    files.push_back(name_);
    return Status::Ok();
  }
  bool open() const { return open_; }

 private:
  // msprof's layer sort indexes (its LayerSortIndex, from 6): CANN 7, Ascend Hardware 13, Overlap Analysis 29. Step
  // Trace has a process of its own here; msprof folds it into Ascend Hardware.
  static constexpr uint32_t kCannSort = 7, kHardwareSort = 13, kFreqSort = 14, kStepSort = 15, kOverlapSort = 29, kHostDevice = 31;
  // msprof's AI Core Freq counter: {"name":"AI Core Freq","ph":"C","args":{"MHz":...}}.
  void FreqCounter(uint64_t at_ns) {
    std::string& b = Begin();
    b += "{\"name\":\"AI Core Freq\",\"pid\":";
    AppendInt(b, FreqPid());
    b += ",\"tid\":0,\"ts\":\"";
    AppendMicros(b, at_ns);
    b += "\",\"ph\":\"C\",\"args\":{\"MHz\":";
    AppendInt(b, static_cast<uint64_t>(aic_mhz_ + 0.5));
    b += "}}";
  }
  // The Overlap Analysis threads, by tid (msprof's OverlapType). Without collective communication only Computing
  // and Free have slices: their union covers the device's span from its first task to its last.
  static constexpr const char* kOverlapThreads[] = {"Communication", "Communication(Not Overlapped)", "Computing", "Free"};
  static constexpr uint32_t kComputingTid = 2, kFreeTid = 3;
  // The iteration's busy spans merged into Computing slices, and the gaps before and between them into Free.
  void FlushOverlap() {
    if (busy_.empty()) return;
    std::sort(busy_.begin(), busy_.end());
    uint64_t lo = busy_.front().first, hi = busy_.front().second;
    auto emit = [&](uint64_t a, uint64_t b) {
      if (last_busy_end_ && a > *last_busy_end_) Slice(OverlapPid(), kFreeTid, "Free", *last_busy_end_, a - *last_busy_end_, "");
      Slice(OverlapPid(), kComputingTid, "Computing", a, b - a, "");
      last_busy_end_ = b;
    };
    for (const auto& [a, b] : busy_) {
      if (a > hi) {
        emit(lo, hi);
        lo = a;
      }
      hi = std::max(hi, b);
    }
    emit(lo, hi);
    busy_.clear();
  }
  std::string& Begin() {
    std::string& b = file_.buffer();
    b += first_ ? "[\n" : ",\n";
    first_ = false;
    return b;
  }
  void Meta(uint32_t pid, uint32_t tid, const char* name, const std::string& args) {
    Begin() += std::string("{\"name\":\"") + name + "\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
               ",\"ph\":\"M\",\"args\":" + args + "}";
  }
  static void AppendInt(std::string& b, uint64_t v) {
    char buf[24];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    b.append(buf, p);
  }
  static void Escape(std::string& b, const std::string& s) {
    for (char c : s) {
      if (c == '"' || c == '\\') b += '\\';
      b += static_cast<unsigned char>(c) < 0x20 ? ' ' : c;
    }
  }
  std::string dir_, stamp_, name_;
  uint32_t pid_;
  OutFile file_;
  bool open_ = false, first_ = true;
  double aic_mhz_;
  std::map<uint32_t, std::pair<uint64_t, uint32_t>> first_task_;  // iteration -> (start ns, stream)
  std::optional<uint64_t> first_task_ns_;
  uint64_t last_task_end_ns_ = 0;
  std::vector<std::pair<uint64_t, uint64_t>> busy_;  // this iteration's task spans (ns)
  uint32_t busy_iteration_ = 0;
  std::optional<uint64_t> last_busy_end_;
};

const char* kReadme = R"(mindstudio_profiler_output: the export of one PROF_* directory by npukit's profparse, with the
columns of CANN 8.5's msprof (--cann_version). Times are microseconds of the simulated NPU clock; in the CSV tables a
TAB follows each timestamp, as msprof writes it.

op_summary_*.csv     one row per executed task: op, type, shapes, start, duration, wait, block dim, and the PMU
                     metrics of the collected aic_metrics group (PipeUtilization, ArithmeticUtilization or Memory;
                     aic_ and aiv_ columns on split-core chips), then npukit's roofline columns: achieved TFLOPS,
                     achieved main-memory GB/s, and which bound (compute, memory, latency) against the SoC's peaks.
op_statistic_*.csv   per op type: count, total/min/avg/max time, share of the total; npukit adds Med and StdDev.
task_time_*.csv      per task: kernel, task type, stream, task id, duration, start, stop.
step_trace_*.csv     per iteration (one per msame loop): iteration end, iteration time, data-aug bound.
step_trace_*.json    the iterations as timeline slices.
api_statistic_*.csv  host API calls (aclmdlExecute) with count, total, avg, min, max, variance.
msprof_*.json        timeline (chrome://tracing, Perfetto, MindStudio Insight): CANN (host API), Ascend Hardware
                     (one slice per task on its stream), Step Trace, AI Core Freq, HostToDevice arrows and
                     Overlap Analysis (Computing and Free).
Tables roll over every 1,000,000 rows into *_slice_<n>_* files.
)";

// analyze/ as `msprof --analyze=on` writes it: the communication analysis msprof-analyze's cluster mode requires
// beside mindstudio_profiler_output/. Its files hold one entry per collective-communication op; a profile of
// one device's inference has none, so they are empty objects (and say so, rather than being missing).
Status WriteAnalyze(const std::string& prof_dir, ExportResult& res) {
  const std::string dir = prof_dir + "/analyze";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("E13004", "--output", dir, "cannot create the directory: " + ec.message());
  for (const char* name : {"communication.json", "communication_matrix.json"}) {
    OutFile f;
    NPU_ASSIGN_OR_RETURN(f, OutFile::Create(dir, name));
    f.Write("{}\n");
    NPU_RETURN_IF_ERROR(f.Commit(""));
    res.files.push_back(std::string("../analyze/") + name);
  }
  return Status::Ok();
}

}  // namespace

Result<ExportResult> ExportProfile(const std::string& prof_dir, const Options& o) {
  ExportResult res;
  NPU_ASSIGN_OR_RETURN(RawProfile p, LoadProfile(prof_dir));
  const DeviceInfo& d = p.device;
  std::string out_dir = prof_dir + "/mindstudio_profiler_output";
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Error("E13004", "--output", out_dir, "cannot create the directory: " + ec.message());
  std::string stamp = o.stamp.empty() ? Timestamp14() : o.stamp;
  TableFormat fmt = o.summary_format == "json" ? TableFormat::kJson : TableFormat::kCsv;
  std::optional<uint32_t> want_iter;
  if (!o.iteration_id.empty()) want_iter = static_cast<uint32_t>(std::stoul(o.iteration_id));
  auto wanted = [&](uint32_t iteration) { return !want_iter || *want_iter == iteration + 1; };

  const CannVersion version = ParseCannVersion(o.cann_version).value_or(CannVersion::k8_5);
  const ChipClass chip = ChipClassOf(d.platform);
  const bool stars = chip == ChipClass::kAtlasA2;
  const std::vector<PmuColumn> pmu_cols = PmuColumns(chip, d.aic_metrics);
  TableWriter summary(out_dir, "op_summary", stamp, OpSummaryColumns(version, d, pmu_cols), fmt);
  TableWriter task_time(out_dir, "task_time", stamp,
                        {"Device_id", "kernel_name", "kernel_type", "stream_id", "task_id", "task_time(us)", "task_start(us)", "task_stop(us)"}, fmt);
  Timeline timeline(out_dir, stamp, d.pid, d.aic_mhz);
  std::map<std::string, TypeStats> stats;
  std::map<uint32_t, uint64_t> prev_end;  // per stream
  double total_us = 0;
  uint64_t unmatched_pmu = 0, unknown_tasks = 0;

  auto ns_of = [&](uint64_t ticks) { return d.NsOf(ticks); };
  static const NodeInfo kUnknown{"N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A", "N/A", prof::TaskType::kAiCore, 1, 0, 0, 0,
                                 std::vector<std::string>(8, "N/A")};
  auto node_of = [&](const DeviceTask& h) {
    const NodeInfo* n = p.Node(h.stream_id, h.task_id);
    return n ? n : &kUnknown;
  };

  // The timeline side (task_time and msprof_*.json) reads the task records on its own thread; the summary
  // side (op_summary with the PMU records, op_statistic) on this one. Each streams the slices itself. Only the
  // summary side writes p (its warnings: its stream opens every file the timeline's does).
  std::vector<std::string> timeline_files;
  Status timeline_status;
  std::thread timeline_side([&] {
    timeline_status = [&]() -> Status {
      NPU_ASSIGN_OR_RETURN(TaskStream tasks, TaskStream::Open(p, false));
      int64_t timeline_iter = -1;
      const PmuSample* none = nullptr;
      for (DeviceTask h; tasks.Next(h, none);) {
        if (!wanted(h.iteration)) continue;
        uint64_t start = ns_of(h.start_ticks), end = std::max(start, ns_of(h.end_ticks));
        const NodeInfo* n = node_of(h);
        task_time.Number("0");
        task_time.TextCached(n->op_name, n->csv[0]);
        const std::string_view kernel_type = p.KernelType(h.stream_id, h.task_id);
        task_time.TextCached(kernel_type, kernel_type);
        task_time.Integer(h.stream_id);
        task_time.Integer(h.task_id);
        task_time.Fixed(static_cast<double>(end - start) / 1000, 3);
        task_time.Timestamp(start);
        task_time.Timestamp(end);
        NPU_RETURN_IF_ERROR(task_time.EndRow());
        if (o.timeline_per_iteration == "on" && h.iteration != kNoIteration && static_cast<int64_t>(h.iteration) != timeline_iter) {
          NPU_RETURN_IF_ERROR(timeline.Close(timeline_files));
          timeline_iter = h.iteration;
        }
        if (!timeline.open()) {
          const uint64_t iter = h.iteration == kNoIteration ? 0 : uint64_t{h.iteration} + 1;
          std::string name = o.timeline_per_iteration == "on" ? "msprof_0_0_" + std::to_string(iter) + "_" + stamp + ".json" : "msprof_" + stamp + ".json";
          NPU_RETURN_IF_ERROR(timeline.Open(name));
        }
        timeline.TaskSlice(h, n == &kUnknown ? 0 : n->block_dim, kernel_type, n == &kUnknown ? std::string(kernel_type) : n->op_name, start, end - start);
        if (h.iteration == kNoIteration) continue;
        timeline.AddComputing(start, end, h.iteration);
        timeline.NoteTask(h.iteration, start, h.stream_id);
      }
      return tasks.status();
    }();
  });
  auto summary_side = [&]() -> Status {
    NPU_ASSIGN_OR_RETURN(TaskStream tasks, TaskStream::Open(p, true));
    NoteIncomplete(p, tasks.incomplete());
    res.raw_bytes = tasks.raw_bytes();
    const PmuSample* pmu = nullptr;
    for (DeviceTask h; tasks.Next(h, pmu);) {
      const NodeInfo* n = node_of(h);
      if (n == &kUnknown) {  // the runtime's own tasks (PROFILING_ENABLE, ...) are in task_time, not op_summary
        if (!p.runtime_types.count({h.stream_id, h.task_id})) ++unknown_tasks;
        continue;
      }
      uint64_t start = ns_of(h.start_ticks), end = std::max(start, ns_of(h.end_ticks));
      auto prev = prev_end.find(h.stream_id);
      uint64_t wait = prev != prev_end.end() && start > prev->second ? start - prev->second : 0;
      prev_end[h.stream_id] = end;
      if (h.iteration != kNoIteration) res.iterations = std::max<uint64_t>(res.iterations, h.iteration + 1ull);
      if (!wanted(h.iteration)) continue;
      double dur_us = static_cast<double>(end - start) / 1000;
      std::string_view type_name = prof::TaskTypeName(n->task_type);
      summary.Number("0");
      summary.Number("0");
      summary.Integer(h.task_id);
      summary.Integer(h.stream_id);
      summary.TextCached(n->op_name, n->csv[0]);
      summary.TextCached(n->op_type, n->csv[1]);
      summary.TextCached("static", "static");
      summary.TextCached(type_name, type_name);
      summary.Timestamp(start);
      summary.Fixed(dur_us, 3);
      summary.Micros(wait);
      summary.Integer(n->block_dim);
      if (stars) summary.Integer(n->mix_block_dim);
      summary.TextCached("NO", "NO");
      const std::string* shape_cells[] = {&n->input_shapes, &n->input_dtypes, &n->input_formats, &n->output_shapes, &n->output_dtypes, &n->output_formats};
      for (size_t i = 0; i < 6; ++i) summary.TextCached(*shape_cells[i], n->csv[2 + i]);
      if (stars) summary.TextCached("N/A", "N/A");
      const PmuContext ctx{n->task_type, n->block_dim, n->mix_block_dim, dur_us};
      WriteMetrics(summary, pmu_cols, d, pmu, *n, ctx);
      NPU_RETURN_IF_ERROR(summary.EndRow());
      TypeStats& st = stats[n->op_type];
      st.core_type = type_name;
      st.durations_us.push_back(static_cast<float>(dur_us));
      st.total += dur_us, st.min = std::min(st.min, dur_us), st.max = std::max(st.max, dur_us);
      total_us += dur_us;
      ++res.tasks;
    }
    NPU_RETURN_IF_ERROR(tasks.status());
    unmatched_pmu = tasks.unmatched_pmu();
    if (tasks.garbage_records()) p.warnings.push_back(std::to_string(tasks.garbage_records()) + " device record(s) of no kind profparse reads skipped (garbage, or logs of other kinds)");
    if (tasks.unpaired()) p.warnings.push_back(std::to_string(tasks.unpaired()) + " task end(s) without a start skipped");
    if (tasks.trailing_bytes()) p.warnings.push_back("the task records end in a partial record (" + std::to_string(tasks.trailing_bytes()) + " bytes): the collection was cut short");
    return Status::Ok();
  };
  Status summary_status = summary_side();
  timeline_side.join();
  NPU_RETURN_IF_ERROR(summary_status);
  NPU_RETURN_IF_ERROR(timeline_status);
  for (auto& f : timeline_files) res.files.push_back(f);
  if (unmatched_pmu) p.warnings.push_back(std::to_string(unmatched_pmu) + " AI Core task(s) without a matching PMU record: their metric columns are N/A");
  if (unknown_tasks) p.warnings.push_back(std::to_string(unknown_tasks) + " task(s) without a node record: their names are N/A");

  // Steps and host APIs are a few records per iteration: LoadProfile read them whole.
  std::map<uint32_t, std::pair<uint64_t, uint64_t>> iters;  // iteration -> (model start, iteration end) ns
  for (const IterationSpan& it : p.iterations) iters[it.index] = {ns_of(it.start), ns_of(it.end)};
  TableWriter step_csv(out_dir, "step_trace", stamp,
                       {"Device_id", "Iteration ID", "FP Start(us)", "BP End(us)", "Iteration End(us)", "Iteration Time(us)",
                        "FP to BP Time(us)", "Iteration Refresh(us)", "Data Aug Bound(us)", "Model ID", "Reduce Start(us)", "Reduce Duration(us)"}, fmt);
  OutFile step_json;
  NPU_ASSIGN_OR_RETURN(step_json, OutFile::Create(out_dir, "step_trace_" + stamp + ".json"));
  step_json.Write("[");
  uint64_t prev_iter_end = 0;
  bool first_step = true;
  for (const auto& [iter, se] : iters) {
    if (se.first == UINT64_MAX || se.second == 0) continue;  // an iteration cut short
    if (wanted(iter)) {
      step_csv.Number("0");
      step_csv.Number(std::to_string(iter + 1));
      step_csv.Number("N/A");
      step_csv.Number("N/A");
      step_csv.Micros(se.second);
      step_csv.Fixed(static_cast<double>(se.second - se.first) / 1000, 3);
      step_csv.Number("N/A");
      step_csv.Number("N/A");
      if (first_step || se.first < prev_iter_end) step_csv.Number("N/A");
      else step_csv.Fixed(static_cast<double>(se.first - prev_iter_end) / 1000, 3);
      step_csv.Number("0");
      step_csv.Number("N/A");
      step_csv.Number("N/A");
      NPU_RETURN_IF_ERROR(step_csv.EndRow());
      std::string& b = step_json.buffer();
      b += first_step ? "\n" : ",\n";
      b += "{\"name\":\"Iteration " + std::to_string(iter + 1) + "\",\"pid\":" + std::to_string(timeline.StepPid()) + ",\"tid\":0,\"ts\":\"";
      AppendMicros(b, se.first);
      b += "\",\"dur\":";
      AppendFixed(b, static_cast<double>(se.second - se.first) / 1000, 3);
      b += ",\"ph\":\"X\",\"args\":{\"Iteration ID\":" + std::to_string(iter + 1) + ",\"Model ID\":0}}";
      if (timeline.open())
        timeline.Slice(timeline.StepPid(), 0, "Iteration " + std::to_string(iter + 1), se.first, se.second - se.first, "\"Model ID\":0");
      first_step = false;
    }
    prev_iter_end = se.second;
  }
  step_json.Write("\n]\n");

  struct ApiStats { uint64_t count = 0; double total = 0, min = 1e300, max = 0, sq = 0; };
  std::map<std::pair<std::string, std::string>, ApiStats> api_stats;  // (level, name)
  uint64_t connection_id = 0;  // each call's ordinal, as msprof_<ts>.db's CANN_API and TASK rows number them
  for (const ApiCall& a : p.apis) {
    const uint64_t connection = connection_id++;
    const uint32_t iteration = p.IterationOf(a.begin);  // the host clock is the simulated device's (1 GHz ticks)
    if (want_iter && !wanted(iteration)) continue;
    const std::string level(prof::raw::LevelName(a.level));
    double us = static_cast<double>(a.end - a.begin) / 1000;
    ApiStats& s = api_stats[{level, a.name}];
    ++s.count, s.total += us, s.sq += us * us, s.min = std::min(s.min, us), s.max = std::max(s.max, us);
    if (timeline.open() && a.level == static_cast<uint16_t>(prof::raw::Level::kAcl)) {
      timeline.Slice(timeline.CannPid(), 0, "AscendCL@" + a.name, a.begin, a.end - a.begin,
                     "\"Mode\":\"ACL_MODEL\",\"level\":\"acl\",\"connection_id\":" + std::to_string(connection));
      if (iteration != kNoIteration && LaunchesTheModel(a)) timeline.Flow(connection, 0, a.begin, iteration);
    }
  }
  TableWriter api_csv(out_dir, "api_statistic", stamp, {"Device_id", "Level", "API Name", "Time(us)", "Count", "Avg(us)", "Min(us)", "Max(us)", "Variance"}, fmt);
  for (const auto& [key, s] : api_stats) {
    double avg = s.total / static_cast<double>(s.count);
    api_csv.Text("host");
    api_csv.Text(key.first);
    api_csv.Text(key.second);
    api_csv.Trimmed(s.total);
    api_csv.Number(std::to_string(s.count));
    for (double v : {avg, s.min, s.max, std::max(s.sq / static_cast<double>(s.count) - avg * avg, 0.0)}) api_csv.Trimmed(v);
    NPU_RETURN_IF_ERROR(api_csv.EndRow());
  }

  TableWriter stat_csv(out_dir, "op_statistic", stamp,
                       {"Device_id", "OP Type", "Core Type", "Count", "Total Time(us)", "Min Time(us)", "Avg Time(us)", "Max Time(us)",
                        "Ratio(%)", "Med Time(us)", "StdDev(us)"}, fmt);
  std::vector<std::pair<std::string, TypeStats*>> by_total;
  for (auto& [type, s] : stats) by_total.emplace_back(type, &s);
  std::sort(by_total.begin(), by_total.end(), [](const auto& a, const auto& b) { return a.second->total > b.second->total; });
  for (auto& [type, s] : by_total) {
    auto& v = s->durations_us;
    double n = static_cast<double>(v.size()), avg = s->total / n, var = 0;
    for (float x : v) var += (x - avg) * (x - avg);
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    double med = v[v.size() / 2];
    if (v.size() % 2 == 0) med = (med + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2))) / 2;
    stat_csv.Number("0");
    stat_csv.Text(type);
    stat_csv.Text(s->core_type);
    stat_csv.Number(std::to_string(v.size()));
    for (double x : {s->total, s->min, avg, s->max, total_us > 0 ? 100 * s->total / total_us : 0.0, med, std::sqrt(var / n)}) stat_csv.Trimmed(x);
    NPU_RETURN_IF_ERROR(stat_csv.EndRow());
  }

  for (TableWriter* t : {&summary, &task_time, &stat_csv, &step_csv, &api_csv}) {
    NPU_RETURN_IF_ERROR(t->Finish());
    for (const auto& f : t->files()) res.files.push_back(f);
  }
  NPU_RETURN_IF_ERROR(step_json.Commit(""));
  res.files.push_back("step_trace_" + stamp + ".json");
  NPU_RETURN_IF_ERROR(timeline.Close(res.files));
  OutFile readme;
  NPU_ASSIGN_OR_RETURN(readme, OutFile::Create(out_dir, "README.txt"));
  readme.Write(kReadme);
  NPU_RETURN_IF_ERROR(readme.Commit(""));
  res.files.push_back("README.txt");
  NPU_RETURN_IF_ERROR(WriteAnalyze(prof_dir, res));
  res.warnings = p.warnings;
  return res;
}

}  // namespace npu::profparse
