#include "raw_profile.h"
#include "base/json.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <filesystem>
#include <span>
#include <nlohmann/json.hpp>

#include "base/csv.h"
#include "base/file_io.h"
#include "ir/dtype.h"
#include "prof/platform.h"
#include "prof/pmu_events.h"

namespace npu::profparse {
namespace fs = std::filesystem;
namespace raw = prof::raw;
using json = nlohmann::json;

namespace {

Status Malformed(const std::string& path, const std::string& why) {
  return Status::Error("EP0001", "--output", path, why, "The PROF directory is damaged; re-run the collection (msame with profiling on).");
}

Result<json> ReadJson(const std::string& path) {
  if (!FileExists(path)) return Malformed(path, "the file is missing");
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  json j = npu::ParseJson(text);
  if (j.is_discarded() || !j.is_object()) return Malformed(path, "not a JSON object");
  return j;
}

double NumberOr(const json& j, const char* key, double def) {
  if (!j.contains(key)) return def;
  const json& v = j[key];
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return std::stod(v.get<std::string>());
    } catch (...) {
    }
  }
  return def;
}

// An integer field in [0, max]; `def` when it is absent, not a number, or outside (a cast would be undefined).
uint64_t CountOr(const json& j, const char* key, uint64_t def, double max) {
  double v = NumberOr(j, key, static_cast<double>(def));
  return v >= 0 && v <= max ? static_cast<uint64_t>(v) : def;
}

// A dictionary file: "<key>:<value>" lines, read whole (its slices' sizes are known) with no staging buffer.
Result<std::string> ReadDictionary(RawProfile& p, const char* name) {
  NPU_ASSIGN_OR_RETURN(auto reader, OpenSlices(p, p.host_dir, name));
  std::string text(static_cast<size_t>(reader.total_bytes()), '\0');
  NPU_ASSIGN_OR_RETURN(size_t got, reader.Read(std::as_writable_bytes(std::span(text))));
  text.resize(got);
  return text;
}

template <typename F>
void ForEachEntry(const std::string& text, F&& f) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) break;  // a cut-off last line
    std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    size_t colon = line.find(':');
    if (colon != std::string_view::npos && colon > 0) f(line.substr(0, colon), line.substr(colon + 1));
  }
}

std::optional<uint64_t> Number(std::string_view s) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() ? std::optional(v) : std::nullopt;
}

// The host records of a data file, whole (a model's load reports a few records per node).
template <typename T>
Result<std::vector<T>> ReadHostRecords(RawProfile& p, const char* name) {
  NPU_ASSIGN_OR_RETURN(auto reader, OpenSlices(p, p.host_dir, name));
  prof::RecordStream<T> stream(reader, raw::IsHostRecord);
  std::vector<T> out;
  for (T r; stream.Next(r);) out.push_back(r);
  NPU_RETURN_IF_ERROR(stream.status());
  if (stream.garbage_bytes()) p.warnings.push_back(std::to_string(stream.garbage_bytes()) + " bytes of garbage skipped in " + name);
  return out;
}

// "1,3,224,224;64" for a node's inputs or outputs, as msprof prints them (dims to the first zero).
void Describe(const std::vector<raw::TensorDesc>& tensors, uint32_t kind, std::string& shapes, std::string& dtypes, std::string& formats) {
  for (const raw::TensorDesc& d : tensors) {
    if (d.tensor_type != kind) continue;
    if (!dtypes.empty() || !shapes.empty() || !formats.empty()) shapes += ';', dtypes += ';', formats += ';';
    for (int i = 0; i < raw::kTensorShapeDims && d.shape[i]; ++i) shapes += (i ? "," : "") + std::to_string(d.shape[i]);
    const GeType* t = FindGeType(static_cast<int32_t>(d.data_type));
    std::string dt = t ? t->name : "UNDEFINED";
    for (char& c : dt) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    dtypes += dt;
    formats += FormatName(static_cast<int32_t>(d.format));
  }
}

// "flops=F;bytes=B;tiling=T": npukit's work attribute.
void ReadWork(std::string_view text, NodeInfo& n) {
  auto field = [&](std::string_view key) -> std::string_view {
    size_t at = text.find(key);
    if (at == std::string_view::npos) return {};
    std::string_view rest = text.substr(at + key.size());
    return key == "tiling=" ? rest : rest.substr(0, rest.find(';'));
  };
  n.flops = std::strtod(std::string(field("flops=")).c_str(), nullptr);
  n.bytes = std::strtod(std::string(field("bytes=")).c_str(), nullptr);
  n.tiling = std::string(field("tiling="));
}

