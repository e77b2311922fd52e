// npukit's raw profiling data (PROF_*/): the directory layout follows CANN's msprof, the records are ours.
//
//   PROF_{seq:06}_{YYYYmmddHHMMSSmmm}_{8 random A-Z}/
//     host/data/   unaging.additional.hash_dic.slice_0        "id:string" lines (op names, types, shapes ...)
//                  unaging.compact.node_basic_info.slice_<n>  NodeRecord per task of each model (static)
//                  unaging.api_event.data.slice_<n>           ApiRecord per host API call (aclmdlExecute)
//                  start_info, end_info, info.json
//     device_0/data/ hwts.data.0.slice_<n>                    HwtsRecord per executed task
//                  aicore.data.0.slice_<n>                    PmuRecord per executed AI Core task
//                  ts_track.data.0.slice_<n>                  StepRecord per model start/end, iteration end
//                  info.json.0, sample.json, start_info.0, end_info.0
//   Every data file has a "<file>.done" marker ("filesize:<bytes>") once it is complete; a slice without
//   one was cut short. Slices split records anywhere (like CANN's): a reader concatenates them in order.
//
// Records are little-endian, fixed size, and start with a 16-bit magic and a version, so a reader can
// resynchronise after garbage. Times are device ticks at info.json's hwts_frequency (MHz); npukit's
// simulated device ticks at 1000 MHz, so one tick is one simulated nanosecond since the epoch.
#pragma once
#include <cstdint>
#include <string_view>

namespace npu::prof {

constexpr uint16_t kHwtsMagic = 0x5AA5, kPmuMagic = 0x5AA6, kStepMagic = 0x5AA7, kNodeMagic = 0x5AA8, kApiMagic = 0x5AA9;
constexpr uint8_t kRecordVersion = 1;
constexpr double kHwtsFrequencyMhz = 1000;  // ticks per µs of the simulated device clock

// GE's task types (their codes are GeTaskType's, hwts_log.h): a split-core chip runs cube work on AIC cores
// (AI_CORE), vector work on AIV cores (AI_VECTOR_CORE) and both in one MIX_AIC task.
enum class TaskType : uint8_t { kAiCore = 0, kAiCpu = 1, kAiVectorCore = 2, kMixAic = 4 };
std::string_view TaskTypeName(TaskType t);  // AI_CORE, AI_CPU, AI_VECTOR_CORE, MIX_AIC (op_summary's Task Type)

#pragma pack(push, 1)
struct RecordHeader {
  uint16_t magic;
  uint8_t version;
  uint8_t reserved;
};

struct HwtsRecord {  // 48 bytes
  RecordHeader h;
  uint32_t model_id, iteration, stream_id, task_id;
  uint64_t start_ticks, end_ticks;
  uint32_t block_dim;
  uint8_t task_type;
  uint8_t pad[7];
};

// PMU counters of one AI Core task, summed over its blocks (cycles on the slowest core for the pipes).
struct PmuRecord {  // 172 bytes
  RecordHeader h;
  uint32_t model_id, iteration, stream_id, task_id;
  uint64_t total_cycles;
  uint64_t cube_cycles, vector_cycles, scalar_cycles, mte1_cycles, mte2_cycles, mte3_cycles, fixpipe_cycles;
  uint64_t cube_fp16_fractals, cube_int8_fractals, vector_fp32_repeats, vector_fp16_repeats;
  uint64_t ub_read_bytes, ub_write_bytes, l1_read_bytes, l1_write_bytes;
  uint64_t l2_read_bytes, main_read_bytes, main_write_bytes;
};

enum class StepTag : uint16_t { kModelStart = 0, kModelEnd = 1, kIterationEnd = 4 };  // CANN's step-trace tags
struct StepRecord {  // 24 bytes
  RecordHeader h;
  uint16_t tag;
  uint16_t pad;
  uint32_t model_id, iteration;
  uint64_t ticks;
};

// One task of a loaded model; strings are ids into the hash dictionary.
struct NodeRecord {  // 64 bytes
  RecordHeader h;
  uint32_t model_id, stream_id, task_id;
  uint32_t op_name, op_type, task_type, block_dim;
  uint32_t input_shapes, input_dtypes, input_formats, output_shapes, output_dtypes, output_formats;
  uint32_t tiling;
  uint32_t pad;
};

struct ApiRecord {  // 44 bytes
  RecordHeader h;
  uint32_t level;   // CANN's ENUM_API_TYPE: 20000 AscendCL, 15000 Model, 10000 Node, 5000 Runtime
  uint32_t name;    // hash-dictionary id
  uint32_t thread_id, model_id;
  uint64_t start_ns, end_ns;
  uint32_t iteration, pad;
};
#pragma pack(pop)

static_assert(sizeof(HwtsRecord) == 48 && sizeof(PmuRecord) == 172 && sizeof(StepRecord) == 24 &&
              sizeof(NodeRecord) == 64 && sizeof(ApiRecord) == 44);

constexpr uint32_t kApiLevelAcl = 20000, kApiLevelModel = 15000;

}  // namespace npu::prof
