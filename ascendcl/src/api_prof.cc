// The C interface of acl_prof.h over Runtime's collections.
#include <cstring>
#include <string>

#include "acl/acl.h"
#include "errors.h"
#include "handles.h"
#include "runtime.h"

using npu::acl::Fail;
using npu::acl::Runtime;

struct aclprofConfig {
  npu::prof::ProfilerConfig config;
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

}  // extern "C"