// The host side: API calls, and the records GE and the runtime reported inside each node launch.
Status LoadHost(RawProfile& p) {
  std::unordered_map<uint64_t, std::string> dict;
  NPU_ASSIGN_OR_RETURN(std::string hashes, ReadDictionary(p, "unaging.additional.hash_dic"));
  ForEachEntry(hashes, [&](std::string_view k, std::string_view v) {
    if (auto id = Number(k)) dict.emplace(*id, std::string(v));
  });
  std::map<std::pair<uint64_t, uint64_t>, std::string> types;  // (level, type) -> name
  NPU_ASSIGN_OR_RETURN(std::string type_text, ReadDictionary(p, "unaging.additional.type_info_dic"));
  ForEachEntry(type_text, [&](std::string_view k, std::string_view v) {
    const size_t us = k.find('_');
    auto level = Number(k.substr(0, us)), type = us == std::string_view::npos ? std::nullopt : Number(k.substr(us + 1));
    if (level && type) types[{*level, *type}] = std::string(v);
  });
  auto str = [&](uint64_t id) {
    auto it = dict.find(id);
    return it == dict.end() ? std::string("N/A") : it->second;
  };
  NPU_ASSIGN_OR_RETURN(auto apis, ReadHostRecords<raw::ApiRecord>(p, "unaging.api_event.data"));
  struct Launch {
    uint32_t thread;
    uint64_t begin, end;
    NodeInfo node;
    std::vector<raw::TensorDesc> tensors;
    std::vector<std::pair<uint32_t, uint32_t>> tasks;
  };
  std::vector<Launch> launches;
  for (const raw::ApiRecord& a : apis) {
    const uint64_t begin = a.begin, end = std::max(a.begin, a.end);
    auto name = types.find({a.level, a.type});
    p.apis.push_back({a.level, name != types.end() ? name->second : std::to_string(a.type), a.thread_id, begin, end});
    if (a.level == static_cast<uint16_t>(raw::Level::kNode) && a.type == raw::kNodeLaunchType) launches.push_back({a.thread_id, begin, end, {}, {}, {}});
  }
  std::sort(p.apis.begin(), p.apis.end(), [](const ApiCall& a, const ApiCall& b) { return a.begin < b.begin; });
  std::sort(launches.begin(), launches.end(), [](const Launch& a, const Launch& b) { return std::tie(a.thread, a.begin) < std::tie(b.thread, b.begin); });
  // The launch of a record: the thread's latest launch that began by the record's time and had not ended.
  auto launch_of = [&](const raw::CompactHeader& h) -> Launch* {
    auto it = std::upper_bound(launches.begin(), launches.end(), std::pair{h.thread_id, h.timestamp},
                               [](const std::pair<uint32_t, uint64_t>& k, const Launch& l) { return k < std::pair{l.thread, l.begin}; });
    if (it == launches.begin()) return nullptr;
    --it;
    return it->thread == h.thread_id && h.timestamp <= it->end ? &*it : nullptr;
  };
  NPU_ASSIGN_OR_RETURN(auto basics, ReadHostRecords<raw::NodeBasicInfoRecord>(p, "aging.compact.node_basic_info"));
  for (const raw::NodeBasicInfoRecord& r : basics)
    if (Launch* l = launch_of(r.h)) {
      l->node.op_name = str(r.op_name);
      l->node.op_type = str(r.op_type);
      l->node.task_type = static_cast<prof::TaskType>(r.task_type);
      l->node.block_dim = r.block_num & 0xFFFF;
      l->node.mix_block_dim = (r.block_num & 0xFFFF) * (r.block_num >> 16);
    }
  NPU_ASSIGN_OR_RETURN(auto tensors, ReadHostRecords<raw::TensorInfoRecord>(p, "aging.additional.tensor_info"));
  for (const raw::TensorInfoRecord& r : tensors)
    if (Launch* l = launch_of(r.h))
      for (uint32_t i = 0; i < std::min<uint32_t>(r.tensor_num, raw::kTensorsPerRecord); ++i) l->tensors.push_back(r.tensors[i]);
  NPU_ASSIGN_OR_RETURN(auto attrs, ReadHostRecords<raw::NodeAttrInfoRecord>(p, "aging.compact.node_attr_info"));
  for (const raw::NodeAttrInfoRecord& r : attrs)
    if (Launch* l = launch_of(r.h); l && r.attr_type == raw::kNpukitWorkAttr) ReadWork(str(r.hash_id), l->node);
  NPU_ASSIGN_OR_RETURN(auto tracks, ReadHostRecords<raw::TaskTrackRecord>(p, "aging.compact.task_track"));
  for (const raw::TaskTrackRecord& r : tracks) {
    auto type = types.find({static_cast<uint64_t>(raw::Level::kRuntime), r.task_type});
    p.runtime_types[{r.stream_id, r.task_id}] = type != types.end() ? type->second : "UNKNOWN";
    if (Launch* l = launch_of(r.h)) l->tasks.emplace_back(r.stream_id, r.task_id);
  }
  for (Launch& l : launches) {
    if (l.tasks.empty() || l.node.op_name.empty()) continue;
    NodeInfo& n = l.node;
    Describe(l.tensors, raw::kInputTensor, n.input_shapes, n.input_dtypes, n.input_formats);
    Describe(l.tensors, raw::kOutputTensor, n.output_shapes, n.output_dtypes, n.output_formats);
    n.csv = {CsvCell(n.op_name), CsvCell(n.op_type)};
    // Shapes, dtypes and formats as msprof writes them: inside literal quotes (msprof-analyze strips the first and
    // last character of the field), N/A bare.
    for (const std::string* f : {&n.input_shapes, &n.input_dtypes, &n.input_formats, &n.output_shapes, &n.output_dtypes, &n.output_formats})
      n.csv.push_back(*f == "N/A" ? *f : CsvCell("\"" + *f + "\""));
    for (const auto& key : l.tasks) p.nodes[key] = n;
  }
  return Status::Ok();
}

