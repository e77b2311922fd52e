#include "prof/pmu_events.h"

#include <charconv>

namespace npu::prof {
namespace {

struct GroupEvents {
  std::string_view group;
  CoreKind core;
  std::vector<uint16_t> events;
};

// The split cores collect only the pipes they have: an AIC has no vector unit and no MTE3 (its results leave
// through the fixpipe), an AIV no cube, MTE1 or fixpipe.
const std::vector<GroupEvents>& Groups() {
  static const std::vector<GroupEvents> groups = {
      {"PipeUtilization", CoreKind::kAny, {kVecBusy, kCubeBusy, kScalarBusy, kMte1Busy, kMte2Busy, kMte3Busy, kIcacheReq, kIcacheMiss}},
      {"PipeUtilization", CoreKind::kAic, {kCubeBusy, kScalarBusy, kMte1Busy, kMte2Busy, kFixpipeBusy, kIcacheReq, kIcacheMiss}},
      {"PipeUtilization", CoreKind::kAiv, {kVecBusy, kScalarBusy, kMte2Busy, kMte3Busy, kIcacheReq, kIcacheMiss}},
      {"Memory", CoreKind::kAny, {kUbReadReq, kUbWriteReq, kL1ReadReq, kL1WriteReq, kL2ReadReq, kL2WriteReq, kMainReadReq, kMainWriteReq}},
      {"Memory", CoreKind::kAic, {kL1ReadReq, kL1WriteReq, kMainReadReq, kMainWriteReq, kL2ReadReq, kL2WriteReq}},
      {"Memory", CoreKind::kAiv, {kUbReadReq, kUbWriteReq, kMainReadReq, kMainWriteReq, kL2ReadReq, kL2WriteReq}},
      {"ArithmeticUtilization", CoreKind::kAny,
       {kCubeFp16Exec, kCubeInt8Exec, kVecFp32Exec, kVecFp16Exec, kVecFp16HalfExec, kVecInt32Exec, kVecMiscExec}},
      {"ArithmeticUtilization", CoreKind::kAic, {kCubeFp16Exec, kCubeInt8Exec}},
      {"ArithmeticUtilization", CoreKind::kAiv, {kVecFp32Exec, kVecFp16Exec, kVecFp16HalfExec, kVecInt32Exec, kVecMiscExec}},
  };
  return groups;
}

}  // namespace

std::vector<uint16_t> MetricEvents(std::string_view group, CoreKind core) {
  for (const GroupEvents& g : Groups())
    if (g.group == group && g.core == core) return g.events;
  return MetricEvents("PipeUtilization", core);
}

std::string EventList(const std::vector<uint16_t>& events) {
  std::string s;
  char buf[8];
  for (size_t i = 0; i < events.size(); ++i) {
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, events[i], 16);
    s += (i ? ",0x" : "0x") + std::string(buf, end);
  }
  return s;
}

std::optional<std::vector<uint16_t>> ParseEventList(std::string_view list) {
  std::vector<uint16_t> events;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    if (!item.starts_with("0x") && !item.starts_with("0X")) return std::nullopt;
    item.remove_prefix(2);
    uint16_t v = 0;
    auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v, 16);
    if (ec != std::errc() || end != item.data() + item.size() || events.size() == kPmuSlots) return std::nullopt;
    events.push_back(v);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return events;
}

double BytesPerRequest(uint16_t event) {
  switch (event) {
    case kUbReadReq:
    case kUbWriteReq: return 256.0 * 4 / 8;
    case kL1ReadReq: return 256.0 * 16 / 8;
    case kL1WriteReq: return 128.0 * 8 / 8;
    case kL2ReadReq:
    case kL2WriteReq:
    case kMainReadReq:
    case kMainWriteReq: return 256.0 * 8 / 8;
    default: return 0;
  }
}

double OpsPerCount(uint16_t event) {
  switch (event) {
    case kCubeFp16Exec: return 16.0 * 16 * 16 * 2;  // one 16x16x16 fp16 fractal, two operations per MAC
    case kCubeInt8Exec: return 16.0 * 16 * 32 * 2;
    case kVecFp32Exec: return 32;
    case kVecFp16Exec: return 128;
    case kVecFp16HalfExec:
    case kVecInt32Exec: return 64;
    case kVecMiscExec: return 32;
    default: return 0;
  }
}

}  // namespace npu::prof
