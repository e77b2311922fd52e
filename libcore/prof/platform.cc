#include "prof/platform.h"

namespace npu::prof {
namespace {

// Longest prefixes first: "Ascend310P3" is a 310P, not a 310.
constexpr ProfPlatform kPlatforms[] = {
    {"Ascend910B", 5, true, true, false},
    {"Ascend910", 1, false, false, false},
    {"Ascend310P", 4, false, false, false},
    {"Ascend310", 0, false, false, true},
};

}  // namespace

const ProfPlatform& PlatformOf(std::string_view soc) {
  for (const ProfPlatform& p : kPlatforms)
    if (soc.starts_with(p.soc_prefix)) return p;
  return kPlatforms[1];
}

}  // namespace npu::prof
