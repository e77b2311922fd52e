#include "prof/collector.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "base/file_io.h"
#include "base/json.h"
#include "base/progress.h"
#include "cost/cost_model.h"
#include "lower/lower.h"
#include "prof/hwts_log.h"
#include "prof/platform.h"

namespace npu::prof {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The cores a task ran on, as the chip has them: on a split-core chip (the 910B) cube work runs on AIC cores,
// vector work on AIV cores, and a task with both is a MIX_AIC task; elsewhere every AI Core task is AI_CORE.
TaskType DeviceTaskType(const TaskCost& c, const SocSpec& soc) {
  if (!PlatformOf(soc.name).split_cores) return TaskType::kAiCore;
  const bool cube = c.pipes.cube > 0, vector = c.pipes.vector > 0;
  return cube && vector ? TaskType::kMixAic : vector ? TaskType::kAiVectorCore : TaskType::kAiCore;
}

bool OnOff(const json& j, const char* key, bool def, const std::string& where, std::vector<std::string>& errs) {
  if (!j.contains(key)) return def;
  if (!j[key].is_string() || (j[key] != "on" && j[key] != "off")) {
    errs.push_back(std::string(key) + " in " + where + " must be \"on\" or \"off\"");
    return def;
  }
  return j[key] == "on";
}

// The options common to acl.json's profiler section and PROFILING_OPTIONS.
Status ReadOptions(const json& j, const std::string& where, ProfilerConfig& c) {
  std::vector<std::string> errs;
  if (j.contains("output")) {
    if (!j["output"].is_string()) errs.push_back("output in " + where + " must be a string");
    else c.output = j["output"];
  }
  if (j.contains("aic_metrics")) {
    std::string m = j["aic_metrics"].is_string() ? j["aic_metrics"].get<std::string>() : "";
    if (std::find(std::begin(kAicMetrics), std::end(kAicMetrics), m) == std::end(kAicMetrics))
      errs.push_back("aic_metrics in " + where + " must be PipeUtilization, ArithmeticUtilization or Memory, not '" + DumpJson(j["aic_metrics"]) + "'");
    else c.aic_metrics = m;
  }
  c.aicpu = OnOff(j, "aicpu", c.aicpu, where, errs);
  c.task_time = OnOff(j, "task_time", c.task_time, where, errs);
  c.task_time = OnOff(j, "task_trace", c.task_time, where, errs);
  static const std::set<std::string> kKnown = {"switch", "output", "aic_metrics", "aicpu", "task_time", "task_trace",
                                               "training_trace", "fp_point", "bp_point", "storage_limit", "hccl"};
  for (const auto& [k, v] : j.items())
    if (!kKnown.count(k)) c.warnings.push_back("unknown key \"" + k + "\" in " + where + " is ignored");
  if (!errs.empty()) return Status::Error("EC0013", where, DumpJson(j), errs.front(), "See docs/profparse.md (the acl.json profiler section).");
  if (const char* s = std::getenv("PROFILING_SLICE_BYTES")) c.slice_bytes = std::max<uint64_t>(std::strtoull(s, nullptr, 10), 64);
  return Status::Ok();
}

// A node's tensors as GE reports them (MsprofTensorInfo): the device shape, format and dtype of each, five to
// a record. Dims past the eighth are left out, as the record has no room for them.
std::vector<raw::TensorDesc> Tensors(const Graph& g, const Node& n) {
  std::vector<raw::TensorDesc> out;
  for (auto [vals, kind] : {std::pair{&n.inputs, raw::kInputTensor}, std::pair{&n.outputs, raw::kOutputTensor}})
    for (int v : *vals) {
      if (v < 0) continue;
      const Value& x = g.values[v];
      raw::TensorDesc d{};
      d.tensor_type = kind;
      d.format = static_cast<uint32_t>(DeviceFormat(x));
      d.data_type = static_cast<uint32_t>(x.dtype);
      const Shape shape = DeviceShapeOf(x);
      for (size_t i = 0; i < shape.size() && i < raw::kTensorShapeDims; ++i) d.shape[i] = static_cast<uint32_t>(std::max<int64_t>(shape[i], 0));
      out.push_back(d);
    }
  return out;
}

// A JSON file of the PROF folder, with msprof's "<file>.done" marker ("filesize:<bytes>") once it is complete.
Status WriteJsonFile(const std::string& path, const json& j) {
  std::string text = DumpJson(j) + "\n";
  NPU_RETURN_IF_ERROR(WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size()))));
  std::string done = "filesize:" + std::to_string(text.size());
  return WriteFileAtomic(path + ".done", std::as_bytes(std::span(done.data(), done.size())));
}

