// The fusion rule JSON that `atc --mode=1` writes: graph[0].op[] with name, type, id, input
// ("producer:index", or a graph input / weight name) and attr _datadump_original_op_names. AMCT's
// quantization record (-q) has the same layout.
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
  // A quantize op (int8 out) or an op between it and its dequantize: integer data that no float golden
  // matches. Only models quantized by AMCT have them.
  bool integer = false;
};

struct FusionRule {
  std::vector<FusionOp> ops;  // in id order
  std::map<std::string, size_t> by_name;
};

// The JSON `atc --mode=1` wrote, as given to `flag` (-f, -cf, -q).
Result<FusionRule> ReadFusionRule(const std::string& path, const std::string& flag = "-f");

// -q with -f: `rule` is the offline model of a quantized model, whose original names are ops of the quantized
// model; `record` (AMCT's) says which ops of the model before quantization each of those stands for. Rewrites
// the original names into the names before quantization (an op none of whose names the record knows keeps
// them) and returns how many names the record did not know.
size_t MapThroughQuantRecord(FusionRule& rule, const FusionRule& record);

// The name before quantization of a quantized-model op `name` (its last one), or `name` when unknown.
std::string NameBeforeQuant(const FusionRule& record, const std::string& name);

}  // namespace npu::cmp
