#include "memory.h"

#include <cstdio>
#include <new>

#include "errors.h"

namespace npu::acl {
namespace {

// The runtime aligns device allocations generously; 64 bytes covers every dtype and a cache line.
constexpr size_t kAlignment = 64;

const char* KindName(MemKind k) { return k == MemKind::kDevice ? "device" : "host"; }

}  // namespace

std::string PointerText(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%p", p);
  return buf;
}

aclError MemoryBook::Allocate(MemKind kind, size_t size, void** out, const char* call) {
  if (!out) return Fail(ACL_ERROR_INVALID_PARAM, call, "the output pointer is null");
  if (size == 0) return Fail(ACL_ERROR_INVALID_PARAM, call, "size 0: allocate at least one byte");
  // new[] of a huge size throws; the simulated device refuses it with the runtime's code instead.
  std::unique_ptr<std::byte[]> bytes(new (std::nothrow) std::byte[size + kAlignment]());
  if (!bytes)
    return Fail(kind == MemKind::kDevice ? ACL_ERROR_RT_MEMORY_ALLOCATION : ACL_ERROR_BAD_ALLOC, call,
                "cannot allocate " + std::to_string(size) + " bytes of " + KindName(kind) + " memory");
  uintptr_t at = reinterpret_cast<uintptr_t>(bytes.get());
  at = (at + kAlignment - 1) / kAlignment * kAlignment;
  std::lock_guard lock(mu_);
  freed_.erase(at);
  blocks_.emplace(at, Block{size, kind, std::move(bytes)});
  if (kind == MemKind::kDevice) device_bytes_ += size;
  *out = reinterpret_cast<void*>(at);
  return ACL_SUCCESS;
}

aclError MemoryBook::Release(MemKind kind, void* p, const char* call) {
  if (!p) return Fail(ACL_ERROR_INVALID_PARAM, call, "the pointer is null");
  std::lock_guard lock(mu_);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  auto it = blocks_.find(at);
  if (it == blocks_.end())
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call,
                PointerText(p) + (freed_.count(at) ? " was freed already (a double free)" : " is not the start of an allocation of this runtime") +
                    "; free each pointer " + (kind == MemKind::kDevice ? "aclrtMalloc" : "aclrtMallocHost") + " returned once");
  if (it->second.kind != kind)
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call,
                PointerText(p) + " is " + KindName(it->second.kind) + " memory; free it with " +
                    (it->second.kind == MemKind::kDevice ? "aclrtFree" : "aclrtFreeHost"));
  if (kind == MemKind::kDevice) device_bytes_ -= it->second.size;
  blocks_.erase(it);
  freed_.insert(at);
  return ACL_SUCCESS;
}

MemoryBook::Lookup MemoryBook::Find(const void* p, size_t n) const {
  std::lock_guard lock(mu_);
  const uintptr_t at = reinterpret_cast<uintptr_t>(p);
  auto it = blocks_.upper_bound(at);
  if (it == blocks_.begin()) return {};
  --it;
  const uintptr_t end = it->first + it->second.size;
  if (at >= end) return {};
  const size_t available = end - at;
  return {true, n <= available, it->second.kind, available};
}

aclError MemoryBook::RequireDevice(const void* p, size_t n, const char* call, const char* what) const {
  if (!p) return Fail(ACL_ERROR_INVALID_PARAM, call, std::string(what) + " is null");
  const Lookup l = Find(p, n);
  if (!l.found || l.kind != MemKind::kDevice) {
    const bool freed = [&] {
      std::lock_guard lock(mu_);
      return freed_.count(reinterpret_cast<uintptr_t>(p)) > 0;
    }();
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call,
                std::string(what) + " " + PointerText(p) +
                    (freed ? " was freed (a use after free)" : l.found ? " is host memory (aclrtMallocHost)" : " is not device memory") +
                    "; pass memory from aclrtMalloc");
  }
  if (!l.whole)
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call,
                std::string(what) + " " + PointerText(p) + ": " + std::to_string(n) + " bytes run past the end of its allocation (" +
                    std::to_string(l.available) + " bytes from there)");
  return ACL_SUCCESS;
}

aclError MemoryBook::RequireHost(const void* p, size_t n, const char* call, const char* what) const {
  if (!p) return Fail(ACL_ERROR_INVALID_PARAM, call, std::string(what) + " is null");
  const Lookup l = Find(p, n);
  if (l.found && l.kind == MemKind::kDevice)
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call, std::string(what) + " " + PointerText(p) + " is device memory; the copy kind says host");
  if (l.found && !l.whole)
    return Fail(ACL_ERROR_RT_PARAM_INVALID, call,
                std::string(what) + " " + PointerText(p) + ": " + std::to_string(n) + " bytes run past the end of its aclrtMallocHost allocation (" +
                    std::to_string(l.available) + " bytes from there)");
  return ACL_SUCCESS;
}

size_t MemoryBook::device_bytes() const {
  std::lock_guard lock(mu_);
  return device_bytes_;
}

void MemoryBook::Clear() {
  std::lock_guard lock(mu_);
  blocks_.clear();
  freed_.clear();
  device_bytes_ = 0;
}

}  // namespace npu::acl
