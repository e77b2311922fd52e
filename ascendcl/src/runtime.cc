#include "runtime.h"

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "base/file_io.h"
#include "base/json.h"
#include "base/log.h"
#include "errors.h"
#include "models.h"

namespace npu::acl {
namespace {
thread_local Context* current_context = nullptr;

// The process's command line, which a collection records as its app (sample.json), as msprof records the
// program it profiled.
std::string CommandLine() {
  auto text = ReadFileToString("/proc/self/cmdline");
  if (!text.ok() || text.value().empty()) return "libascendcl";
  std::string line = text.value();
  if (line.back() == '\0') line.pop_back();
  std::replace(line.begin(), line.end(), '\0', ' ');
  return line;
}
}  // namespace

Runtime& Runtime::Get() {
  static Runtime* runtime = new Runtime();  // never destroyed: programs call aclFinalize from atexit handlers too
  return *runtime;
}

aclError Runtime::Init(const char* config_path) {
  if (initialized_) return Fail(ACL_ERROR_REPEAT_INITIALIZE, "aclInit", "AscendCL is initialized already; call aclInit once per process");
  prof::ProfilerConfig profiler_config;
  debug::DumpConfig dump_config;
  if (config_path && *config_path) {
    if (!FileExists(config_path)) return Fail(ACL_ERROR_INVALID_FILE, "aclInit", std::string("configPath ") + config_path + ": no such file");
    auto text = ReadFileToString(config_path);
    if (!text.ok()) return Fail(ACL_ERROR_INVALID_FILE, "aclInit", text.status());
    const nlohmann::json j = ParseJson(text.value());
    const bool malformed = j.is_discarded() || !j.is_object();
    if (!text.value().empty()) {  // an empty file is an empty configuration, as CANN reads it
      auto d = debug::ParseDumpConfig(config_path);  // its error says where the JSON breaks
      if (!d.ok()) return Fail(malformed ? ACL_ERROR_PARSE_FILE : ACL_ERROR_INVALID_DUMP_CONFIG, "aclInit", d.status());
      if (malformed)
        return Fail(ACL_ERROR_PARSE_FILE, "aclInit", std::string("configPath ") + config_path + " is not a JSON object; give {} or the dump and profiler sections");
      for (const std::string& w : d.value().warnings) log::Write(log::Level::kWarning, "ACL", std::string("aclInit: ") + config_path + ": " + w);
      dump_config = std::move(d).value();
      auto p = prof::ParseProfilerConfig(config_path);
      if (!p.ok()) return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, "aclInit", p.status());
      profiler_config = std::move(p).value();
      for (const std::string& w : profiler_config.warnings) log::Write(log::Level::kWarning, "ACL", std::string("aclInit: ") + config_path + ": " + w);
    }
  }
  if (auto env = prof::ProfilerConfigFromEnv(); !env.ok()) {
    return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, "aclInit", env.status());
  } else if (env.value().enabled && !profiler_config.enabled) {
    profiler_config = std::move(env).value();
    for (const std::string& w : profiler_config.warnings) log::Write(log::Level::kWarning, "ACL", "aclInit: PROFILING_OPTIONS: " + w);
  }
  dump = std::move(dump_config);
  dump_from_init = dump.dump_data || dump.dump_debug || dump.exception;
  dump_api = false;
  initialized_ = true;
  if (profiler_config.enabled)
    if (aclError e = StartCollection(profiler_config, "aclInit")) {
      initialized_ = false;
      return e;
    }
  return ACL_SUCCESS;
}

aclError Runtime::Finalize() {
  if (!initialized_) return Fail(ACL_ERROR_REPEAT_FINALIZE, "aclFinalize", "AscendCL is not initialized (aclFinalize ran already, or aclInit never did)");
  Models::Get().UnloadAll();
  aclError e = collector_ ? StopCollection("aclFinalize") : ACL_SUCCESS;
  collections_.clear();
  streams_.clear();
  events_.clear();
  contexts_.clear();
  memory.Clear();
  set_device_count_ = 0;
  current_context = nullptr;
  initialized_ = false;
  return e;
}

