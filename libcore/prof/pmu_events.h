// The AI Core PMU events of an aic_metrics group: what the collector counts into each PMU record's eight slots
// (sample.json's ai_core_profiling_events / aiv_profiling_events list them in slot order) and what profparse
// computes op_summary's metric columns from. Event codes and formulas from Ascend/msprof analysis/:
// msconfig/ai_core_config.py (events, metrics and formulas) and csrc/domain/services/association/calculator/
// metric/metric_calculator_group/{pipeut,memory,arith_metric}_calculator.h (which events each metric sums).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace npu::prof {

enum PmuEvent : uint16_t {
  kVecBusy = 0x8, kScalarBusy = 0x9, kCubeBusy = 0xa, kMte1Busy = 0xb, kMte2Busy = 0xc, kMte3Busy = 0xd,
  kL2ReadReq = 0xf, kL2WriteReq = 0x10, kMainReadReq = 0x12, kMainWriteReq = 0x13, kUbReadReq = 0x15, kUbWriteReq = 0x16,
  kL1ReadReq = 0x31, kL1WriteReq = 0x32,
  kCubeFp16Exec = 0x49, kCubeInt8Exec = 0x4a, kVecFp32Exec = 0x4b, kVecFp16Exec = 0x4c, kVecFp16HalfExec = 0x4d,
  kVecInt32Exec = 0x4e, kVecMiscExec = 0x4f,
  kIcacheReq = 0x54, kIcacheMiss = 0x55, kFixpipeBusy = 0x303,
};

enum class CoreKind { kAny, kAic, kAiv };  // kAny: a chip with one AI Core kind

constexpr size_t kPmuSlots = 8;
// The events a group collects on a core kind, in slot order (fewer than eight on the split cores).
std::vector<uint16_t> MetricEvents(std::string_view group, CoreKind core);
// "0x8,0xa,..." as sample.json lists them, and back (nullopt: not such a list).
std::string EventList(const std::vector<uint16_t>& events);
std::optional<std::vector<uint16_t>> ParseEventList(std::string_view list);

// The bytes one request of a memory event moves: msprof's bandwidth formulas multiply the request count by a
// bit count (UB 256x4, L1 read 256x16, L1 write 128x8, L2 and main memory 256x8) and divide by 8 GiB; 0 for
// events that are not requests.
double BytesPerRequest(uint16_t event);
// Operations one count of an arithmetic event stands for (cube_fops / vector_fops in msprof's formulas).
double OpsPerCount(uint16_t event);

}  // namespace npu::prof
