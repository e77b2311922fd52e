#include "prof/msprof_raw.h"

#include <cstring>

namespace npu::prof::raw {

std::string_view LevelName(uint16_t level) {
  switch (static_cast<Level>(level)) {
    case Level::kAcl: return "acl";
    case Level::kModel: return "model";
    case Level::kNode: return "node";
    case Level::kRuntime: return "runtime";
  }
  return {};
}

bool IsHostRecord(const std::byte* at) {
  uint16_t magic, level;
  std::memcpy(&magic, at, sizeof magic);
  std::memcpy(&level, at + sizeof magic, sizeof level);
  return magic == kMagic && !LevelName(level).empty();
}

uint64_t HashId(std::string_view s) {
  constexpr uint64_t kOffset = 14695981039346656037ull, kPrime = 1099511628211ull;  // FNV-1a's 64-bit constants
  uint64_t h = kOffset;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * kPrime;
  return h;
}

}  // namespace npu::prof::raw