aclError Runtime::StartCollection(const prof::ProfilerConfig& config, const char* call) {
  if (collector_) return Fail(ACL_ERROR_PROF_ALREADY_RUN, call, "profiling runs already (acl.json's profiler section or aclprofStart)");
  auto c = prof::Collector::Start(config, CommandLine());
  if (!c.ok()) return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, call, c.status());
  collections_.push_back(std::move(c).value());
  collector_ = collections_.back().get();
  return Models::Get().JoinCollection(*collector_, call);
}

aclError Runtime::StopCollection(const char* call) {
  if (!collector_) return Fail(ACL_ERROR_PROF_NOT_RUN, call, "no profiling runs (aclprofStart)");
  prof::Collector* c = std::exchange(collector_, nullptr);
  if (Status s = c->Finish(); !s.ok()) return Fail(ACL_ERROR_WRITE_FILE, call, s);
  return ACL_SUCCESS;
}

ApiTrace::ApiTrace(const char* name) : name_(name), begin_ns_(0) {
  if (Runtime::Get().collector())
    begin_ns_ = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
}

ApiTrace::~ApiTrace() {
  prof::Collector* c = Runtime::Get().collector();
  if (!c || !begin_ns_) return;
  const uint64_t end = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count());
  c->RecordApi(name_, begin_ns_, end);
}

aclError Runtime::RequireInit(const char* call) const {
  return initialized_ ? ACL_SUCCESS : Fail(ACL_ERROR_UNINITIALIZE, call, "AscendCL is not initialized; call aclInit first");
}

aclError Runtime::RequireContext(const char* call, Context** ctx) {
  if (aclError e = RequireInit(call)) return e;
  if (!current_context || !contexts_.count(current_context))
    return Fail(ACL_ERROR_RT_CONTEXT_NULL, call, "this thread has no current context; call aclrtSetDevice or aclrtSetCurrentContext first");
  if (ctx) *ctx = current_context;
  return ACL_SUCCESS;
}

aclError Runtime::SetDevice(int32_t device) {
  if (aclError e = RequireInit("aclrtSetDevice")) return e;
  if (device < 0 || device >= kDeviceCount)
    return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtSetDevice", "deviceId " + std::to_string(device) + ": the simulated NPU has device 0 only");
  Context* def = nullptr;
  for (auto& [p, c] : contexts_)
    if (c->is_default && c->device == device) def = p;
  if (!def) {
    auto c = std::make_unique<Context>();
    c->device = device;
    c->is_default = true;
    def = c.get();
    contexts_.emplace(def, std::move(c));
  }
  ++set_device_count_;
  current_context = def;
  return ACL_SUCCESS;
}

aclError Runtime::ResetDevice(int32_t device) {
  if (aclError e = RequireInit("aclrtResetDevice")) return e;
  if (device < 0 || device >= kDeviceCount)
    return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice", "deviceId " + std::to_string(device) + ": the simulated NPU has device 0 only");
  if (set_device_count_ == 0) return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtResetDevice", "device 0 was not set (aclrtSetDevice)");
  if (--set_device_count_ > 0) return ACL_SUCCESS;
  // The last reset releases the device: its contexts, streams and events. Memory stays until aclFinalize.
  for (auto it = streams_.begin(); it != streams_.end();) it = it->second->context && it->second->context->device == device ? streams_.erase(it) : std::next(it);
  for (auto it = contexts_.begin(); it != contexts_.end();) it = it->second->device == device ? contexts_.erase(it) : std::next(it);
  current_context = nullptr;
  return ACL_SUCCESS;
}

aclError Runtime::CreateContext(int32_t device, void** out) {
  if (aclError e = RequireInit("aclrtCreateContext")) return e;
  if (!out) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateContext", "context is null");
  if (device < 0 || device >= kDeviceCount)
    return Fail(ACL_ERROR_RT_INVALID_DEVICEID, "aclrtCreateContext", "deviceId " + std::to_string(device) + ": the simulated NPU has device 0 only");
  auto c = std::make_unique<Context>();
  c->device = device;
  *out = c.get();
  current_context = c.get();
  contexts_.emplace(c.get(), std::move(c));  // as CANN: the new context is the thread's current one
  return ACL_SUCCESS;
}