// The host's name and a stable id for it (msprof-analyze's cluster mode keys ranks on rank_id and hostUid).
std::string HostName() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 && name[0] ? std::string(name) : std::string("localhost");
}

}  // namespace

Result<ProfilerConfig> ParseProfilerConfig(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  json j = npu::ParseJson(text);
  ProfilerConfig c;
  if (j.is_discarded() || !j.is_object() || !j.contains("profiler")) return c;
  const json& p = j["profiler"];
  if (!p.is_object()) return Status::Error("EC0013", "--acl_json_path", path, "\"profiler\" must be an object");
  std::vector<std::string> errs;
  c.enabled = OnOff(p, "switch", false, "the profiler section", errs);
  if (!errs.empty()) return Status::Error("EC0013", "--acl_json_path", path, errs.front());
  NPU_RETURN_IF_ERROR(ReadOptions(p, "the profiler section of " + path, c));
  return c;
}

Result<ProfilerConfig> ProfilerConfigFromEnv() {
  ProfilerConfig c;
  const char* mode = std::getenv("PROFILING_MODE");
  if (!mode || std::string_view(mode) != "true") return c;
  c.enabled = true;
  if (const char* opts = std::getenv("PROFILING_OPTIONS")) {
    json j = npu::ParseJson(opts);
    if (j.is_discarded() || !j.is_object())
      return Status::Error("EC0013", "PROFILING_OPTIONS", opts, "not a JSON object", R"(Use e.g. PROFILING_OPTIONS='{"output":"prof","aic_metrics":"PipeUtilization"}'.)");
    NPU_RETURN_IF_ERROR(ReadOptions(j, "PROFILING_OPTIONS", c));
  }
  return c;
}

uint64_t Collector::Hash(const std::string& s) {
  const uint64_t id = raw::HashId(s);
  strings_.try_emplace(id, s);
  return id;
}

uint32_t Collector::TypeId(raw::Level level, const std::string& name, uint32_t base) {
  const std::pair<uint16_t, std::string> key{static_cast<uint16_t>(level), name};
  if (auto it = types_.find(key); it != types_.end()) return it->second;
  uint32_t id = base;  // the next free code of the level past the base
  for (const auto& [k, v] : types_)
    if (k.first == key.first && v >= id) id = v + 1;
  return types_[key] = id;
}

void Collector::Api(raw::Level level, uint32_t type, uint64_t begin, uint64_t end, uint64_t item) {
  raw::ApiRecord a{raw::kMagic, static_cast<uint16_t>(level), type, thread_id_, 0, begin, end, item};
  Keep(api_->Append(a));
}

// A model's view of the collection: its streams' place on the device, its tasks' kinds, and where its
// iterations sit on the device's timeline.
class Collector::ModelObserver : public TaskObserver {
 public:
  ModelObserver(Collector& c, uint32_t id, uint16_t base) : model_id(id), stream_base(base), c_(c) {}
  void AfterTask(const TaskEvent& e) override { c_.OnTask(*this, e); }
  void AfterIteration(uint64_t iteration, double start_ns, double end_ns) override { c_.OnIteration(*this, iteration, start_ns, end_ns); }

  const uint32_t model_id;
  const uint16_t stream_base;  // the model's stream s is the device's stream_base + s
  std::map<std::pair<uint32_t, uint32_t>, uint8_t> task_types;  // (stream, task) -> GeTaskType, from the load
  // The session's clock maps to the device's by this offset (ns), set at each iteration's first task so that the
  // iteration starts when the device is free (another model's work, or this model's last iteration, is done).
  double offset_ns = 0;
  int64_t iteration = -1;

 private:
  Collector& c_;
};

Collector::Collector() = default;
Collector::~Collector() = default;

