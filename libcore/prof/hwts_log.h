// CANN's HWTS task log: the hardware task scheduler's record of every task start and end on Ascend 310 and
// 910A-class chips (device files hwts.data.<dev>.slice_<n>; in the 2020 layout
// hwts.log.data.<n>.dev.profiler_default_tag.<dev>.slice_<n>). Facts from the layout msprof's open parser
// decodes (Ascend/msprof analysis/, struct "BBHHHQ12I", 64 bytes, little-endian):
//   byte 0   low 3 bits: log type (0 task start, 1 task end; other values are other logs); high 4 bits: a
//            counter that runs 0..15 from record to record (a gap means records were lost)
//   byte 1   task type (GE's task type: 0 AI_CORE, 1 AI_CPU, 2 AI_VECTOR_CORE, ...)
//   u16 @6   task id          u64 @8  system counter (ticks of info.json's hwts_frequency)
//   u32 @16  stream id (the low 11 bits; the high bits are flags)
// A task's time is the pair of its start and its end: an end closes the latest start of the same stream and
// task id; an end with no start, or a start that never ends, makes no pair (msprof drops them the same way).
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace npu::prof {

constexpr size_t kHwtsLogRecordBytes = 64;

struct HwtsLogEntry {
  uint8_t log_type = 0;  // 0 start, 1 end
  uint8_t counter = 0;
  uint8_t task_type = 0;
  uint16_t task_id = 0;
  uint16_t stream_id = 0;
  uint64_t syscnt = 0;
};

struct HwtsTaskTime {
  uint16_t stream_id = 0, task_id = 0;
  uint8_t task_type = 0;
  uint64_t start = 0, end = 0;  // system counter ticks
};

// Decodes whole records; log types other than start and end are left out. `lost` (optional) counts the gaps
// in the record counter, records the hardware dropped.
std::vector<HwtsLogEntry> DecodeHwtsLog(std::span<const std::byte> bytes, uint64_t* lost = nullptr);
// One record into out (false for another log type); `record` is kHwtsLogRecordBytes long.
bool DecodeHwtsLogRecord(std::span<const std::byte, kHwtsLogRecordBytes> record, HwtsLogEntry& out);
// Encodes one entry as the hardware writes it (the simulator's collector; tests).
void EncodeHwtsLogRecord(const HwtsLogEntry& e, std::span<std::byte, kHwtsLogRecordBytes> out);

// Start/end pairs, in the order their ends were logged.
class HwtsPairer {
 public:
  void Add(const HwtsLogEntry& e);
  std::vector<HwtsTaskTime>& pairs() { return pairs_; }
  uint64_t unmatched_ends() const { return unmatched_ends_; }
  // Starts still open (tasks whose end was not logged).
  size_t open_starts() const { return open_.size(); }

 private:
  std::vector<HwtsTaskTime> pairs_;
  std::unordered_map<uint32_t, uint64_t> open_;  // (stream << 16 | task) -> the latest start's ticks
  uint64_t unmatched_ends_ = 0;
};

// GE's task types (GeTaskType): the names task_time and op_summary print.
std::string_view GeTaskTypeName(uint32_t type);
// The ones npukit's tasks have: a split-core chip runs cube work on AIC cores (AI_CORE), vector work on AIV
// cores (AI_VECTOR_CORE) and both in one MIX_AIC task.
enum class TaskType : uint8_t { kAiCore = 0, kAiCpu = 1, kAiVectorCore = 2, kMixAic = 4 };
inline std::string_view TaskTypeName(TaskType t) { return GeTaskTypeName(static_cast<uint32_t>(t)); }

}  // namespace npu::prof
