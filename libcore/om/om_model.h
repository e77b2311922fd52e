// A converted model in memory (graph, tasks, model attributes) and its .om serialisation.
// Loading maps the file and lets weight tensors alias it: nothing is copied.
#pragma once
#include <map>
#include <string>

#include "frontend/importer.h"
#include "ir/graph.h"
#include "ir/shape_profiles.h"
#include "lower/lower.h"
#include "om/om_file.h"

namespace npu {

// One more profile's graph and tasks (profile 0 lives in OmModel::graph/tasks when saving).
struct ProfileGraph {
  Graph graph;
  std::vector<Task> tasks;
};

struct OmModel {
  Graph graph;  // the profile loaded (profile 0 of a static model)
  std::vector<Task> tasks;
  ShapeProfiles profiles;
  std::vector<InputRange> input_ranges;  // inputs with a ranged dim; Session::Run checks them
  size_t profile = 0;
  std::vector<ProfileGraph> other_profiles;  // saving only: profiles 1..n-1
  // Saving: 0 weights inside the .om; 1 one file per weight, weight/weight_<hash> next to the .om; 2 all of
  // them in <om name>_weight_combined next to it (atc --external_weight, as CANN names the files).
  int external_weight = 0;
  std::map<std::string, std::string> attrs;  // atc_cmdline, atc_version, soc_version, framework_type, ...
  om::HeaderInfo header;
  bool cann_built = false;                   // read from an .om CANN's ATC wrote (om/ge_model.h)
  std::vector<UnsupportedNode> unrunnable;  // its ops no npukit kernel computes
  // Partition sizes (for --mode=6).
  size_t model_def_size = 0, weight_size = 0, task_info_size = 0, tbe_kernels_size = 0;
};

Status SaveOm(const std::string& path, const OmModel& model);
// Loads profile `profile` of a model with shape profiles (0 for a static model).
Result<OmModel> LoadOm(const std::string& path, size_t profile = 0);

}  // namespace npu