aclError Runtime::DestroyContext(void* handle) {
  if (aclError e = RequireInit("aclrtDestroyContext")) return e;
  auto it = contexts_.find(static_cast<Context*>(handle));
  if (it == contexts_.end() || it->second->is_default)
    return Fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyContext", "context " + PointerText(handle) + " is not one aclrtCreateContext made (or it was destroyed)");
  for (auto s = streams_.begin(); s != streams_.end();) s = s->second->context == it->first ? streams_.erase(s) : std::next(s);
  if (current_context == it->first) current_context = nullptr;
  contexts_.erase(it);
  return ACL_SUCCESS;
}

aclError Runtime::SetCurrentContext(void* handle) {
  if (aclError e = RequireInit("aclrtSetCurrentContext")) return e;
  auto it = contexts_.find(static_cast<Context*>(handle));
  if (it == contexts_.end()) return Fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtSetCurrentContext", "context " + PointerText(handle) + " is not a live context");
  current_context = it->first;
  return ACL_SUCCESS;
}

Context* Runtime::current() const { return current_context; }

aclError Runtime::FindStream(void* handle, const char* call, Stream** out) {
  Context* ctx = nullptr;
  if (aclError e = RequireContext(call, &ctx)) return e;
  if (!handle) {
    *out = ctx->default_stream.get();
    return ACL_SUCCESS;
  }
  auto it = streams_.find(static_cast<Stream*>(handle));
  if (it == streams_.end()) return Fail(ACL_ERROR_RT_PARAM_INVALID, call, "stream " + PointerText(handle) + " is not a live stream (aclrtCreateStream)");
  if (it->second->context != ctx)
    return Fail(ACL_ERROR_RT_STREAM_CONTEXT, call, "stream " + PointerText(handle) + " belongs to another context than the thread's current one");
  *out = it->first;
  return ACL_SUCCESS;
}

aclError Runtime::CreateStream(void** out) {
  Context* ctx = nullptr;
  if (aclError e = RequireContext("aclrtCreateStream", &ctx)) return e;
  if (!out) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream", "stream is null");
  auto s = std::make_unique<Stream>();
  s->context = ctx;
  *out = s.get();
  streams_.emplace(s.get(), std::move(s));
  return ACL_SUCCESS;
}

aclError Runtime::DestroyStream(void* handle) {
  if (aclError e = RequireInit("aclrtDestroyStream")) return e;
  if (!streams_.erase(static_cast<Stream*>(handle)))
    return Fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyStream", "stream " + PointerText(handle) + " is not a live stream (aclrtCreateStream)");
  return ACL_SUCCESS;
}

aclError Runtime::CreateEvent(void** out) {
  if (aclError e = RequireContext("aclrtCreateEvent", nullptr)) return e;
  if (!out) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent", "event is null");
  auto ev = std::make_unique<Event>();
  *out = ev.get();
  events_.emplace(ev.get(), std::move(ev));
  return ACL_SUCCESS;
}

aclError Runtime::DestroyEvent(void* handle) {
  if (aclError e = RequireInit("aclrtDestroyEvent")) return e;
  if (!events_.erase(static_cast<Event*>(handle)))
    return Fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtDestroyEvent", "event " + PointerText(handle) + " is not a live event (aclrtCreateEvent)");
  return ACL_SUCCESS;
}

aclError Runtime::FindEvent(void* handle, const char* call, Event** out) {
  if (aclError e = RequireInit(call)) return e;
  auto it = events_.find(static_cast<Event*>(handle));
  if (it == events_.end()) return Fail(ACL_ERROR_RT_PARAM_INVALID, call, "event " + PointerText(handle) + " is not a live event (aclrtCreateEvent)");
  *out = it->first;
  return ACL_SUCCESS;
}

}  // namespace npu::acl
