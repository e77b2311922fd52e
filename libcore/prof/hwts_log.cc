#include "prof/hwts_log.h"

#include <cstring>

namespace npu::prof {
namespace {

constexpr uint8_t kLogTypeMask = 0x7, kStart = 0, kEnd = 1;
constexpr unsigned kCounterShift = 4, kCounterModulo = 16;
constexpr uint32_t kStreamIdMask = (1u << 11) - 1;  // the high bits of the field are flags
constexpr size_t kTaskTypeAt = 1, kTaskIdAt = 6, kSyscntAt = 8, kStreamAt = 16;

template <typename T>
T Load(std::span<const std::byte, kHwtsLogRecordBytes> r, size_t at) {
  T v;
  std::memcpy(&v, r.data() + at, sizeof v);
  return v;
}

template <typename T>
void Store(std::span<std::byte, kHwtsLogRecordBytes> r, size_t at, T v) {
  std::memcpy(r.data() + at, &v, sizeof v);
}

// GeTaskType, in its order (Ascend/msprof analysis/common_func/ms_constant/ge_enum_constant.py).
constexpr std::string_view kGeTaskTypes[] = {"AI_CORE", "AI_CPU",   "AI_VECTOR_CORE", "WRITE_BACK", "MIX_AIC", "MIX_AIV",
                                             "FFTS_PLUS", "DSA_SQE", "DVPP",           "HCCL",       "FUSION",  "INVALID"};

}  // namespace

bool DecodeHwtsLogRecord(std::span<const std::byte, kHwtsLogRecordBytes> r, HwtsLogEntry& out) {
  const uint8_t head = Load<uint8_t>(r, 0);
  out.log_type = head & kLogTypeMask;
  out.counter = static_cast<uint8_t>(head >> kCounterShift);
  if (out.log_type != kStart && out.log_type != kEnd) return false;
  out.task_type = Load<uint8_t>(r, kTaskTypeAt);
  out.task_id = Load<uint16_t>(r, kTaskIdAt);
  out.syscnt = Load<uint64_t>(r, kSyscntAt);
  out.stream_id = static_cast<uint16_t>(Load<uint32_t>(r, kStreamAt) & kStreamIdMask);
  return true;
}

void EncodeHwtsLogRecord(const HwtsLogEntry& e, std::span<std::byte, kHwtsLogRecordBytes> out) {
  std::memset(out.data(), 0, out.size());
  Store<uint8_t>(out, 0, static_cast<uint8_t>((e.counter % kCounterModulo) << kCounterShift | (e.log_type & kLogTypeMask)));
  Store<uint8_t>(out, kTaskTypeAt, e.task_type);
  Store<uint16_t>(out, kTaskIdAt, e.task_id);
  Store<uint64_t>(out, kSyscntAt, e.syscnt);
  Store<uint32_t>(out, kStreamAt, e.stream_id & kStreamIdMask);
}

std::vector<HwtsLogEntry> DecodeHwtsLog(std::span<const std::byte> bytes, uint64_t* lost) {
  std::vector<HwtsLogEntry> out;
  out.reserve(bytes.size() / kHwtsLogRecordBytes);
  int last_counter = -1;
  for (size_t at = 0; at + kHwtsLogRecordBytes <= bytes.size(); at += kHwtsLogRecordBytes) {
    std::span<const std::byte, kHwtsLogRecordBytes> r(bytes.data() + at, kHwtsLogRecordBytes);
    const int counter = static_cast<int>(static_cast<uint8_t>(r[0]) >> kCounterShift);
    if (lost && last_counter >= 0 && counter != (last_counter + 1) % static_cast<int>(kCounterModulo)) ++*lost;
    last_counter = counter;
    HwtsLogEntry e;
    if (DecodeHwtsLogRecord(r, e)) out.push_back(e);
  }
  return out;
}

void HwtsPairer::Add(const HwtsLogEntry& e) {
  const uint32_t key = static_cast<uint32_t>(e.stream_id) << 16 | e.task_id;
  if (e.log_type == kStart) {
    open_[key] = e.syscnt;
    return;
  }
  auto it = open_.find(key);
  if (it == open_.end()) {
    ++unmatched_ends_;
    return;
  }
  pairs_.push_back({e.stream_id, e.task_id, e.task_type, it->second, e.syscnt});
  open_.erase(it);
}

std::string_view GeTaskTypeName(uint32_t type) {
  return type < std::size(kGeTaskTypes) ? kGeTaskTypes[type] : "UNKNOWN";
}

}  // namespace npu::prof