Result<std::unique_ptr<Collector>> Collector::Start(const ProfilerConfig& config, const std::string& app) {
  std::unique_ptr<Collector> c(new Collector());
  c->config_ = config;
  c->app_ = app;
  c->thread_id_ = static_cast<uint32_t>(::getpid());
  auto now = std::chrono::system_clock::now();
  c->host_clock_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  std::string parent = config.output.empty() ? "." : config.output;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::Error("E13004", "profiler output", parent, "cannot create the directory: " + ec.message());
  // PROF_{seq}_{timestamp}_{random}: seq counts the PROF dirs already there, so runs never collide.
  int seq = 1;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.path().filename().string().rfind("PROF_", 0) == 0) ++seq;
  std::mt19937 rng(static_cast<uint32_t>(c->host_clock_ ^ static_cast<uint64_t>(::getpid())));
  std::string suffix;
  for (int i = 0; i < 8; ++i) suffix += static_cast<char>('A' + rng() % 26);
  char seqbuf[16];
  std::snprintf(seqbuf, sizeof seqbuf, "%06d", seq);
  c->dir_ = parent + "/PROF_" + seqbuf + "_" + Timestamp17() + "_" + suffix;
  c->host_root_ = c->dir_ + "/host";
  c->device_root_ = c->dir_ + "/device_0";
  c->host_dir_ = c->host_root_ + "/data";
  c->device_dir_ = c->device_root_ + "/data";
  fs::create_directories(c->host_dir_, ec);
  if (!ec) fs::create_directories(c->device_dir_, ec);
  if (ec) return Status::Error("E13004", "profiler output", c->dir_, "cannot create the directory: " + ec.message());
  auto writer = [&](const char* name) { return std::make_unique<SliceWriter>(c->host_dir_, name, config.slice_bytes); };
  c->api_ = writer("unaging.api_event.data");
  c->node_info_ = writer("aging.compact.node_basic_info");
  c->task_track_ = writer("aging.compact.task_track");
  c->tensor_info_ = writer("aging.additional.tensor_info");
  c->attr_info_ = writer("aging.compact.node_attr_info");
  // The report types with fixed codes, named as prof_common.h's comments name them.
  for (auto [level, name, code] : {std::tuple{raw::Level::kModel, "execute", raw::kModelExecuteType}, std::tuple{raw::Level::kModel, "load", raw::kModelLoadType},
                                   std::tuple{raw::Level::kNode, "node_basic_info", raw::kNodeBasicInfoType},
                                   std::tuple{raw::Level::kNode, "tensor_info", raw::kTensorInfoType},
                                   std::tuple{raw::Level::kNode, "launch", raw::kNodeLaunchType},
                                   std::tuple{raw::Level::kNode, "node_attr_info", raw::kNodeAttrInfoType}})
    c->types_[{static_cast<uint16_t>(level), name}] = code;
  return c;
}

Result<std::unique_ptr<Collector>> Collector::Start(const ProfilerConfig& config, Session& session, const std::string& app) {
  NPU_ASSIGN_OR_RETURN(auto c, Start(config, app));
  NPU_ASSIGN_OR_RETURN(TaskObserver * o, c->AddModel(session, 0));
  session.AddObserver(o);
  return c;
}

void Collector::RecordApi(std::string_view name, uint64_t begin_ns, uint64_t end_ns) {
  if (finished_ || !config_.acl_api) return;
  Api(raw::Level::kAcl, TypeId(raw::Level::kAcl, std::string(name), raw::kAclModelBaseType), begin_ns, std::max(begin_ns, end_ns), 0);
}

