#include "base/big_buffer.h"

#include <sys/mman.h>

#include <cstdint>

namespace npu {

std::shared_ptr<std::byte[]> AllocateBigBuffer(size_t n) {
  // The x86-64 transparent huge page size. With THP set to "madvise" (Debian's default) only regions that
  // ask get them; where THP is off, madvise fails harmlessly and the region has ordinary pages.
  constexpr size_t kHugePage = size_t{2} << 20;
  const size_t rounded = (n + kHugePage - 1) / kHugePage * kHugePage, mapped = rounded + kHugePage;
  void* p = n ? ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
  if (p == MAP_FAILED) return std::make_shared_for_overwrite<std::byte[]>(n ? n : 1);
  auto* start = reinterpret_cast<std::byte*>((reinterpret_cast<uintptr_t>(p) + kHugePage - 1) & ~(kHugePage - 1));
  ::madvise(start, rounded, MADV_HUGEPAGE);
  return std::shared_ptr<std::byte[]>(start, [p, mapped](std::byte*) { ::munmap(p, mapped); });
}

}  // namespace npu