// The iterations from the step trace: each model start (tag 0) to its iteration's end (tag 4).
Status LoadIterations(RawProfile& p) {
  NPU_ASSIGN_OR_RETURN(auto reader, OpenSlices(p, p.device_dir, "ts_track.data.0"));
  prof::RecordStream<raw::StepTraceRecord> steps(reader);
  std::map<uint64_t, IterationSpan> by_index;
  for (raw::StepTraceRecord s; steps.Next(s);) {
    if (s.ts_tag != raw::kStepTraceTag || s.index_id == 0 || s.index_id > UINT32_MAX) continue;
    IterationSpan& it = by_index.try_emplace(s.index_id, IterationSpan{static_cast<uint32_t>(s.index_id - 1), UINT64_MAX, 0}).first->second;
    if (s.tag_id == raw::kModelStartTag) it.start = s.timestamp;
    if (s.tag_id == raw::kIterationEndTag) it.end = s.timestamp;
  }
  NPU_RETURN_IF_ERROR(steps.status());
  for (const auto& [index, span] : by_index)
    if (span.start != UINT64_MAX && span.end >= span.start) p.iterations.push_back(span);  // an iteration cut short has no end
  std::sort(p.iterations.begin(), p.iterations.end(), [](const IterationSpan& a, const IterationSpan& b) { return a.start < b.start; });
  return Status::Ok();
}

}  // namespace

void NoteIncomplete(RawProfile& p, const std::vector<std::string>& files) {
  for (const auto& f : files) p.warnings.push_back(f + " is incomplete (no matching .done marker): its records are read as far as they are whole");
}

Result<prof::SliceReader> OpenSlices(RawProfile& p, const std::string& dir, const std::string& name) {
  NPU_ASSIGN_OR_RETURN(prof::SliceReader r, prof::SliceReader::Open(dir, name));
  NoteIncomplete(p, r.incomplete());
  return r;
}

std::optional<double> HwtsMhzOfInfo(const std::string& path) {
  auto info = ReadJson(path);
  if (!info.ok() || !info.value().contains("DeviceInfo") || !info.value()["DeviceInfo"].is_array() || info.value()["DeviceInfo"].empty() ||
      !info.value()["DeviceInfo"][0].is_object())
    return std::nullopt;
  const double mhz = NumberOr(info.value()["DeviceInfo"][0], "hwts_frequency", 0);
  return IsClockRateMhz(mhz) ? std::optional(mhz) : std::nullopt;
}