Result<TaskObserver*> Collector::AddModel(const Session& session, uint32_t model_id) {
  if (!session.soc()) return Status::Error("E10001", "profiler", "switch=on", "the .onnx reference path has no simulated clock", "Profile an .om.");
  if (soc_ && session.soc()->name != soc_->name)
    return Status::Error("E10001", "profiler", session.soc()->name,
                         "this collection profiles the simulated " + soc_->name + "; a model for another SoC cannot join it",
                         "Profile models of one SoC per process.");
  uint16_t streams = 0;
  for (const Task& t : session.model().tasks) streams = static_cast<uint16_t>(std::max<uint32_t>(streams, t.stream_id + 1));
  auto m = std::make_unique<ModelObserver>(*this, model_id, next_stream_);
  next_stream_ = static_cast<uint16_t>(next_stream_ + streams);
  const uint64_t load_begin = HostTick();
  for (const Task& t : session.model().tasks)
    if (t.on_device()) NPU_RETURN_IF_ERROR(WriteNode(session, t, *m));
  const uint64_t model_name = Hash(session.graph().name.empty() ? std::string("model") : session.graph().name);
  Api(raw::Level::kModel, raw::kModelLoadType, load_begin, HostTick(), model_name);
  if (!soc_) NPU_RETURN_IF_ERROR(StartDevice(session));
  models_.push_back(std::move(m));
  return static_cast<TaskObserver*>(models_.back().get());
}

// The first model's SoC is the device's: its record layouts, info.json, sample.json and PROFILING_ENABLE.
Status Collector::StartDevice(const Session& session) {
  soc_ = session.soc();
  const SocSpec& soc = *soc_;
  const ProfPlatform& platform = PlatformOf(soc.name);
  stars_ = platform.stars;
  split_cores_ = platform.split_cores;
  aic_events_ = MetricEvents(config_.aic_metrics, split_cores_ ? CoreKind::kAic : CoreKind::kAny);
  if (split_cores_) aiv_events_ = MetricEvents(config_.aic_metrics, CoreKind::kAiv);
  auto writer = [&](const char* name) { return std::make_unique<SliceWriter>(device_dir_, name, config_.slice_bytes); };
  device_log_ = writer(stars_ ? "stars_soc.data.0" : "hwts.data.0");
  pmu_ = writer(stars_ ? "ffts_profile.data.0" : "aicore.data.0");
  steps_ = writer("ts_track.data.0");
  // The control tasks run on a stream of their own, past the first model's (as the runtime gives them one).
  control_stream_ = next_stream_++;
  // info.json as msprof writes it (a real one: tests/data/prof_raw/ascend910_prof2023/device_0/info.json.0): the
  // fields its readers use (platform_version's chip code, rank_id, hostUid, DeviceInfo's core counts and clocks);
  // npukit's own under "npukit" (the SoC's name and peaks, for profparse's roofline).
  json device = {{"id", 0}, {"env_type", 3}, {"ai_core_num", soc.ai_cores}, {"aiv_num", soc.vector_cores},
                 {"ai_cpu_core_num", soc.aicpu_cores}, {"hwts_frequency", std::to_string(static_cast<int>(kHwtsFrequencyMhz))},
                 {"aic_frequency", std::to_string(static_cast<int>(soc.freq_mhz))},
                 {"aiv_frequency", std::to_string(static_cast<int>(soc.freq_mhz))}};
  double cube_peak = 2.0 * soc.cube_m * soc.cube_n * soc.cube_k * soc.ai_cores * soc.freq_mhz * 1e6;
  const std::string host = HostName();
  json info = {{"jobInfo", "NA"}, {"version", "1.0"}, {"hostname", host}, {"hostUid", std::to_string(std::hash<std::string>{}(host))},
               {"devices", "0"}, {"platform_version", std::to_string(PlatformOf(soc.name).platform_version)},
               {"pid", std::to_string(::getpid())}, {"pid_name", app_.substr(0, app_.find(' '))}, {"rank_id", 0},
               {"DeviceInfo", json::array({device})}, {"CPU", json::array({{{"Id", 0}, {"Frequency", 1000}}})},
               {"sysClockFreq", 1000}, {"hostCntvct", 0}, {"devCntvct", 0},
               {"npukit", {{"record_layout", "msprof"}, {"soc_version", soc.name}, {"cube_peak_flops", cube_peak},
                           {"memory_bandwidth_bytes_per_s", soc.memory_bandwidth_gbps * 1e9}, {"soc_origin", soc.origin}}}};
  // Beside data/, as msprof lays the folder out (msprof-analyze finds a rank by device_*/info.json.*).
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/info.json.0", info));
  NPU_RETURN_IF_ERROR(WriteJsonFile(host_root_ + "/info.json", info));
  json sample = {{"ai_core_metrics", config_.aic_metrics}, {"ai_core_profiling_mode", "task-based"},
                 {"ai_core_profiling_events", EventList(aic_events_)},
                 {"task_time", config_.task_time ? "on" : "off"}, {"aicpu", config_.aicpu ? "on" : "off"},
                 {"app", app_}, {"model_id", 0}};
  if (split_cores_) {
    sample["aiv_metrics"] = config_.aic_metrics;
    sample["aiv_profiling_mode"] = "task-based";
    sample["aiv_profiling_events"] = EventList(aiv_events_);
  }
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/sample.json", sample));
  // Device tick 0 is now: the simulated iterations come after the load.
  epoch_ns_ = std::max(host_clock_, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::system_clock::now().time_since_epoch()).count()));
  json start = {{"collectionTimeBegin", std::to_string(epoch_ns_ / 1000)}, {"clockMonotonicRaw", std::to_string(epoch_ns_)}};
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/start_info.0", start));
  NPU_RETURN_IF_ERROR(WriteJsonFile(host_root_ + "/start_info", start));
  ControlTask(std::string(raw::kProfilingEnable), epoch_ns_ - kControlLeadNs);  // done before the first iteration
  return error_;
}

