// msprof's raw profiling records: the layouts CANN's collectors write into PROF_*/{host,device_<id>}/data/ and
// Ascend/msprof's open parsers read. Facts (field order and widths, magic, levels, type codes, func types) from
// Ascend/msprof analysis/: csrc/infrastructure/utils/prof_common.h (MsprofApi, MsprofCompactInfo,
// MsprofAdditionalInfo, MsprofNodeBasicInfo, MsprofTensorInfo, MsprofRuntimeTrack, the report levels and types),
// msparser/data_struct_size_constant.py (StructFmt: HWTS_LOG_FMT, AIC_PMU_FMT, STEP_TRACE_FMT, TASK_TRACK_FMT),
// csrc/domain/services/parser/parser_item/{acsq_log,chip4_pmu}_parser_item.h (AcsqLog, ContextPmu) and
// msparser/step_trace/ts_track_parser.py (TsTrackTag). Little-endian and packed, as the device writes them.
//
//   host/data/      unaging.api_event.data.slice_<n>       ApiRecord per API call (acl, model, node launch)
//                   aging.compact.node_basic_info.slice_<n> NodeBasicInfoRecord per node, inside its launch call
//                   aging.compact.task_track.slice_<n>     TaskTrackRecord per device task, inside its launch call
//                   aging.additional.tensor_info.slice_<n> TensorInfoRecord per node (five tensors a record)
//                   aging.additional.node_attr_info...     NodeAttrInfoRecord: npukit's work and tiling per node
//                   unaging.additional.hash_dic.slice_0    "<hash id>:<string>" lines
//                   unaging.additional.type_info_dic...    "<level>_<type>:<name>" lines
//   device_0/data/  HWTS chips:  hwts.data.0.slice_<n>     64-byte task start/end logs (hwts_log.h)
//                                aicore.data.0.slice_<n>   AicPmuRecord per AI Core task
//                   STARS chips: stars_soc.data.0.slice_<n> AcsqLogRecord task start/end logs
//                                ffts_profile.data.0...    ContextPmuRecord per AIC / AIV part of a task
//                   both:        ts_track.data.0.slice_<n> StepTraceRecord per model start/end, iteration end
// A host record belongs to the API call of its thread whose [begin, end] holds its timestamp (msprof builds
// each thread's call tree by time and hangs the compact and additional records on it).
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace npu::prof::raw {

constexpr uint16_t kMagic = 0x5A5A;  // MSPROF_DATA_HEAD_MAGIC_NUM, the first field of every host record

// MSPROF_REPORT_*_LEVEL: the layer that reported a record (api_statistic's Level column is its lower-case name).
enum class Level : uint16_t { kAcl = 20000, kModel = 15000, kNode = 10000, kRuntime = 5000 };
std::string_view LevelName(uint16_t level);  // "acl", "model", "node", "runtime"; empty for others

// Report types within a level (MSPROF_REPORT_MODEL_*_TYPE, MSPROF_REPORT_NODE_*_TYPE, the ACL bases).
constexpr uint32_t kModelExecuteType = 1, kModelLoadType = 2;
constexpr uint32_t kNodeBasicInfoType = 0, kTensorInfoType = 1, kNodeLaunchType = 5, kNodeAttrInfoType = 9;
constexpr uint32_t kAclModelBaseType = 0x020000;  // aclmdl* calls: the base plus the call's ordinal
constexpr uint32_t kRuntimeTaskTrackType = 0;     // the task_track file holds nothing else

#pragma pack(push, 1)
struct ApiRecord {  // MsprofApi, 40 bytes
  uint16_t magic, level;
  uint32_t type, thread_id, reserve;
  uint64_t begin, end, item_id;  // item_id: the hash id of what was called on (a node's name, a model's)
};

struct CompactHeader {  // the 24 bytes that open MsprofCompactInfo and MsprofAdditionalInfo
  uint16_t magic, level;
  uint32_t type, thread_id, data_len;
  uint64_t timestamp;
};

struct NodeBasicInfoRecord {  // MsprofCompactInfo with MsprofNodeBasicInfo, 64 bytes
  CompactHeader h;
  uint64_t op_name;    // hash id
  uint32_t task_type;  // GeTaskType (hwts_log.h's GeTaskTypeName)
  uint64_t op_type;    // hash id
  uint32_t block_num;  // low 16 bits: the block dim; high 16 bits: the AIV blocks per block of a mix task
  uint32_t op_flag;
  uint8_t op_state;
  uint8_t reserved[11];
};

struct TaskTrackRecord {  // MsprofCompactInfo with MsprofRuntimeTrack, 64 bytes
  CompactHeader h;
  uint16_t device_id, stream_id, task_id, batch_id;
  uint64_t task_type;    // a runtime-level type id of type_info_dic (KERNEL_AICORE, PROFILING_ENABLE, ...)
  uint64_t kernel_name;  // hash id
  uint8_t reserved[16];
};

constexpr int kTensorShapeDims = 8, kTensorsPerRecord = 5;  // MSPROF_GE_TENSOR_DATA_SHAPE_LEN / _NUM
constexpr uint32_t kInputTensor = 0, kOutputTensor = 1;
struct TensorDesc {  // MsrofTensorData
  uint32_t tensor_type, format, data_type;  // GE's Format and DataType codes (ir/dtype.h keeps them)
  uint32_t shape[kTensorShapeDims];        // the dims, then zeros
};
struct TensorInfoRecord {  // MsprofAdditionalInfo with MsprofTensorInfo, 256 bytes
  CompactHeader h;
  uint64_t op_name;
  uint32_t tensor_num;
  TensorDesc tensors[kTensorsPerRecord];
};

struct NodeAttrInfoRecord {  // MsprofCompactInfo with MsprofAttrInfo, 64 bytes
  CompactHeader h;
  uint64_t op_name;
  uint32_t attr_type;
  uint64_t hash_id;  // the attribute's text in hash_dic
  uint8_t reserved[20];
};
constexpr uint32_t kNpukitWorkAttr = 0x4E50;  // npukit's own attr: "flops=F;bytes=B;tiling=T" (profparse's roofline)

// Device, HWTS chips: the AI Core PMU record of one task (AIC_PMU_FMT "BBHHHII10Q8I", 128 bytes). The eight
// counters are the events sample.json's ai_core_profiling_events lists, in its order; the counts are summed
// over the task's blocks.
struct AicPmuRecord {
  uint8_t head;  // high 4 bits: a counter running 0..15 (a gap means lost records)
  uint8_t reserved0;
  uint16_t reserved1, reserved2;
  uint16_t task_id;
  uint32_t reserved3, reserved4;
  uint64_t total_cycles;
  uint64_t reserved5;
  uint64_t events[8];
  uint32_t stream_id;  // the low 11 bits
  uint32_t reserved6[7];
};

// Device, STARS chips: a task's start (func type 0) or end (1) in the ACSQ log (AcsqLog, 64 bytes).
struct AcsqLogRecord {
  uint16_t head;  // bits 0-5 the func type, 6-9 a counter, 10-15 the SQE type (StarsSqeType)
  uint16_t reserved0;
  uint16_t stream_id, task_id;
  uint64_t timestamp;
  uint16_t reserved1, reserved2;
  uint32_t reserved3[11];
};
constexpr uint16_t kAcsqStart = 0, kAcsqEnd = 1;
// StarsSqeType: what kind of task the SQE was.
constexpr uint8_t kSqeAiCore = 0, kSqeAiCpu = 1, kSqeAiv = 2, kSqePlaceHolder = 3;

// Device, STARS chips: the PMU record of one AIC or AIV part of a task (ContextPmu, func type 0b101000, 128
// bytes). msprof reads ffts type 0 as an AIC task, 4 (FFTS+) with sub-task type 6 / 7 as the AIC / AIV part of
// a mix task, and any other ffts type as an AIV task.
struct ContextPmuRecord {
  uint16_t head;  // bits 0-5 the func type, 6-9 a counter
  uint16_t reserved0;
  uint16_t stream_id, task_id;
  uint64_t reserved1;
  uint16_t sub_task;    // bits 0-7 the sub-task type, bit 10 the overflow flag
  uint16_t context_id;  // the sub-task id
  uint16_t ffts;        // bits 13-15 the ffts type
  uint16_t reserved2;
  uint64_t reserved3;
  uint64_t total_cycles;
  uint64_t reserved4;
  uint64_t events[8];
  uint64_t time[2];  // the part's start and end ticks
};
constexpr uint16_t kContextPmuFunc = 0b101000;
constexpr uint16_t kFftsNormal = 0, kFftsAiv = 1, kFftsPlus = 4, kSubTaskAic = 6, kSubTaskAiv = 7;

// Device, both: ts_track records are 40 bytes, told apart by their second byte (TsTrackTag); npukit writes the
// step trace (tag 10): a model's start (tag id 0) and end (1) and the iteration's end (4), stamped with the
// iteration's 1-based index.
struct StepTraceRecord {  // STEP_TRACE_FMT "BBHLQQQHHHH"
  uint8_t mode, ts_tag;
  uint16_t reserved0;
  uint32_t reserved1;
  uint64_t timestamp, index_id, model_id;
  uint16_t stream_id, task_id, tag_id, reserved2;
};
constexpr uint8_t kStepTraceTag = 10;
constexpr uint16_t kModelStartTag = 0, kModelEndTag = 1, kIterationEndTag = 4;
#pragma pack(pop)

static_assert(sizeof(ApiRecord) == 40 && sizeof(CompactHeader) == 24 && sizeof(NodeBasicInfoRecord) == 64 &&
              sizeof(TaskTrackRecord) == 64 && sizeof(TensorInfoRecord) == 256 && sizeof(NodeAttrInfoRecord) == 64 &&
              sizeof(AicPmuRecord) == 128 && sizeof(AcsqLogRecord) == 64 && sizeof(ContextPmuRecord) == 128 &&
              sizeof(StepTraceRecord) == 40);

// A host record's header is whole and names a known level: what a reader resynchronises on after garbage.
bool IsHostRecord(const std::byte* at);

// The runtime's names for its task types (task_time's kernel_type for tasks without a node).
constexpr std::string_view kKernelAiCore = "KERNEL_AICORE", kKernelAiVec = "KERNEL_AIVEC", kKernelMixAic = "KERNEL_MIX_AIC",
                           kKernelAiCpu = "KERNEL_AICPU", kProfilingEnable = "PROFILING_ENABLE", kProfilingDisable = "PROFILING_DISABLE";

// A string's id in hash_dic: FNV-1a, 64 bits (CANN's ids are opaque; readers only look them up).
uint64_t HashId(std::string_view s);

}  // namespace npu::prof::raw