Result<RawProfile> LoadProfile(const std::string& prof_dir) {
  RawProfile p;
  p.dir = prof_dir;
  p.device_dir = prof_dir + "/device_0/data";
  p.host_dir = prof_dir + "/host/data";
  // info.json & co. sit beside data/, as msprof lays the folder out (npukit before 0.2 put them inside data/).
  const std::string root = FileExists(prof_dir + "/device_0/info.json.0") || !FileExists(p.device_dir + "/info.json.0")
                               ? prof_dir + "/device_0" : p.device_dir;
  NPU_ASSIGN_OR_RETURN(json info, ReadJson(root + "/info.json.0"));
  // The SoC: npukit's own field, else the chip family of msprof's platform_version code (older npukit wrote the name there).
  std::string code = info.contains("platform_version") && info["platform_version"].is_string() ? info["platform_version"].get<std::string>() : "";
  p.device.platform = info.contains("npukit") && info["npukit"].is_object() ? info["npukit"].value("soc_version", "") : "";
  if (p.device.platform.empty()) p.device.platform = prof::SocOfPlatformVersion(code).empty() ? code : std::string(prof::SocOfPlatformVersion(code));
  p.device.pid = static_cast<uint32_t>(CountOr(info, "pid", 0, UINT32_MAX)) & 0x3FFFFF;
  p.device.rank_id = static_cast<int>(CountOr(info, "rank_id", 0, 1 << 20));
  if (!info.contains("DeviceInfo") || !info["DeviceInfo"].is_array() || info["DeviceInfo"].empty() || !info["DeviceInfo"][0].is_object())
    return Malformed(root + "/info.json.0", "DeviceInfo is missing");
  const json& d = info["DeviceInfo"][0];
  constexpr double kMaxCores = 4096;  // far past any Ascend chip
  p.device.ai_cores = std::max<int>(1, static_cast<int>(CountOr(d, "ai_core_num", 1, kMaxCores)));
  p.device.hwts_mhz = NumberOr(d, "hwts_frequency", 1000);
  p.device.aic_mhz = NumberOr(d, "aic_frequency", 1000);
  for (double mhz : {p.device.hwts_mhz, p.device.aic_mhz})
    if (!IsClockRateMhz(mhz))
      return Malformed(root + "/info.json.0", "a frequency (" + std::to_string(mhz) + " MHz) is not a clock rate between 1 MHz and 100 GHz");
  if (info.contains("npukit") && info["npukit"].is_object()) {
    p.device.cube_peak_flops = NumberOr(info["npukit"], "cube_peak_flops", 0);
    p.device.memory_bandwidth = NumberOr(info["npukit"], "memory_bandwidth_bytes_per_s", 0);
  }
  json root_sample;
  if (auto sample = ReadJson(root + "/sample.json"); sample.ok()) {
    root_sample = sample.value();
    const json& m = root_sample.contains("ai_core_metrics") ? root_sample["ai_core_metrics"] : json();
    p.device.aic_metrics = m.is_string() ? m.get<std::string>() : "PipeUtilization";
  } else {
    p.warnings.push_back(sample.status().message() + "; using the PipeUtilization metrics");
  }
  if (auto start = ReadJson(root + "/start_info.0"); start.ok())
    p.device.collection_begin_us = CountOr(start.value(), "collectionTimeBegin", 0, 1.8e19);
  if (auto end = ReadJson(root + "/end_info.0"); end.ok()) p.device.collection_end_us = CountOr(end.value(), "collectionTimeEnd", 0, 1.8e19);
  if (info.contains("hostUid") && info["hostUid"].is_string()) p.device.host_uid = info["hostUid"].get<std::string>();
  if (info.contains("hostname") && info["hostname"].is_string()) p.device.host_name = info["hostname"].get<std::string>();
  const json& platform = info.contains("npukit") && info["npukit"].is_object() ? info["npukit"] : json::object();
  if (platform.contains("record_version") || !FileExists(prof_dir + "/device_0/info.json.0"))
    return Status::Error("EP0003", "--output", prof_dir, "the folder was written by npukit 0.3 or before, in npukit's own raw record layout",
                         "Collect it again with this msame: it writes msprof's layouts, which msprof's tools and this profparse read.");
  p.device.stars = prof::PlatformOf(p.device.platform).stars;
  p.device.aiv_cores = std::max<int>(1, static_cast<int>(CountOr(d, "aiv_num", 1, kMaxCores)));
  auto events = [&](const char* key, prof::CoreKind core) {
    auto configured = root_sample.is_object() && root_sample.contains(key) && root_sample[key].is_string()
                          ? prof::ParseEventList(root_sample[key].get<std::string>()) : std::nullopt;
    return configured ? *configured : prof::MetricEvents(p.device.aic_metrics, core);
  };
  const bool split = prof::PlatformOf(p.device.platform).split_cores;
  p.device.aic_events = events("ai_core_profiling_events", split ? prof::CoreKind::kAic : prof::CoreKind::kAny);
  if (split) p.device.aiv_events = events("aiv_profiling_events", prof::CoreKind::kAiv);
  NPU_RETURN_IF_ERROR(LoadHost(p));
  NPU_RETURN_IF_ERROR(LoadIterations(p));
  return p;
}