// One launch as GE and the runtime report it: a node-level launch call holding the node's records (written by
// the caller) and the runtime's task track of the device task it made.
Status Collector::Launch(uint16_t stream, uint16_t task, const std::string& task_type, uint64_t kernel) {
  const uint64_t track_at = HostTick();
  raw::TaskTrackRecord r{};
  r.h = {raw::kMagic, static_cast<uint16_t>(raw::Level::kRuntime), raw::kRuntimeTaskTrackType, thread_id_, sizeof r - sizeof r.h, track_at};
  r.stream_id = stream;
  r.task_id = task;
  r.task_type = TypeId(raw::Level::kRuntime, task_type, 0);
  r.kernel_name = kernel;
  return task_track_->Append(r);
}

Status Collector::WriteNode(const Session& session, const Task& t, ModelObserver& m) {
  const Graph& g = session.graph();
  const Node& n = g.nodes[t.op_index];
  const SocSpec& soc = *session.soc();
  const Work work = TaskWork(g, t, &soc);
  const bool aicpu = t.engine == Engine::kAiCpu;
  TaskType type = TaskType::kAiCpu;
  if (!aicpu) {
    const TaskCost cost = EstimateTask(work, t.tiling, soc);
    type = DeviceTaskType(cost, soc);
  }
  m.task_types[{t.stream_id, t.task_id}] = static_cast<uint8_t>(type);
  const uint64_t name = Hash(n.name), launch_begin = HostTick();
  auto header = [&](raw::Level level, uint32_t type_code, uint32_t len) {
    return raw::CompactHeader{raw::kMagic, static_cast<uint16_t>(level), type_code, thread_id_, len, HostTick()};
  };
  raw::NodeBasicInfoRecord b{};
  b.h = header(raw::Level::kNode, raw::kNodeBasicInfoType, sizeof b - sizeof b.h);
  b.op_name = name;
  b.task_type = static_cast<uint32_t>(type);
  b.op_type = Hash(t.kernel_name);
  // A mix task's high 16 bits: the AIV blocks each AIC block runs with (the 910B pairs each AIC with two AIVs:
  // 20 AIC and 40 AIV on the 910B3, libcore/soc/specs/Ascend910B3.ini).
  const uint32_t aiv_per_aic = soc.ai_cores > 0 ? static_cast<uint32_t>(std::max(1, soc.vector_cores / soc.ai_cores)) : 1;
  b.block_num = (t.block_dim & 0xFFFF) | (type == TaskType::kMixAic ? aiv_per_aic << 16 : 0);
  NPU_RETURN_IF_ERROR(node_info_->Append(b));
  const std::vector<raw::TensorDesc> tensors = Tensors(g, n);
  for (size_t i = 0; i == 0 || i < tensors.size(); i += raw::kTensorsPerRecord) {
    raw::TensorInfoRecord r{};
    r.h = header(raw::Level::kNode, raw::kTensorInfoType, sizeof r - sizeof r.h);
    r.op_name = name;
    for (size_t k = i; k < tensors.size() && k < i + raw::kTensorsPerRecord; ++k) r.tensors[r.tensor_num++] = tensors[k];
    NPU_RETURN_IF_ERROR(tensor_info_->Append(r));
  }
  // npukit's own attribute: the op's work and tiling, for profparse's roofline columns (msprof ignores it).
  char text[96];
  std::snprintf(text, sizeof text, "flops=%.17g;bytes=%lld;tiling=", work.flops, static_cast<long long>(work.in_bytes + work.out_bytes));
  raw::NodeAttrInfoRecord a{};
  a.h = header(raw::Level::kNode, raw::kNodeAttrInfoType, sizeof a - sizeof a.h);
  a.op_name = name;
  a.attr_type = raw::kNpukitWorkAttr;
  a.hash_id = Hash(text + TilingToString(work, t.tiling));
  NPU_RETURN_IF_ERROR(attr_info_->Append(a));
  const std::string_view runtime_type = aicpu ? raw::kKernelAiCpu
                                        : type == TaskType::kMixAic ? raw::kKernelMixAic
                                        : type == TaskType::kAiVectorCore ? raw::kKernelAiVec : raw::kKernelAiCore;
  NPU_RETURN_IF_ERROR(Launch(static_cast<uint16_t>(m.stream_base + t.stream_id), static_cast<uint16_t>(t.task_id), std::string(runtime_type), Hash(t.kernel_name)));
  Api(raw::Level::kNode, raw::kNodeLaunchType, launch_begin, HostTick(), name);
  return Status::Ok();
}

