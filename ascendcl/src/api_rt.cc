// The C interface of acl_rt.h: devices, contexts, streams, events and memory over Runtime.
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "acl/acl.h"
#include "errors.h"
#include "runtime.h"

using npu::acl::Context;
using npu::acl::Event;
using npu::acl::Fail;
using npu::acl::MemKind;
using npu::acl::Runtime;
using npu::acl::Stream;

namespace {

Runtime& R() { return Runtime::Get(); }
std::unique_lock<std::mutex> Lock() { return std::unique_lock(R().mu); }

// Where a copy of `kind` may read and write: device memory on the device side, anything else on the host side.
aclError CheckCopy(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind, const char* call) {
  if (!dst || !src) return Fail(ACL_ERROR_INVALID_PARAM, call, "dst or src is null");
  if (count > dest_max)
    return Fail(ACL_ERROR_INVALID_PARAM, call, "count " + std::to_string(count) + " exceeds destMax " + std::to_string(dest_max) + "; copy at most destMax bytes");
  const npu::acl::MemoryBook& m = R().memory;
  if (kind == ACL_MEMCPY_DEFAULT) {  // the runtime tells the sides apart by address
    const bool d = m.Find(dst, 0).found && m.Find(dst, 0).kind == MemKind::kDevice;
    const bool s = m.Find(src, 0).found && m.Find(src, 0).kind == MemKind::kDevice;
    kind = d ? (s ? ACL_MEMCPY_DEVICE_TO_DEVICE : ACL_MEMCPY_HOST_TO_DEVICE) : (s ? ACL_MEMCPY_DEVICE_TO_HOST : ACL_MEMCPY_HOST_TO_HOST);
  }
  const bool dst_device = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  const bool src_device = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
  if (kind < ACL_MEMCPY_HOST_TO_HOST || kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
    return Fail(ACL_ERROR_INVALID_PARAM, call, "kind " + std::to_string(static_cast<int>(kind)) + " is not an aclrtMemcpyKind");
  if (aclError e = dst_device ? m.RequireDevice(dst, count, call, "dst") : m.RequireHost(dst, count, call, "dst")) return e;
  if (aclError e = src_device ? m.RequireDevice(src, count, call, "src") : m.RequireHost(src, count, call, "src")) return e;
  // Device memory is checked to hold dest_max too: a destMax past the allocation is the program's bug.
  if (dst_device && dest_max > count)
    if (aclError e = m.RequireDevice(dst, dest_max, call, "dst (destMax)")) return e;
  return ACL_SUCCESS;
}

aclError Copy(void* dst, size_t dest_max, const void* src, size_t count, aclrtMemcpyKind kind, const char* call) {
  if (aclError e = R().RequireContext(call, nullptr)) return e;
  if (aclError e = CheckCopy(dst, dest_max, src, count, kind, call)) return e;
  std::memmove(dst, src, count);
  return ACL_SUCCESS;
}

aclError Set(void* dev, size_t max_count, int32_t value, size_t count, const char* call) {
  if (aclError e = R().RequireContext(call, nullptr)) return e;
  if (count > max_count) return Fail(ACL_ERROR_INVALID_PARAM, call, "count " + std::to_string(count) + " exceeds maxCount " + std::to_string(max_count));
  if (aclError e = R().memory.RequireDevice(dev, count, call, "devPtr")) return e;
  std::memset(dev, value, count);
  return ACL_SUCCESS;
}

}  // namespace

extern "C" {

aclError aclrtSetDevice(int32_t deviceId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtSetDevice");
  return R().SetDevice(deviceId);
}

aclError aclrtResetDevice(int32_t deviceId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtResetDevice");
  return R().ResetDevice(deviceId);
}

aclError aclrtGetDevice(int32_t* deviceId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtGetDevice");
  Context* c = nullptr;
  if (aclError e = R().RequireContext("aclrtGetDevice", &c)) return e;
  if (!deviceId) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDevice", "deviceId is null");
  *deviceId = c->device;
  return ACL_SUCCESS;
}

aclError aclrtGetDeviceCount(uint32_t* count) {
  if (!count) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetDeviceCount", "count is null");
  *count = npu::acl::kDeviceCount;
  return ACL_SUCCESS;
}

// The program runs on the host and the device is across PCIe, as on an Atlas 300 card: ACL_HOST.
aclError aclrtGetRunMode(aclrtRunMode* runMode) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtGetRunMode");
  if (aclError e = R().RequireInit("aclrtGetRunMode")) return e;
  if (!runMode) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetRunMode", "runMode is null");
  *runMode = ACL_HOST;
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeDevice(void) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtSynchronizeDevice");
  return R().RequireContext("aclrtSynchronizeDevice", nullptr);  // work runs as it is issued: nothing is pending
}

// The chip the simulated device plays: the SoC of the last model loaded (null before any, as CANN's is when it
// cannot tell).
const char* aclrtGetSocName(void) {
  auto l = Lock();
  return R().soc_name.empty() ? nullptr : R().soc_name.c_str();
}

aclError aclrtCreateContext(aclrtContext* context, int32_t deviceId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtCreateContext");
  return R().CreateContext(deviceId, context);
}

aclError aclrtDestroyContext(aclrtContext context) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtDestroyContext");
  return R().DestroyContext(context);
}

