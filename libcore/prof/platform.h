// How msprof's tools tell the chips apart: info.json's platform_version (msprof's CHIP_TABLE, Ascend/msprof
// analysis/csrc/application/database/db_constant.h: 0 Ascend310, 1 Ascend910A, 4 Ascend310P, 5 Ascend910B), and
// what follows from it: whether the chip logs tasks through STARS (msprof's IsStarsChip: the 910B) or the HWTS,
// and whether its AI cores are split into cube-only AIC and vector-only AIV cores (the 910B, Atlas A2).
#pragma once
#include <string_view>

namespace npu::prof {

struct ProfPlatform {
  std::string_view soc_prefix;  // npukit's SoC names that start with it
  int platform_version;
  bool stars;        // STARS task logs, Context ID and Mix Block Dim columns
  bool split_cores;  // AIC and AIV cores: op_summary's aic_/aiv_ columns, MIX_AIC tasks
  bool chip_v1;      // the Ascend 310: no vector-pipe, UB-bandwidth or L2-write counters
};

// The platform of an npukit SoC name (Ascend310P3, Ascend910B3, ...); the Ascend910A's for names it does not know.
const ProfPlatform& PlatformOf(std::string_view soc);
// The chip family a platform_version code names ("5" -> "Ascend910B"); empty for a code msprof does not know.
std::string_view SocOfPlatformVersion(std::string_view code);

}  // namespace npu::prof
