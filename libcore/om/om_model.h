// A converted model in memory (graph, tasks, model attributes) and its .om serialisation.
// Loading maps the file and lets weight tensors alias it: nothing is copied.
#pragma once
#include <map>
#include <string>

#include "ir/graph.h"
#include "lower/lower.h"
#include "om/om_file.h"

namespace npu {

struct OmModel {
  Graph graph;
  std::vector<Task> tasks;
  std::map<std::string, std::string> attrs;  // atc_cmdline, atc_version, soc_version, framework_type, ...
  om::HeaderInfo header;
  // Partition sizes (for --mode=6).
  size_t model_def_size = 0, weight_size = 0, task_info_size = 0;
};

Status SaveOm(const std::string& path, const OmModel& model);
Result<OmModel> LoadOm(const std::string& path);

}  // namespace npu
