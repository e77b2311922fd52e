// The simulated device's memory: host memory the runtime keeps its own books on. Every allocation of
// aclrtMalloc (device) and aclrtMallocHost (host) is recorded with its size, so a copy or a model buffer is
// checked against what it names: device memory where device memory is required, within the allocation, not
// freed. Memory the program got elsewhere (malloc, the stack) counts as host memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "acl/acl_base.h"

namespace npu::acl {

enum class MemKind { kDevice, kHost };

class MemoryBook {
 public:
  // A new zero-filled allocation of `size` bytes (aligned for any dtype).
  aclError Allocate(MemKind kind, size_t size, void** out, const char* call);
  // Frees what Allocate returned; a pointer it did not return, or one freed already, is an error.
  aclError Release(MemKind kind, void* p, const char* call);
  // The kind of the allocation holding [p, p + n), or nothing; `whole` is false when it starts inside one and
  // runs past its end.
  struct Lookup {
    bool found = false, whole = false;
    MemKind kind = MemKind::kHost;
    size_t available = 0;  // bytes from p to the allocation's end
  };
  Lookup Find(const void* p, size_t n) const;
  // "device memory at p (n bytes)" is what the call needs: an error code and message when it is not.
  aclError RequireDevice(const void* p, size_t n, const char* call, const char* what) const;
  aclError RequireHost(const void* p, size_t n, const char* call, const char* what) const;
  size_t device_bytes() const;
  void Clear();  // aclFinalize / aclrtResetDevice of the last user: everything is released

 private:
  struct Block {
    size_t size;
    MemKind kind;
    std::unique_ptr<std::byte[]> bytes;
  };
  mutable std::mutex mu_;
  std::map<uintptr_t, Block> blocks_;  // by start address
  std::set<uintptr_t> freed_;          // starts freed and not reused: a double free or a use after free says so
  size_t device_bytes_ = 0;
};

std::string PointerText(const void* p);

}  // namespace npu::acl