std::string_view RawProfile::KernelType(uint32_t stream, uint32_t task) const {
  if (const NodeInfo* n = Node(stream, task)) return prof::TaskTypeName(n->task_type);
  auto it = runtime_types.find({stream, task});
  return it == runtime_types.end() ? std::string_view("UNKNOWN") : std::string_view(it->second);
}

uint32_t RawProfile::IterationOf(uint64_t ticks) const {
  auto it = std::upper_bound(iterations.begin(), iterations.end(), ticks, [](uint64_t t, const IterationSpan& s) { return t < s.start; });
  if (it == iterations.begin()) return kNoIteration;
  --it;
  return ticks <= it->end ? it->index : kNoIteration;
}

Result<TaskStream> TaskStream::Open(const RawProfile& p, bool with_pmu) {
  TaskStream t;
  t.p_ = &p;
  const char* log_name = p.device.stars ? "stars_soc.data.0" : "hwts.data.0";
  NPU_ASSIGN_OR_RETURN(prof::SliceReader log, prof::SliceReader::Open(p.device_dir, log_name));
  t.incomplete_ = log.incomplete();
  if (log.empty())
    return Status::Error("EP0001", "--output", p.device_dir + "/" + log_name + ".slice_0", "no task records", "Re-run the collection with task_time on.");
  t.raw_bytes_ = log.total_bytes();
  t.log_reader_ = std::make_unique<prof::SliceReader>(std::move(log));
  t.log_ = std::make_unique<prof::RecordStream<Record64>>(*t.log_reader_);
  if (with_pmu) {
    NPU_ASSIGN_OR_RETURN(prof::SliceReader pmu, prof::SliceReader::Open(p.device_dir, p.device.stars ? "ffts_profile.data.0" : "aicore.data.0"));
    t.incomplete_.insert(t.incomplete_.end(), pmu.incomplete().begin(), pmu.incomplete().end());
    t.raw_bytes_ += pmu.total_bytes();
    t.pmu_reader_ = std::make_unique<prof::SliceReader>(std::move(pmu));
    t.pmus_ = std::make_unique<prof::RecordStream<Record128>>(*t.pmu_reader_);
  }
  return t;
}

