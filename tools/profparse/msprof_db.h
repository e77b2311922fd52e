// --type=db: msprof_<ts>.db, the SQLite export of CANN 8.x that MindStudio Insight and msprof-analyze's db modes
// read, with the tables and columns of msprof's "Profile Data File Reference (DB)" (Ascend/msprof
// docs/en/user_guide/profile_data_file_references_db.md; schema version 1.2.0 of its db_constant.h): every string
// is an id into STRING_IDS, times are Unix ns.
//   TASK (startNs, endNs, deviceId, connectionId, globalTaskId, globalPid, taskType, contextId, streamId, taskId,
//   modelId), COMPUTE_TASK_INFO (name, globalTaskId, blockNum, mixBlockNum, taskType, opType, input/output
//   formats, dtypes, shapes, attrInfo, opState, hf32Eligible), TASK_PMU_INFO (globalTaskId, name, value), CANN_API,
//   AICORE_FREQ, SESSION_TIME_INFO, NPU_INFO, HOST_INFO, ENUM_API_TYPE, STRING_IDS, META_DATA.
// Written with Debian's libsqlite3 into a temporary file renamed into place when complete.
#pragma once
#include <string>

#include "profparse.h"

namespace npu::profparse {

// Writes mindstudio_profiler_output/msprof_<stamp>.db for one PROF directory.
Result<ExportResult> ExportDb(const std::string& prof_dir, const Options& o);

}  // namespace npu::profparse
