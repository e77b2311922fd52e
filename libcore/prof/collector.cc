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
#include "prof/hwts_log.h"
#include "prof/platform.h"

namespace npu::prof {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string_view TaskTypeName(TaskType t) { return GeTaskTypeName(static_cast<uint32_t>(t)); }

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

std::string Join(const std::vector<std::string>& parts, char sep) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? std::string(1, sep) : "") + parts[i];
  return s;
}

// "1,3,224,224;64" for a node's inputs or outputs (scalars show as empty between ';', as CANN prints them).
void Describe(const Graph& g, const std::vector<int>& vals, std::string& shapes, std::string& dtypes, std::string& formats) {
  std::vector<std::string> s, d, f;
  for (int v : vals) {
    if (v < 0) continue;
    const Value& x = g.values[v];
    std::string dims;  // the device shape and format, as the task reads them
    Shape shape = DeviceShapeOf(x);
    for (size_t i = 0; i < shape.size(); ++i) dims += (i ? "," : "") + std::to_string(shape[i]);
    s.push_back(dims);
    std::string dt(DTypeName(x.dtype));
    for (char& c : dt) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    d.push_back(dt);
    f.push_back(std::string(FormatName(DeviceFormat(x))));
  }
  shapes = Join(s, ';');
  dtypes = Join(d, ';');
  formats = Join(f, ';');
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

uint32_t Collector::Intern(const std::string& s) {
  auto [it, fresh] = strings_.emplace(s, static_cast<uint32_t>(strings_.size()));
  return it->second;
}

Result<std::unique_ptr<Collector>> Collector::Start(const ProfilerConfig& config, const Session& session, const std::string& app) {
  if (!session.soc()) return Status::Error("E10001", "profiler", "switch=on", "the .onnx reference path has no simulated clock", "Profile an .om.");
  std::unique_ptr<Collector> c(new Collector());
  c->config_ = config;
  c->soc_ = session.soc();
  auto now = std::chrono::system_clock::now();
  c->epoch_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count());
  std::string parent = config.output.empty() ? "." : config.output;
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::Error("E13004", "profiler output", parent, "cannot create the directory: " + ec.message());
  // PROF_{seq}_{timestamp}_{random}: seq counts the PROF dirs already there, so runs never collide.
  int seq = 1;
  for (const auto& e : fs::directory_iterator(parent, ec))
    if (e.path().filename().string().rfind("PROF_", 0) == 0) ++seq;
  std::mt19937 rng(static_cast<uint32_t>(c->epoch_ns_ ^ static_cast<uint64_t>(::getpid())));
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
  c->hwts_ = std::make_unique<SliceWriter>(c->device_dir_, "hwts.data.0", config.slice_bytes);
  c->pmu_ = std::make_unique<SliceWriter>(c->device_dir_, "aicore.data.0", config.slice_bytes);
  c->steps_ = std::make_unique<SliceWriter>(c->device_dir_, "ts_track.data.0", config.slice_bytes);
  c->nodes_ = std::make_unique<SliceWriter>(c->host_dir_, "unaging.compact.node_basic_info", config.slice_bytes);
  c->api_ = std::make_unique<SliceWriter>(c->host_dir_, "unaging.api_event.data", config.slice_bytes);
  NPU_RETURN_IF_ERROR(c->WriteStatic(session, app));
  return c;
}