// PROFILING_ENABLE / DISABLE: the runtime's tasks that switch the device's collection on and off, 20 ns each on
// the real 910B3 (tests/data/msprof/ascend910b3_cann8.5.2's task_time).
void Collector::ControlTask(const std::string& type, uint64_t ticks) {
  constexpr uint64_t kControlTaskNs = 20;
  const uint16_t task = control_task_++;
  host_clock_ = std::max(host_clock_, ticks - kControlLeadNs);  // launched a µs before it runs
  Keep(Launch(control_stream_, task, type, 0));
  DeviceTask(control_stream_, task, raw::kSqePlaceHolder, ticks, ticks + kControlTaskNs);
}

void Collector::DeviceTask(uint16_t stream, uint16_t task, uint8_t sqe, uint64_t start, uint64_t end) {
  if (stars_) {
    for (auto [func, ticks] : {std::pair{raw::kAcsqStart, start}, std::pair{raw::kAcsqEnd, end}}) {
      raw::AcsqLogRecord r{};
      r.head = static_cast<uint16_t>(func | (log_counter_++ & 0xF) << 6 | (sqe & 0x3F) << 10);
      r.stream_id = stream;
      r.task_id = task;
      r.timestamp = ticks;
      Keep(device_log_->Append(r));
    }
    return;
  }
  std::array<std::byte, kHwtsLogRecordBytes> rec;
  for (auto [type, ticks] : {std::pair{uint8_t{0}, start}, std::pair{uint8_t{1}, end}}) {
    HwtsLogEntry e;
    e.log_type = type;
    e.counter = log_counter_++ & 0xF;
    e.task_type = sqe;
    e.task_id = task;
    e.stream_id = stream;
    e.syscnt = ticks;
    EncodeHwtsLogRecord(e, rec);
    Keep(device_log_->Append(std::span<const std::byte>(rec)));
  }
}