template <typename T>
T Load(const std::byte* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

// One task-log record: a start or an end (false for the other kinds of log record).
bool TaskStream::Decode(const Record64& r, bool& start, DeviceTask& t) {
  if (!p_->device.stars) {
    prof::HwtsLogEntry e;
    if (!prof::DecodeHwtsLogRecord(std::span<const std::byte, prof::kHwtsLogRecordBytes>(r), e)) return false;
    start = e.log_type == 0;
    t.stream_id = e.stream_id, t.task_id = e.task_id, t.sqe = e.task_type;
    (start ? t.start_ticks : t.end_ticks) = e.syscnt;
    return true;
  }
  const auto a = Load<raw::AcsqLogRecord>(r.data());
  const uint16_t func = a.head & 0x3F;
  if (func != raw::kAcsqStart && func != raw::kAcsqEnd) return false;
  start = func == raw::kAcsqStart;
  t.stream_id = a.stream_id, t.task_id = a.task_id, t.sqe = static_cast<uint8_t>(a.head >> 10);
  (start ? t.start_ticks : t.end_ticks) = a.timestamp;
  return true;
}

// Reads one PMU record into the look-ahead: false at the end. A record of no known task is garbage. On STARS
// chips the AIC and the AIV part of a mix task come as two records, which fill one sample.
bool TaskStream::ReadPmu() {
  Record128 r;
  if (!pmus_->Next(r)) return false;
  PmuSample part;
  uint32_t key;
  bool aiv = false;
  if (!p_->device.stars) {
    const auto a = Load<raw::AicPmuRecord>(r.data());
    key = (a.stream_id & 0x7FF) << 16 | a.task_id;
    part.aic = true, part.aic_cycles = a.total_cycles;
    std::copy(std::begin(a.events), std::end(a.events), part.aic_events.begin());
  } else {
    const auto c = Load<raw::ContextPmuRecord>(r.data());
    if ((c.head & 0x3F) != raw::kContextPmuFunc) return ++garbage_, true;
    key = static_cast<uint32_t>(c.stream_id) << 16 | c.task_id;
    const uint16_t ffts = c.ffts >> 13, sub = c.sub_task & 0xFF;
    aiv = ffts == raw::kFftsPlus ? sub == raw::kSubTaskAiv : ffts != raw::kFftsNormal;
    (aiv ? part.aiv : part.aic) = true;
    (aiv ? part.aiv_cycles : part.aic_cycles) = c.total_cycles;
    std::copy(std::begin(c.events), std::end(c.events), (aiv ? part.aiv_events : part.aic_events).begin());
  }
  if (!p_->Node(key >> 16, key & 0xFFFF)) return ++garbage_, true;
  std::deque<PmuSample>& q = ahead_[key];
  if (!q.empty() && (aiv ? !q.back().aiv && q.back().aic : !q.back().aic && q.back().aiv)) {  // the other part of the last run
    PmuSample& s = q.back();
    (aiv ? s.aiv : s.aic) = true;
    (aiv ? s.aiv_cycles : s.aic_cycles) = aiv ? part.aiv_cycles : part.aic_cycles;
    (aiv ? s.aiv_events : s.aic_events) = aiv ? part.aiv_events : part.aic_events;
    return true;
  }
  q.push_back(part);
  ++ahead_count_;
  return true;
}

bool TaskStream::FindPmu(PmuSample& out, uint32_t key) {
  constexpr size_t kLookAhead = 4096;  // records: far past the tasks that end between a task's end and its PMU record
  auto it = ahead_.find(key);
  while ((it == ahead_.end() || it->second.empty()) && ahead_count_ < kLookAhead && ReadPmu()) it = ahead_.find(key);
  if (it == ahead_.end() || it->second.empty()) return false;
  // A mix task's second part may be the next record: read it before handing the sample out.
  if (p_->device.stars && !(it->second.front().aic && it->second.front().aiv) && it->second.size() == 1 && ahead_count_ < kLookAhead) {
    ReadPmu();
    it = ahead_.find(key);
  }
  out = it->second.front();
  it->second.pop_front();
  --ahead_count_;
  return true;
}

bool TaskStream::Next(DeviceTask& t, const PmuSample*& pmu) {
  pmu = nullptr;
  for (Record64 r; log_->Next(r);) {
    DeviceTask e;
    bool start = false;
    if (!Decode(r, start, e)) {
      ++garbage_;
      continue;
    }
    const uint32_t key = static_cast<uint32_t>(e.stream_id) << 16 | e.task_id;
    if (start) {
      open_[key] = e;  // a start with no end is replaced by the next start of the same task, as msprof pairs them
      continue;
    }
    auto it = open_.find(key);
    if (it == open_.end()) {
      ++unpaired_ends_;
      continue;
    }
    t = it->second;
    t.end_ticks = std::max(e.end_ticks, t.start_ticks);
    open_.erase(it);
    t.iteration = p_->IterationOf(t.start_ticks);
    const bool ai_core = t.sqe == raw::kSqeAiCore || t.sqe == raw::kSqeAiv;
    if (pmus_ && ai_core && p_->Node(t.stream_id, t.task_id)) {
      if (FindPmu(current_, key)) pmu = &current_;
      else ++unmatched_pmu_;
    }
    return true;
  }
  return false;
}

Status TaskStream::status() const {
  NPU_RETURN_IF_ERROR(log_->status());
  return pmus_ ? pmus_->status() : Status::Ok();
}

Result<std::vector<std::string>> FindProfDirs(const std::string& output, const std::string& param) {
  std::error_code ec;
  if (!fs::is_directory(output, ec))
    return Status::Error("E13001", param, output, "not a directory", "Point " + param + " at a PROF_* directory or the folder holding them.");
  fs::path path(output);
  std::string name = path.filename().string();
  if (name.empty()) name = path.parent_path().filename().string();
  if (name.rfind("PROF_", 0) == 0) return std::vector<std::string>{output};
  std::vector<std::string> dirs;
  for (const auto& e : fs::directory_iterator(output, ec))
    if (e.is_directory() && e.path().filename().string().rfind("PROF_", 0) == 0) dirs.push_back(e.path().string());
  std::sort(dirs.begin(), dirs.end());
  if (dirs.empty()) return Status::Error("E13001", param, output, "holds no PROF_* directory", "Collect a profile first: msame with acl.json's profiler switch on.");
  return dirs;
}

}  // namespace npu::profparse
