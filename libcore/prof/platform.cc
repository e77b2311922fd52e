#include "prof/platform.h"

#include <utility>

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

std::string_view SocOfPlatformVersion(std::string_view code) {
  static constexpr std::pair<std::string_view, std::string_view> kChipTable[] = {
      {"0", "Ascend310"}, {"1", "Ascend910A"}, {"4", "Ascend310P"}, {"5", "Ascend910B"}};
  for (const auto& [c, soc] : kChipTable)
    if (c == code) return soc;
  return {};
}

}  // namespace npu::prof
