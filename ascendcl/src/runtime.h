// The state of npukit's AscendCL in a process: initialisation, the device and its contexts, streams and events,
// the memory book and the loaded models. One instance (Runtime::Get), guarded by one mutex; the current context
// is per thread, as CANN keeps it.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "acl/acl_base.h"
#include "memory.h"
#include "debug/dump_config.h"
#include "prof/collector.h"
#include "soc/soc_spec.h"

namespace npu::acl {

struct Context;
struct Stream {
  Context* context = nullptr;
  double clock_ns = 0;  // simulated device time of the work issued to it
};
struct Context {
  int32_t device = 0;
  bool is_default = false;  // the one aclrtSetDevice makes; aclrtResetDevice ends it
  std::unique_ptr<Stream> default_stream = std::make_unique<Stream>();
};
struct Event {
  std::optional<double> at_ns;  // the recording stream's clock when recorded
};

class Runtime {
 public:
  static Runtime& Get();
  std::mutex mu;  // every call holds it: the simulated device runs one thing at a time

  aclError Init(const char* config_path);
  aclError Finalize();
  // ACL_SUCCESS when aclInit ran (and aclFinalize did not), else ACL_ERROR_UNINITIALIZE recorded for `call`.
  aclError RequireInit(const char* call) const;
  // ... and a current context on this thread (aclrtSetDevice or aclrtSetCurrentContext ran): `ctx` is it.
  aclError RequireContext(const char* call, Context** ctx);

  aclError SetDevice(int32_t device);
  aclError ResetDevice(int32_t device);
  aclError CreateContext(int32_t device, void** out);  // out: the caller's handle slot, checked here
  aclError DestroyContext(void* handle);
  aclError SetCurrentContext(void* handle);
  Context* current() const;
  // The stream a handle names (null: the current context's default stream); an error for another handle.
  aclError FindStream(void* handle, const char* call, Stream** out);
  aclError CreateStream(void** out);
  aclError DestroyStream(void* handle);
  aclError CreateEvent(void** out);
  aclError DestroyEvent(void* handle);
  aclError FindEvent(void* handle, const char* call, Event** out);

  MemoryBook memory;
  // acl.json's dump section, applied to every model loaded after aclInit, as msame applies it; or aclmdlSetDump's.
  debug::DumpConfig dump;
  bool dump_from_init = false;  // aclInit's config had a dump section: aclmdlSetDump may not replace it
  bool dump_api = false;        // between aclmdlInitDump and aclmdlFinalizeDump

  // Profiling: the running collection (acl.json's profiler section from aclInit to aclFinalize, or aclprofStart to
  // aclprofStop), null when none runs. Every AscendCL call is recorded in it (ApiTrace).
  prof::Collector* collector() const { return collector_; }
  aclError StartCollection(const prof::ProfilerConfig& config, const char* call);
  aclError StopCollection(const char* call);
  std::string prof_output;  // aclprofInit's path
  // The simulated device's SoC: the chip the last loaded model was converted for (aclrtGetSocName).
  std::string soc_name;
  // The SoC models are simulated on instead of their own (tool_hooks.h's SimulateOn); null: their own.
  std::shared_ptr<const SocSpec> simulated_soc;

 private:
  bool initialized_ = false;
  prof::Collector* collector_ = nullptr;
  // Every collection of the process, kept until aclFinalize: stopped ones still own the observers of the sessions
  // that were loaded while they ran.
  std::vector<std::unique_ptr<prof::Collector>> collections_;
  int set_device_count_ = 0;  // aclrtSetDevice calls not yet reset
  std::map<Context*, std::unique_ptr<Context>> contexts_;
  std::map<Stream*, std::unique_ptr<Stream>> streams_;
  std::map<Event*, std::unique_ptr<Event>> events_;
};

// Records the AscendCL call it lives through in the running collection (declare it after the call takes the
// runtime's lock: it records before the lock is released).
class ApiTrace {
 public:
  explicit ApiTrace(const char* name);
  ~ApiTrace();
  ApiTrace(const ApiTrace&) = delete;
  ApiTrace& operator=(const ApiTrace&) = delete;

 private:
  const char* name_;
  uint64_t begin_ns_;
};

// The simulated NPU has one device.
constexpr int32_t kDeviceCount = 1;

}  // namespace npu::acl