Status Collector::WriteStatic(const Session& session, const std::string& app) {
  const Graph& g = session.graph();
  for (const Task& t : session.model().tasks) {
    if (!t.on_device()) continue;
    const Node& n = g.nodes[t.op_index];
    NodeRecord r{};
    r.h = {kNodeMagic, kRecordVersion, 0};
    r.stream_id = t.stream_id;
    r.task_id = t.task_id;
    r.op_name = Intern(n.name);
    r.op_type = Intern(t.kernel_name);
    r.task_type = static_cast<uint32_t>(t.engine == Engine::kAiCpu ? TaskType::kAiCpu : TaskType::kAiCore);
    r.block_dim = t.block_dim;
    std::string s, d, f;
    Describe(g, n.inputs, s, d, f);
    r.input_shapes = Intern(s), r.input_dtypes = Intern(d), r.input_formats = Intern(f);
    Describe(g, n.outputs, s, d, f);
    r.output_shapes = Intern(s), r.output_dtypes = Intern(d), r.output_formats = Intern(f);
    r.tiling = Intern(TilingToString(TaskWork(g, t, session.soc()), t.tiling));
    NPU_RETURN_IF_ERROR(nodes_->Append(r));
  }
  const SocSpec& soc = *session.soc();
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
               {"pid", std::to_string(::getpid())}, {"pid_name", app.substr(0, app.find(' '))}, {"rank_id", 0},
               {"DeviceInfo", json::array({device})}, {"CPU", json::array({{{"Id", 0}, {"Frequency", 1000}}})},
               {"sysClockFreq", 1000}, {"hostCntvct", 0}, {"devCntvct", 0},
               {"npukit", {{"record_version", kRecordVersion}, {"soc_version", soc.name}, {"cube_peak_flops", cube_peak},
                           {"memory_bandwidth_bytes_per_s", soc.memory_bandwidth_gbps * 1e9}, {"soc_origin", soc.origin}}}};
  // Beside data/, as msprof lays the folder out (msprof-analyze finds a rank by device_*/info.json.*).
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/info.json.0", info));
  NPU_RETURN_IF_ERROR(WriteJsonFile(host_root_ + "/info.json", info));
  json sample = {{"ai_core_metrics", config_.aic_metrics}, {"ai_core_profiling_mode", "task-based"},
                 {"task_time", config_.task_time ? "on" : "off"}, {"aicpu", config_.aicpu ? "on" : "off"},
                 {"app", app}, {"model_id", 0}};
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/sample.json", sample));
  json start = {{"collectionTimeBegin", std::to_string(epoch_ns_ / 1000)}, {"clockMonotonicRaw", std::to_string(epoch_ns_)}};
  NPU_RETURN_IF_ERROR(WriteJsonFile(device_root_ + "/start_info.0", start));
  return WriteJsonFile(host_root_ + "/start_info", start);
}

void Collector::AfterTask(const TaskEvent& e) {
  if (!error_.ok() || !e.timing || !e.task.on_device() || !config_.task_time) return;
  bool aicpu = e.task.engine == Engine::kAiCpu;
  if (aicpu && !config_.aicpu) return;
  uint64_t start = epoch_ns_ + static_cast<uint64_t>(e.sim_start_ns);
  HwtsRecord h{};
  h.h = {kHwtsMagic, kRecordVersion, 0};
  h.iteration = static_cast<uint32_t>(e.iteration);
  h.stream_id = e.task.stream_id;
  h.task_id = e.task.task_id;
  h.start_ticks = start;
  // Truncate the absolute end, not the duration: the next task starts at exactly this instant (no 1-ns gaps).
  h.end_ticks = epoch_ns_ + static_cast<uint64_t>(e.sim_start_ns + e.timing->duration_ns);
  h.block_dim = e.task.block_dim;
  h.task_type = static_cast<uint8_t>(aicpu ? TaskType::kAiCpu : DeviceTaskType(e.timing->cost, *soc_));
  if (Status s = hwts_->Append(h); !s.ok()) error_ = s;
  if (aicpu) return;
  const TaskCost& c = e.timing->cost;
  PmuRecord p{};
  p.h = {kPmuMagic, kRecordVersion, 0};
  p.iteration = h.iteration;
  p.stream_id = h.stream_id;
  p.task_id = h.task_id;
  auto u = [](double v) { return static_cast<uint64_t>(v + 0.5); };
  p.total_cycles = u(c.core_cycles);
  p.cube_cycles = u(c.pipes.cube), p.vector_cycles = u(c.pipes.vector), p.scalar_cycles = u(c.pipes.scalar);
  p.mte1_cycles = u(c.pipes.mte1), p.mte2_cycles = u(c.pipes.mte2), p.mte3_cycles = u(c.pipes.mte3);
  p.fixpipe_cycles = u(c.pipes.fixpipe);
  bool int8 = e.timing->work.dtype == DType::kI8 || e.timing->work.dtype == DType::kU8;
  (int8 ? p.cube_int8_fractals : p.cube_fp16_fractals) = u(c.cube_fractals);
  (DTypeSize(e.timing->work.dtype) >= 4 ? p.vector_fp32_repeats : p.vector_fp16_repeats) = u(c.vector_repeats);
  p.ub_read_bytes = u(c.ub_read_bytes), p.ub_write_bytes = u(c.ub_write_bytes);
  p.l1_read_bytes = u(c.l1_read_bytes), p.l1_write_bytes = u(c.l1_write_bytes);
  p.l2_read_bytes = u(c.l2_read_bytes);
  p.main_read_bytes = u(c.gm_read_bytes - c.l2_read_bytes), p.main_write_bytes = u(c.gm_write_bytes);
  if (Status s = pmu_->Append(p); !s.ok()) error_ = s;
}

