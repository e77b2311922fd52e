// The C interface of acl_prof.h over Runtime's collections.
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "errors.h"
#include "handles.h"
#include "models.h"
#include "runtime.h"
#include "subscribe.h"

using npu::acl::Fail;
using npu::acl::Runtime;

struct aclprofConfig {
  npu::prof::ProfilerConfig config;
};
struct aclprofSubscribeConfig {
  int fd;
};

namespace {

std::unique_lock<std::mutex> Lock() { return std::unique_lock(Runtime::Get().mu); }

npu::acl::Handles<aclprofConfig>& Configs() {
  static auto* h = new npu::acl::Handles<aclprofConfig>();
  return *h;
}

// aclprofAicoreMetrics as acl.json's aic_metrics names them (the groups npukit's collection has).
const char* MetricsName(aclprofAicoreMetrics m) {
  switch (m) {
    case ACL_AICORE_ARITHMETIC_UTILIZATION: return "ArithmeticUtilization";
    case ACL_AICORE_PIPE_UTILIZATION: return "PipeUtilization";
    case ACL_AICORE_MEMORY_BANDWIDTH: return "Memory";
    case ACL_AICORE_NONE: return "PipeUtilization";  // no metrics asked for: the PMU records still hold the pipes
    default: return nullptr;
  }
}

npu::acl::Handles<aclprofSubscribeConfig>& SubscribeConfigs() {
  static auto* h = new npu::acl::Handles<aclprofSubscribeConfig>();
  return *h;
}

// Record `index` of a reader's buffer, or nullopt with the failure recorded for `call`.
std::optional<npu::acl::OpRecord> Record(const void* info, size_t len, uint32_t index, const char* call) {
  std::string why;
  auto r = npu::acl::RecordAt(info, len, index, &why);
  if (!r) Fail(ACL_ERROR_INVALID_PARAM, call, why);
  return r;
}

// The bytes (with the NUL) of the string field `field` picks from record `index`.
template <class Field>
aclError FieldLength(const void* info, size_t len, uint32_t index, size_t* out, const char* call, Field field) {
  auto r = Record(info, len, index, call);
  if (!r) return ACL_ERROR_INVALID_PARAM;
  if (!out) return Fail(ACL_ERROR_INVALID_PARAM, call, "the length pointer is null");
  *out = std::strlen(field(*r)) + 1;
  return ACL_SUCCESS;
}

// Copies a record's string field into the caller's buffer of `cap` bytes (the NUL included).
aclError CopyField(const char* field, char* out, size_t cap, const char* call, const char* what) {
  const size_t need = std::strlen(field) + 1;
  if (!out || cap < need) return Fail(ACL_ERROR_INVALID_PARAM, call, std::string(what) + " buffer of " + std::to_string(cap) + " bytes is null or shorter than the " + std::to_string(need) + " needed (aclprofGetOp" + what + "Len)");
  std::memcpy(out, field, need);
  return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError aclprofInit(const char* profilerResultPath, size_t length) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofInit")) return e;
  if (!profilerResultPath || length == 0) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofInit", "profilerResultPath is null or empty");
  Runtime::Get().prof_output.assign(profilerResultPath, ::strnlen(profilerResultPath, length));
  return ACL_SUCCESS;
}

aclError aclprofFinalize(void) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofFinalize")) return e;
  if (Runtime::Get().collector()) return Runtime::Get().StopCollection("aclprofFinalize");
  return ACL_SUCCESS;
}

aclprofConfig* aclprofCreateConfig(uint32_t* deviceIdList, uint32_t deviceNums, aclprofAicoreMetrics aicoreMetrics, aclprofAicoreEvents* aicoreEvents,
                                   uint64_t dataTypeConfig) {
  constexpr const char* kCall = "aclprofCreateConfig";
  if (!deviceIdList || deviceNums == 0) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "deviceIdList is null or deviceNums 0"), nullptr;
  for (uint32_t i = 0; i < deviceNums; ++i)
    if (deviceIdList[i] != 0) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "device " + std::to_string(deviceIdList[i]) + ": the simulated NPU has device 0 only"), nullptr;
  const char* metrics = MetricsName(aicoreMetrics);
  if (!metrics) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "aicoreMetrics " + std::to_string(static_cast<int>(aicoreMetrics)) + " is not a group npukit collects (arithmetic, pipe, memory)"), nullptr;
  if (aicoreEvents) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "aicoreEvents must be NULL"), nullptr;
  npu::prof::ProfilerConfig c;
  c.enabled = true;
  c.aic_metrics = metrics;
  c.task_time = (dataTypeConfig & ACL_PROF_TASK_TIME) != 0;
  c.aicpu = (dataTypeConfig & ACL_PROF_AICPU) != 0;
  c.acl_api = (dataTypeConfig & ACL_PROF_ACL_API) != 0;
  return Configs().Make(aclprofConfig{std::move(c)});
}

aclError aclprofDestroyConfig(const aclprofConfig* profilerConfig) {
  if (!Configs().Destroy(profilerConfig)) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroyConfig", "profilerConfig is not a live config (aclprofCreateConfig)");
  return ACL_SUCCESS;
}

aclError aclprofStart(const aclprofConfig* profilerConfig) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofStart")) return e;
  if (!Configs().Live(profilerConfig)) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofStart", "profilerConfig is not a live config (aclprofCreateConfig)");
  if (Runtime::Get().prof_output.empty()) return Fail(ACL_ERROR_PROF_NOT_RUN, "aclprofStart", "call aclprofInit with the output path first");
  npu::prof::ProfilerConfig c = profilerConfig->config;
  c.output = Runtime::Get().prof_output;
  return Runtime::Get().StartCollection(c, "aclprofStart");
}

