// Memory for large byte buffers that are written once, whole (staging for an .om being written, in
// om_file.cc). Touching fresh memory one 4 KiB page at a time is most of the cost of such a
// copy on Linux (a fault, a zeroed page and a page-table update each); asking for transparent huge pages
// makes that 512 times fewer faults.
#pragma once
#include <cstddef>
#include <memory>

namespace npu {

// `n` bytes, uninitialised, aligned to 2 MiB; the memory is released with the last copy of the pointer.
std::shared_ptr<std::byte[]> AllocateBigBuffer(size_t n);

}  // namespace npu