aclError aclrtSetCurrentContext(aclrtContext context) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtSetCurrentContext");
  return R().SetCurrentContext(context);
}

aclError aclrtGetCurrentContext(aclrtContext* context) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtGetCurrentContext");
  Context* c = nullptr;
  if (aclError e = R().RequireContext("aclrtGetCurrentContext", &c)) return e;
  if (!context) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetCurrentContext", "context is null");
  *context = c;
  return ACL_SUCCESS;
}

aclError aclrtCreateStream(aclrtStream* stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtCreateStream");
  return R().CreateStream(stream);
}

aclError aclrtDestroyStream(aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtDestroyStream");
  return R().DestroyStream(stream);
}

// Work runs as it is issued (a simulated device has no queue to drain): a live stream is always complete.
aclError aclrtSynchronizeStream(aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtSynchronizeStream");
  Stream* s = nullptr;
  return R().FindStream(stream, "aclrtSynchronizeStream", &s);
}

aclError aclrtCreateEvent(aclrtEvent* event) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtCreateEvent");
  return R().CreateEvent(event);
}

aclError aclrtDestroyEvent(aclrtEvent event) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtDestroyEvent");
  return R().DestroyEvent(event);
}

aclError aclrtRecordEvent(aclrtEvent event, aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtRecordEvent");
  Event* ev = nullptr;
  Stream* s = nullptr;
  if (aclError e = R().FindEvent(event, "aclrtRecordEvent", &ev)) return e;
  if (aclError e = R().FindStream(stream, "aclrtRecordEvent", &s)) return e;
  ev->at_ns = s->clock_ns;
  return ACL_SUCCESS;
}

aclError aclrtResetEvent(aclrtEvent event, aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtResetEvent");
  Event* ev = nullptr;
  Stream* s = nullptr;
  if (aclError e = R().FindEvent(event, "aclrtResetEvent", &ev)) return e;
  if (aclError e = R().FindStream(stream, "aclrtResetEvent", &s)) return e;
  ev->at_ns.reset();
  return ACL_SUCCESS;
}

aclError aclrtQueryEventStatus(aclrtEvent event, aclrtEventRecordedStatus* status) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtQueryEventStatus");
  Event* ev = nullptr;
  if (aclError e = R().FindEvent(event, "aclrtQueryEventStatus", &ev)) return e;
  if (!status) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus", "status is null");
  *status = ev->at_ns ? ACL_EVENT_RECORDED_STATUS_COMPLETE : ACL_EVENT_RECORDED_STATUS_NOT_READY;
  return ACL_SUCCESS;
}

// The waiting stream's clock catches up with the event's: later work on it starts no earlier.
aclError aclrtStreamWaitEvent(aclrtStream stream, aclrtEvent event) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtStreamWaitEvent");
  Event* ev = nullptr;
  Stream* s = nullptr;
  if (aclError e = R().FindEvent(event, "aclrtStreamWaitEvent", &ev)) return e;
  if (aclError e = R().FindStream(stream, "aclrtStreamWaitEvent", &s)) return e;
  if (ev->at_ns) s->clock_ns = std::max(s->clock_ns, *ev->at_ns);
  return ACL_SUCCESS;
}

