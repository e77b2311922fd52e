// The "dump" section of acl.json (msame --acl_json_path), as CANN defines it:
//   {"dump": {"dump_path": "out", "dump_list": [{"model_name": "m", "layer": ["op1"]}],
//             "dump_mode": "input|output|all", "dump_op_switch": "on|off",
//             "dump_step": "0|3-5|10", "dump_debug": "on|off", "dump_scene": "lite_exception"}}
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace npu::debug {

struct DumpConfig {
  bool dump_data = false;   // a dump_list is present: dump op inputs/outputs
  bool dump_debug = false;  // overflow records
  bool exception = false;   // dump_scene lite_exception: a faulting task's inputs and outputs (an exception dump)
  std::string path;
  bool inputs = false, outputs = true;  // from dump_mode
  bool all_steps = true;
  std::vector<std::pair<uint64_t, uint64_t>> steps;  // inclusive ranges from dump_step
  struct Entry {
    std::string model_name;
    std::vector<std::string> layers;  // empty: every op
  };
  std::vector<Entry> list;
  std::vector<std::string> warnings;  // unknown keys and the like, printed but not fatal

  bool StepSelected(uint64_t step) const;
  // Where exception dumps go: dump_path, else extra-info/data-dump under the working directory (CANN's default).
  std::string ExceptionPath() const { return path.empty() ? "extra-info/data-dump" : path; }
  // The layers to dump for this model: nullptr = dump nothing, empty set = every op.
  const Entry* EntryFor(const std::string& model_name) const;
};

// Every mistake in the file is reported in one Status (EC0013), not just the first.
Result<DumpConfig> ParseDumpConfig(const std::string& path);
Result<std::vector<std::pair<uint64_t, uint64_t>>> ParseDumpStep(const std::string& s);

}  // namespace npu::debug
