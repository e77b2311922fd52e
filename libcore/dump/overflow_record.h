// The debug record of an overflow ("Opdebug" dump file, output 0): what the simulated AI Core's float status
// word reports when a task's result leaves its dtype's range or finite inputs give Inf/NaN. Beyond CANN's
// record: the first offending element (output, flat index, value before saturation). Little-endian, 80 bytes.
#pragma once
#include <cstdint>

namespace npu {

struct OverflowRecord {
  static constexpr uint32_t kMagic = 0x5A5A5A5A;
  uint32_t magic = kMagic;
  uint32_t version = 2;
  uint32_t acc_type = 0;  // 0 AIC, 1 AIV, 2 AICPU, 3 SDMA
  uint32_t model_id = 0;
  uint32_t stream_id = 0;
  uint32_t task_id = 0;
  uint32_t context_id = 0;
  uint32_t thread_id = 0;
  uint64_t pc_start = 0;
  uint64_t status = 0;      // bit 0: floating-point overflow
  uint64_t non_finite = 0;  // Inf/NaN results
  uint64_t saturated = 0;   // finite results beyond the output dtype's range (saturated, or ±inf in INF_NAN mode)
  int64_t first_index = -1;  // flat index of the first offending element in output `first_output`
  uint32_t first_output = 0;
  float first_value = 0;     // its value before narrowing/saturation
};
static_assert(sizeof(OverflowRecord) == 80);

constexpr const char* kOpDebugType = "Opdebug";
constexpr const char* kOpDebugName = "Node_OpDebug";

}  // namespace npu