namespace {

// A task's count of one PMU event, summed over its blocks. The cost model gives the slowest core's cycles over
// all its waves; a block is that over the waves, and the task runs block_dim of them.
double EventCount(uint16_t event, const TaskCost& c, DType dtype) {
  const double blocks = std::max(c.block_dim, 1) / static_cast<double>(std::max(c.waves, 1));
  const bool int8 = dtype == DType::kI8 || dtype == DType::kU8, wide = DTypeSize(dtype) >= 4;
  auto requests = [&](double bytes) { return bytes / BytesPerRequest(event); };  // bytes are the whole task's
  switch (event) {
    case kVecBusy: return c.pipes.vector * blocks;
    case kScalarBusy: return c.pipes.scalar * blocks;
    case kCubeBusy: return c.pipes.cube * blocks;
    case kMte1Busy: return c.pipes.mte1 * blocks;
    case kMte2Busy: return c.pipes.mte2 * blocks;
    case kMte3Busy: return c.pipes.mte3 * blocks;
    case kFixpipeBusy: return c.pipes.fixpipe * blocks;
    case kUbReadReq: return requests(c.ub_read_bytes);
    case kUbWriteReq: return requests(c.ub_write_bytes);
    case kL1ReadReq: return requests(c.l1_read_bytes);
    case kL1WriteReq: return requests(c.l1_write_bytes);
    case kL2ReadReq: return requests(c.l2_read_bytes);
    case kMainReadReq: return requests(c.gm_read_bytes - c.l2_read_bytes);
    case kMainWriteReq: return requests(c.gm_write_bytes);
    case kCubeFp16Exec: return int8 ? 0 : c.cube_fractals;
    case kCubeInt8Exec: return int8 ? c.cube_fractals : 0;
    case kVecFp32Exec: return wide ? c.vector_repeats : 0;
    case kVecFp16Exec: return wide ? 0 : c.vector_repeats;
    default: return 0;  // no instruction cache, no L2 write-back request counter, no int32/misc split
  }
}

}  // namespace

// The PMU record(s) of an AI Core task: one on a one-core-kind chip; on the 910B one per core kind it ran on.
void Collector::Pmu(uint16_t stream, uint16_t task, const TaskCost& cost, DType dtype, uint8_t task_type) {
  const double blocks = std::max(cost.block_dim, 1) / static_cast<double>(std::max(cost.waves, 1));
  const uint64_t total = static_cast<uint64_t>(cost.core_cycles * blocks + 0.5);
  auto fill = [&](const std::vector<uint16_t>& events, uint64_t* slots) {
    for (size_t i = 0; i < events.size() && i < kPmuSlots; ++i) slots[i] = static_cast<uint64_t>(EventCount(events[i], cost, dtype) + 0.5);
  };
  if (!stars_) {
    raw::AicPmuRecord r{};
    r.head = static_cast<uint8_t>((pmu_counter_++ & 0xF) << 4);
    r.task_id = task;
    r.stream_id = stream;
    r.total_cycles = total;
    fill(aic_events_, r.events);
    Keep(pmu_->Append(r));
    return;
  }
  const TaskType type = static_cast<TaskType>(task_type);
  auto part = [&](uint16_t ffts, uint16_t sub, const std::vector<uint16_t>& events) {
    raw::ContextPmuRecord r{};
    r.head = static_cast<uint16_t>(raw::kContextPmuFunc | (pmu_counter_++ & 0xF) << 6);
    r.stream_id = stream;
    r.task_id = task;
    r.sub_task = sub;
    r.context_id = type == TaskType::kMixAic ? 0 : 0xFFFF;
    r.ffts = static_cast<uint16_t>(ffts << 13);
    r.total_cycles = total;
    fill(events, r.events);
    Keep(pmu_->Append(r));
  };
  if (type == TaskType::kMixAic) {
    part(raw::kFftsPlus, raw::kSubTaskAic, aic_events_);
    part(raw::kFftsPlus, raw::kSubTaskAiv, aiv_events_);
  } else if (type == TaskType::kAiVectorCore) {
    part(raw::kFftsAiv, 0, aiv_events_);
  } else {
    part(raw::kFftsNormal, 0, aic_events_);
  }
}