void Collector::AfterIteration(uint64_t iteration, double start_ns, double end_ns) {
  if (!error_.ok()) return;
  auto step = [&](StepTag tag, double ns) {
    StepRecord r{};
    r.h = {kStepMagic, kRecordVersion, 0};
    r.tag = static_cast<uint16_t>(tag);
    r.iteration = static_cast<uint32_t>(iteration);
    r.ticks = epoch_ns_ + static_cast<uint64_t>(ns);
    if (Status s = steps_->Append(r); !s.ok()) error_ = s;
  };
  step(StepTag::kModelStart, start_ns);
  step(StepTag::kModelEnd, end_ns);
  step(StepTag::kIterationEnd, end_ns);
  ApiRecord a{};
  a.h = {kApiMagic, kRecordVersion, 0};
  a.level = kApiLevelAcl;
  a.name = Intern("aclmdlExecute");
  a.thread_id = static_cast<uint32_t>(::getpid());
  a.start_ns = epoch_ns_ + static_cast<uint64_t>(start_ns);
  a.end_ns = epoch_ns_ + static_cast<uint64_t>(end_ns);
  a.iteration = static_cast<uint32_t>(iteration);
  if (Status s = api_->Append(a); !s.ok()) error_ = s;
}

Status Collector::Finish() {
  for (auto* w : {hwts_.get(), pmu_.get(), steps_.get(), nodes_.get(), api_.get()})
    if (Status s = w->Finish(); !s.ok() && error_.ok()) error_ = s;
  std::ostringstream dict;
  for (const auto& [s, id] : strings_) {
    std::string clean = s;
    for (char& ch : clean)
      if (ch == '\n' || ch == '\r') ch = ' ';
    dict << id << ":" << clean << "\n";
  }
  SliceWriter hash(host_dir_, "unaging.additional.hash_dic", config_.slice_bytes);
  std::string text = dict.str();
  if (Status s = hash.Append(std::as_bytes(std::span(text.data(), text.size()))); !s.ok() && error_.ok()) error_ = s;
  if (Status s = hash.Finish(); !s.ok() && error_.ok()) error_ = s;
  auto end = std::chrono::system_clock::now();
  uint64_t end_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(end.time_since_epoch()).count());
  json end_info = {{"collectionTimeEnd", std::to_string(end_ns / 1000)}, {"clockMonotonicRaw", std::to_string(end_ns)}};
  if (Status s = WriteJsonFile(device_root_ + "/end_info.0", end_info); !s.ok() && error_.ok()) error_ = s;
  if (Status s = WriteJsonFile(host_root_ + "/end_info", end_info); !s.ok() && error_.ok()) error_ = s;
  return error_;
}

}  // namespace npu::prof
