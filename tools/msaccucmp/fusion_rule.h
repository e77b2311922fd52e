// The fusion rule JSON that `atc --mode=1` writes: graph[0].op[] with name, type, id, input
// ("producer:index", or a graph input / weight name) and attr _datadump_original_op_names.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace npu::cmp {

struct FusionOp {
  int64_t id = 0;
  std::string name, type;
  std::vector<std::string> inputs;          // "" for an absent optional input
  std::vector<std::string> original_names;  // the framework ops this op came from
  size_t num_outputs = 0;
};

struct FusionRule {
  std::vector<FusionOp> ops;  // in id order
  std::map<std::string, size_t> by_name;
};

// The JSON `atc --mode=1` wrote, as given to `flag` (-f, -cf).
Result<FusionRule> ReadFusionRule(const std::string& path, const std::string& flag = "-f");

}  // namespace npu::cmp
