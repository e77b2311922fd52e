// The debug record of an overflow ("Opdebug" dump file, output 0): what the simulated AI Core reports
// when an op turns finite inputs into Inf/NaN or saturates fp16. Little-endian, 64 bytes.
#pragma once
#include <cstdint>

namespace npu {

struct OverflowRecord {
  static constexpr uint32_t kMagic = 0x5A5A5A5A;
  uint32_t magic = kMagic;
  uint32_t version = 1;
  uint32_t acc_type = 0;  // 0 AIC, 1 AIV, 2 AICPU, 3 SDMA
  uint32_t model_id = 0;
  uint32_t stream_id = 0;
  uint32_t task_id = 0;
  uint32_t context_id = 0;
  uint32_t thread_id = 0;
  uint64_t pc_start = 0;
  uint64_t status = 0;      // bit 0: floating-point overflow
  uint64_t non_finite = 0;  // Inf/NaN elements in the outputs
  uint64_t saturated = 0;   // fp16 elements at +-65504 or beyond
};
static_assert(sizeof(OverflowRecord) == 64);

constexpr const char* kOpDebugType = "Opdebug";
constexpr const char* kOpDebugName = "Node_OpDebug";

}  // namespace npu
