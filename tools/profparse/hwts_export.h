// profparse on a folder of CANN's own raw device data that holds an HWTS task log (hwts_export.cc).
#pragma once
#include <string>

#include "profparse.h"

namespace npu::profparse {

// Whether `dir` (or its data/ folder) holds an HWTS log in CANN's layout.
bool HoldsHwtsLog(const std::string& dir);
// task_time from every HWTS log there, into dir/mindstudio_profiler_output/. `o.stamp` names the file.
Result<ExportResult> ExportHwtsLog(const std::string& dir, const Options& o);

}  // namespace npu::profparse