void Collector::OnTask(ModelObserver& m, const TaskEvent& e) {
  if (!error_.ok() || finished_ || !e.timing || !e.task.on_device() || !config_.task_time) return;
  if (static_cast<int64_t>(e.iteration) != m.iteration) {  // the iteration's first task: place it on the device
    m.iteration = static_cast<int64_t>(e.iteration);
    const double iteration_start = e.sim_start_ns - e.timing->start_ns;  // the session's clock when it began
    m.offset_ns = std::max(0.0, device_free_ns_ - iteration_start);
  }
  const bool aicpu = e.task.engine == Engine::kAiCpu;
  if (aicpu && !config_.aicpu) return;
  const double at = m.offset_ns + e.sim_start_ns;
  const uint64_t start = epoch_ns_ + static_cast<uint64_t>(at);
  // Truncate the absolute end, not the duration: the next task starts at exactly this instant (no 1-ns gaps).
  const uint64_t end = epoch_ns_ + static_cast<uint64_t>(at + e.timing->duration_ns);
  const uint16_t stream = static_cast<uint16_t>(m.stream_base + e.task.stream_id), task = static_cast<uint16_t>(e.task.task_id);
  auto known = m.task_types.find({e.task.stream_id, e.task.task_id});
  const uint8_t type = known != m.task_types.end() ? known->second : static_cast<uint8_t>(aicpu ? TaskType::kAiCpu : TaskType::kAiCore);
  const uint8_t sqe = aicpu ? raw::kSqeAiCpu : type == static_cast<uint8_t>(TaskType::kAiVectorCore) ? raw::kSqeAiv : raw::kSqeAiCore;
  DeviceTask(stream, task, sqe, start, end);
  if (!aicpu) Pmu(stream, task, e.timing->cost, e.timing->work.dtype, type);
}

void Collector::OnIteration(ModelObserver& m, uint64_t iteration, double start_ns, double end_ns) {
  if (!error_.ok() || finished_) return;
  if (static_cast<int64_t>(iteration) != m.iteration) {  // an iteration with no profiled task (task_time off)
    m.iteration = static_cast<int64_t>(iteration);
    m.offset_ns = std::max(0.0, device_free_ns_ - start_ns);
  }
  device_free_ns_ = std::max(device_free_ns_, m.offset_ns + end_ns);
  const uint64_t start = epoch_ns_ + static_cast<uint64_t>(m.offset_ns + start_ns), end = epoch_ns_ + static_cast<uint64_t>(m.offset_ns + end_ns);
  for (auto [tag, ticks] : {std::pair{raw::kModelStartTag, start}, std::pair{raw::kModelEndTag, end}, std::pair{raw::kIterationEndTag, end}}) {
    raw::StepTraceRecord r{};
    r.ts_tag = raw::kStepTraceTag;
    r.timestamp = ticks;
    r.index_id = iteration + 1;
    r.model_id = m.model_id;
    r.tag_id = tag;
    Keep(steps_->Append(r));
  }
  // The model's execution: aclmdlExecute over GE's model execution, on the simulated device's clock.
  Api(raw::Level::kAcl, TypeId(raw::Level::kAcl, "aclmdlExecute", raw::kAclModelBaseType), start, end, 0);
  Api(raw::Level::kModel, raw::kModelExecuteType, start, end, iteration + 1);
}

Status Collector::Finish() {
  if (finished_) return error_;
  finished_ = true;
  if (soc_) ControlTask(std::string(raw::kProfilingDisable), epoch_ns_ + static_cast<uint64_t>(device_free_ns_) + kControlLeadNs);
  for (auto* w : {device_log_.get(), pmu_.get(), steps_.get(), api_.get(), node_info_.get(), task_track_.get(), tensor_info_.get(), attr_info_.get()})
    if (w) Keep(w->Finish());
  auto write_dictionary = [&](const char* name, const std::string& text) {
    SliceWriter w(host_dir_, name, config_.slice_bytes);
    Keep(w.Append(std::as_bytes(std::span(text.data(), text.size()))));
    Keep(w.Finish());
  };
  auto clean = [](std::string s) {
    for (char& ch : s)
      if (ch == '\n' || ch == '\r') ch = ' ';
    return s;
  };
  std::string text;
  for (const auto& [id, s] : strings_) text += std::to_string(id) + ":" + clean(s) + "\n";
  write_dictionary("unaging.additional.hash_dic", text);
  text.clear();
  for (const auto& [key, id] : types_) text += std::to_string(key.first) + "_" + std::to_string(id) + ":" + clean(key.second) + "\n";
  write_dictionary("unaging.additional.type_info_dic", text);
  auto end = std::chrono::system_clock::now();
  uint64_t end_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count());
  json end_info = {{"collectionTimeEnd", std::to_string(end_ns / 1000)}, {"clockMonotonicRaw", std::to_string(end_ns)}};
  if (soc_) Keep(WriteJsonFile(device_root_ + "/end_info.0", end_info));
  Keep(WriteJsonFile(host_root_ + "/end_info", end_info));
  return error_;
}

}  // namespace npu::prof
