// Precision assignment, the way CANN's ATC decides it: the precision mode, the SoC family's mixed-precision
// lists (with --modify_mixlist), --keep_dtype, --customize_dtypes, the impl-mode flags and --output_type pick
// each op's dtype; Cast nodes appear where a dtype changes and weights are converted once. Every op records
// the chain of rules that decided it (_precision_reason; atc --explain-precision).
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"
#include "soc/soc_spec.h"

namespace npu {

enum class PrecisionMode { kForceFp16, kAllowFp32ToFp16, kMixFp16, kMixBf16, kAllowFp32ToBf16, kOrigin, kCubeFp16InFp32Out };

// The flags as the user typed them (file paths, lists).
struct PrecisionFlags {
  std::string precision_mode, precision_mode_v2, modify_mixlist, keep_dtype, customize_dtypes;
  std::string op_select_implmode, optypelist_for_implmode, op_precision_mode, output_type;
};

struct MixList {
  std::set<std::string, std::less<>> white, black;  // everything else is gray
};

struct DtypeOverride {
  std::vector<std::optional<DType>> inputs, outputs;  // by position; nullopt = leave as the mode decides
};

struct PrecisionConfig {
  PrecisionMode mode = PrecisionMode::kForceFp16;
  std::string mode_name = "force_fp16";  // as given, for the reason chain
  const SocSpec* soc = nullptr;
  MixList lists;
  std::set<std::string, std::less<>> mixlist_named;  // op types --modify_mixlist mentions (reported when absent)
  std::set<std::string, std::less<>> keep_names, keep_types;
  std::map<std::string, DtypeOverride, std::less<>> custom_by_name, custom_by_type;
  std::string implmode = "high_performance";
  std::set<std::string, std::less<>> implmode_types;  // empty: the implmode applies as its own name says
  std::map<std::string, std::string, std::less<>> op_mode_by_type, op_mode_by_name;  // --op_precision_mode
  std::optional<DType> output_type;
  // --output_type="node:idx:FP16;...": per net output, by the node (or an op it absorbed) and output index.
  std::map<std::pair<std::string, int64_t>, DType> output_type_by_node;
};

// Reads and checks every precision flag; all mistakes go to `errors` (coded, naming the flag and value).
PrecisionConfig LoadPrecisionConfig(const PrecisionFlags& flags, const SocSpec& soc, std::vector<Status>& errors);
// The built-in lists of a SoC family (libcore/passes/mixlist/<family>.json).
Result<MixList> BuiltinMixList(std::string_view ops_family);
bool IsMixedMode(PrecisionMode m);

// The pass: assigns dtypes, inserts Casts, converts weights and records reasons. Names in the config that
// match no node (or op types that occur nowhere) are returned as warnings.
Status AssignPrecision(Graph& g, const PrecisionConfig& cfg, std::vector<std::string>& warnings);

}  // namespace npu
