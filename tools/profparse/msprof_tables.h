// The columns of msprof's summary tables, as one named CANN version writes them (readers key on the names, and
// the names change between versions), and the value of each PMU column from a task's counters. One table per
// fact; export.cc only walks them. Facts from msprof's open source (Ascend/msprof analysis/, the tree before
// the 2026-01-28 "rename block Dim to block Num", i.e. msprof 25.5 of CANN 8.5) and a real CANN 8.5.2 export
// from a 910B3 (tests/data/msprof/ascend910b3_cann8.5.2):
//  - op_summary: the task columns (Block Dim; Mix Block Dim and Context ID only on STARS chips such as the
//    910B), then aicore_time(us) and total_cycles, the aic_metrics group's metrics (*_time(us) before each
//    *_ratio), memory_bound and cube_utilization(%) where their inputs exist. The 910B's split cores: AIC
//    (cube) columns prefixed aic_, AIV (vector) columns aiv_, each core kind only with the pipes it has.
//    The Ascend 310 (chip v1) has no vector-pipe, UB-bandwidth or L2-write counters.
//  - op_statistic: Min before Avg; numbers without trailing zeros.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "prof/hwts_log.h"
#include "prof/pmu_events.h"
#include "raw_profile.h"

namespace npu::profparse {

// --cann_version: "8.5" (msprof 25.5; the default, what CANN 8.x users run) or "latest" (msprof 26.x, which
// writes Block Num / Mix Block Num).
enum class CannVersion { k8_5, kLatest };
std::optional<CannVersion> ParseCannVersion(std::string_view s);
constexpr std::string_view kCannVersions = "8.5 or latest";

// The three column families msprof's source distinguishes.
enum class ChipClass {
  kAscend310,  // platform_version 0 (chip v1): HWTS, no vector-pipe counters
  kHwts,       // Ascend910A (1), Ascend310P (4): HWTS, one AI Core kind
  kAtlasA2,    // Ascend910B (5): STARS, split AIC and AIV cores
};
ChipClass ChipClassOf(std::string_view soc);  // from npukit's SoC name (Ascend310, Ascend310P3, Ascend910B3, ...)

// What a PMU column holds; the formulas are msprof's (msconfig/ai_core_config.py), over one task's counters.
enum class Quantity {
  kCoreTime,     // aicore_time(us) / aiv_time(us): total cycles / frequency / blocks x waves (blocks over cores)
  kTotalCycles,
  kEventTime,    // an event's cycles as µs, as the core time is
  kEventRatio,   // an event's count (plus event2's) / total cycles
  kIcacheMiss,   // icache misses / requests: N/A when there were none (the simulator has no instruction cache)
  kBandwidth,    // an event's requests x bytes per request / core time, in GiB/s as msprof divides
  kCubeFops, kVectorFops,
  kMemoryBound,      // mte2 ratio / max(mac ratio, vec ratio)
  kCubeUtilization,  // total cycles / (frequency x AI Cores) / duration, in %
};
using prof::CoreKind;

struct PmuColumn {
  std::string name;
  Quantity quantity;
  uint16_t event = 0, event2 = 0;
  CoreKind core = CoreKind::kAny;
};

// op_summary's columns before the PMU ones (Device_id ... Output Formats, Context ID).
std::vector<std::string> TaskColumns(CannVersion v, ChipClass c);
// The PMU columns of an aic_metrics group (PipeUtilization, ArithmeticUtilization, Memory).
std::vector<PmuColumn> PmuColumns(ChipClass c, std::string_view group);
// npukit's own, after msprof's: where the op sits on the SoC's roofline.
const std::vector<std::string>& RooflineColumns();

struct PmuContext {
  prof::TaskType task_type = prof::TaskType::kAiCore;  // on a split-core chip: which core kinds ran it
  uint32_t block_dim = 1, mix_block_dim = 0;
  double duration_us = 0;
};
// The value of one column for one task; nullopt prints N/A (an event the profile did not collect).
std::optional<double> PmuValue(const PmuColumn& col, const PmuSample& p, const DeviceInfo& d, const PmuContext& ctx);

// A metric as msprof prints it: rounded to three decimals, trailing zeros dropped but one kept ("0.33", "7.285",
// "0.0"); whole counts as integers.
void AppendMetric(std::string& out, double v);
// op_statistic's numbers: three decimals at most, trailing zeros and a bare point dropped ("7.84", "100").
void AppendTrimmed(std::string& out, double v);

}  // namespace npu::profparse