aclError aclprofStop(const aclprofConfig* profilerConfig) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofStop")) return e;
  if (!Configs().Live(profilerConfig)) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofStop", "profilerConfig is not a live config (aclprofCreateConfig)");
  return Runtime::Get().StopCollection("aclprofStop");
}

aclprofSubscribeConfig* aclprofCreateSubscribeConfig(int8_t timeInfoSwitch, aclprofAicoreMetrics aicoreMetrics, void* fd) {
  constexpr const char* kCall = "aclprofCreateSubscribeConfig";
  if (timeInfoSwitch != 0 && timeInfoSwitch != 1) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "timeInfoSwitch " + std::to_string(timeInfoSwitch) + " is not 0 or 1"), nullptr;
  if (!MetricsName(aicoreMetrics)) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "aicoreMetrics " + std::to_string(static_cast<int>(aicoreMetrics)) + " is not a group npukit collects"), nullptr;
  if (!fd || *static_cast<const int*>(fd) < 0) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "fd must point at the write end of a pipe (an int >= 0)"), nullptr;
  return SubscribeConfigs().Make(aclprofSubscribeConfig{*static_cast<const int*>(fd)});
}

aclError aclprofDestroySubscribeConfig(const aclprofSubscribeConfig* profSubscribeConfig) {
  if (!SubscribeConfigs().Destroy(profSubscribeConfig))
    return Fail(ACL_ERROR_INVALID_PARAM, "aclprofDestroySubscribeConfig", "profSubscribeConfig is not a live config (aclprofCreateSubscribeConfig)");
  return ACL_SUCCESS;
}

aclError aclprofModelSubscribe(uint32_t modelId, const aclprofSubscribeConfig* profSubscribeConfig) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofModelSubscribe")) return e;
  if (!SubscribeConfigs().Live(profSubscribeConfig))
    return Fail(ACL_ERROR_INVALID_PARAM, "aclprofModelSubscribe", "profSubscribeConfig is not a live config (aclprofCreateSubscribeConfig)");
  return npu::acl::Models::Get().Subscribe(modelId, profSubscribeConfig->fd, "aclprofModelSubscribe");
}

aclError aclprofModelUnSubscribe(uint32_t modelId) {
  auto l = Lock();
  if (aclError e = Runtime::Get().RequireInit("aclprofModelUnSubscribe")) return e;
  return npu::acl::Models::Get().Unsubscribe(modelId, "aclprofModelUnSubscribe");
}

aclError aclprofGetOpDescSize(size_t* opDescSize) {
  if (!opDescSize) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofGetOpDescSize", "opDescSize is null");
  *opDescSize = sizeof(npu::acl::OpRecord);
  return ACL_SUCCESS;
}

aclError aclprofGetOpNum(const void* opInfo, size_t opInfoLen, uint32_t* opNumber) {
  if (!opNumber) return Fail(ACL_ERROR_INVALID_PARAM, "aclprofGetOpNum", "opNumber is null");
  if (!Record(opInfo, opInfoLen, 0, "aclprofGetOpNum")) return ACL_ERROR_INVALID_PARAM;
  *opNumber = static_cast<uint32_t>(opInfoLen / sizeof(npu::acl::OpRecord));
  return ACL_SUCCESS;
}

aclError aclprofGetOpTypeLen(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opTypeLen) {
  return FieldLength(opInfo, opInfoLen, index, opTypeLen, "aclprofGetOpTypeLen", [](const npu::acl::OpRecord& r) { return r.type; });
}

aclError aclprofGetOpType(const void* opInfo, size_t opInfoLen, uint32_t index, char* opType, size_t opTypeLen) {
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetOpType");
  return r ? CopyField(r->type, opType, opTypeLen, "aclprofGetOpType", "Type") : ACL_ERROR_INVALID_PARAM;
}

aclError aclprofGetOpNameLen(const void* opInfo, size_t opInfoLen, uint32_t index, size_t* opNameLen) {
  return FieldLength(opInfo, opInfoLen, index, opNameLen, "aclprofGetOpNameLen", [](const npu::acl::OpRecord& r) { return r.name; });
}

aclError aclprofGetOpName(const void* opInfo, size_t opInfoLen, uint32_t index, char* opName, size_t opNameLen) {
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetOpName");
  return r ? CopyField(r->name, opName, opNameLen, "aclprofGetOpName", "Name") : ACL_ERROR_INVALID_PARAM;
}

// The time getters return 0 for a bad buffer or index (the reason is in aclGetRecentErrMsg), as CANN's do.
uint64_t aclprofGetOpStart(const void* opInfo, size_t opInfoLen, uint32_t index) {
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetOpStart");
  return r ? r->start_ns : 0;
}

uint64_t aclprofGetOpEnd(const void* opInfo, size_t opInfoLen, uint32_t index) {
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetOpEnd");
  return r ? r->end_ns : 0;
}

uint64_t aclprofGetOpDuration(const void* opInfo, size_t opInfoLen, uint32_t index) {
  constexpr uint64_t kNsPerUs = 1000;
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetOpDuration");
  return r ? (r->end_ns - r->start_ns) / kNsPerUs : 0;
}

size_t aclprofGetModelId(const void* opInfo, size_t opInfoLen, uint32_t index) {
  auto r = Record(opInfo, opInfoLen, index, "aclprofGetModelId");
  return r ? r->model_id : 0;
}

}  // extern "C"