aclError aclrtSynchronizeEvent(aclrtEvent event) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtSynchronizeEvent");
  Event* ev = nullptr;
  return R().FindEvent(event, "aclrtSynchronizeEvent", &ev);
}

// Milliseconds of simulated device time between two recorded events.
aclError aclrtEventElapsedTime(float* ms, aclrtEvent startEvent, aclrtEvent endEvent) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtEventElapsedTime");
  Event *a = nullptr, *b = nullptr;
  if (aclError e = R().FindEvent(startEvent, "aclrtEventElapsedTime", &a)) return e;
  if (aclError e = R().FindEvent(endEvent, "aclrtEventElapsedTime", &b)) return e;
  if (!ms) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime", "ms is null");
  if (!a->at_ns || !b->at_ns) return Fail(ACL_ERROR_RT_PARAM_INVALID, "aclrtEventElapsedTime", "an event was not recorded (aclrtRecordEvent)");
  *ms = static_cast<float>((*b->at_ns - *a->at_ns) / 1e6);
  return ACL_SUCCESS;
}

aclError aclrtMalloc(void** devPtr, size_t size, aclrtMemMallocPolicy policy) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMalloc");
  if (aclError e = R().RequireContext("aclrtMalloc", nullptr)) return e;
  if (policy < ACL_MEM_MALLOC_HUGE_FIRST || policy > ACL_MEM_MALLOC_NORMAL_ONLY_P2P)
    return Fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc", "policy " + std::to_string(static_cast<int>(policy)) + " is not an aclrtMemMallocPolicy");
  return R().memory.Allocate(MemKind::kDevice, size, devPtr, "aclrtMalloc");
}

aclError aclrtFree(void* devPtr) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtFree");
  if (aclError e = R().RequireInit("aclrtFree")) return e;
  return R().memory.Release(MemKind::kDevice, devPtr, "aclrtFree");
}

aclError aclrtMallocHost(void** hostPtr, size_t size) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMallocHost");
  if (aclError e = R().RequireContext("aclrtMallocHost", nullptr)) return e;
  return R().memory.Allocate(MemKind::kHost, size, hostPtr, "aclrtMallocHost");
}

aclError aclrtFreeHost(void* hostPtr) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtFreeHost");
  if (aclError e = R().RequireInit("aclrtFreeHost")) return e;
  return R().memory.Release(MemKind::kHost, hostPtr, "aclrtFreeHost");
}

aclError aclrtMemcpy(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMemcpy");
  return Copy(dst, destMax, src, count, kind, "aclrtMemcpy");
}

aclError aclrtMemcpyAsync(void* dst, size_t destMax, const void* src, size_t count, aclrtMemcpyKind kind, aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMemcpyAsync");
  Stream* s = nullptr;
  if (aclError e = R().FindStream(stream, "aclrtMemcpyAsync", &s)) return e;
  return Copy(dst, destMax, src, count, kind, "aclrtMemcpyAsync");
}

aclError aclrtMemset(void* devPtr, size_t maxCount, int32_t value, size_t count) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMemset");
  return Set(devPtr, maxCount, value, count, "aclrtMemset");
}

aclError aclrtMemsetAsync(void* devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtMemsetAsync");
  Stream* s = nullptr;
  if (aclError e = R().FindStream(stream, "aclrtMemsetAsync", &s)) return e;
  return Set(devPtr, maxCount, value, count, "aclrtMemsetAsync");
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t* free, size_t* total) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclrtGetMemInfo");
  if (aclError e = R().RequireContext("aclrtGetMemInfo", nullptr)) return e;
  if (!free || !total) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetMemInfo", "free or total is null");
  // The simulated device's memory is the host's: its physical and available pages.
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  *total = static_cast<size_t>(::sysconf(_SC_PHYS_PAGES)) * page;
  *free = static_cast<size_t>(::sysconf(_SC_AVPHYS_PAGES)) * page;
  return ACL_SUCCESS;
}

}  // extern "C"
