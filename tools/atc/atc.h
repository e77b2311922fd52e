// libatc: everything `atc` does, callable from tests. main.cc only parses flags into AtcOptions.
#pragma once
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/input_shape.h"
#include "ir/tensor.h"
#include "om/om_model.h"
#include "passes/precision.h"

namespace npu::atc {

struct AtcOptions {
  std::string mode = "0", model, framework, output, soc_version, input_shape, input_format, out_nodes, log, json, om;
  std::string check_report;  // default: $ASCEND_WORK_PATH/check_result.json, else ./check_result.json
  PrecisionFlags precision;
  std::string fusion_switch_file, explain_precision;
  std::string buffer_optimize = "l2_optimize";  // l2_optimize | l1_optimize | off_optimize (no subgraph bank)
  std::string soc_spec;  // --soc_spec: a platform .ini of the user's own chip (its SoC_version names it)
  std::string dynamic_batch_size, dynamic_image_size, dynamic_dims;  // shape profiles (profiles.cc)
  std::string insert_op_conf;  // static AIPP config (aipp_op prototxt)
  std::string singleop;        // single-op JSON: one .om per op into --output (a folder)
  std::string input_fp16_nodes;                 // "in1;in2": inputs given as fp16
  std::string is_input_adjust_hw_layout;        // "true,false": per fp16 input, NC1HWC0 data
  std::string is_output_adjust_hw_layout;       // "true,false": per --out_nodes output, fp16 NC1HWC0
  std::string display_model_info = "0";         // 1: print the --mode=6 summary after converting
  std::string save_original_model = "false";    // true: also <output>_original.om (before fusion/precision/formats)
  std::string external_weight = "0";  // 0 weights in the .om, 1 weight/weight_<hash> files, 2 one combined file
  std::vector<std::string> unknown_flags;
  std::string cmdline;  // the effective command line, stored in the .om
};

constexpr const char* kVersion = "npukit atc 0.1.0";

// --dynamic_batch_size / --dynamic_image_size / --dynamic_dims against --input_shape (empty: a static model).
Result<ShapeProfiles> ParseShapeProfiles(const AtcOptions& o);
// "node:0;node2:1" -> [(node, 0), (node2, 1)]; a missing ":idx" means output 0.
Result<std::vector<std::pair<std::string, int>>> ParseOutNodes(std::string_view spec);
// ONNX -> the task list `atc` would write with the subgraph bank's decisions but the built-in tilings (no
// operator bank): what operator tuning tunes, after subgraph tuning as CANN orders them.
Result<OmModel> BuildModel(const AtcOptions& o, std::vector<std::string>& warnings);
// BuildModel in two steps, for aoe's subgraph tuning, which compiles one imported graph with many decisions:
// the framework model as Ascend IR before fusion (folded, shapes inferred, Ascend types) ...
Result<Graph> ImportGraph(const AtcOptions& o, OnnxModelInfo& info);
// ... and the rest (fusion, precision, formats, lowering), without the banks.
Result<OmModel> CompileGraph(Graph g, const AtcOptions& o, const OnnxModelInfo& info, std::vector<std::string>& warnings);
// The --precision_mode name the flags select on `soc` (part of the subgraph bank's key).
Result<std::string> PrecisionModeOf(const AtcOptions& o, const SocSpec& soc);
// Every problem with the flags, not just the first.
std::vector<Status> ValidateOptions(const AtcOptions& o);

// --mode=diff / --mode=verify (inspect.cc): exit 0 identical / sound, 1 different / broken, 2 unreadable.
int DiffModels(const std::string& a, const std::string& b, std::ostream& out);
int VerifyModel(const std::string& path, std::ostream& out);
// The .om files of those modes: --om and the positional arguments.
std::vector<std::string> InspectedFiles(const AtcOptions& o);

// Every op description of a single-op JSON as one model of independent tasks (what aoe --singleop tunes).
Result<OmModel> BuildSingleOpsModel(const AtcOptions& o, const std::string& path);
// --singleop: one .om per op description (singleop.cc); returns the exit code.
int ConvertSingleOps(const AtcOptions& o, std::ostream& out);

// Runs the requested mode; prints progress to `out`, errors to `err`; returns the exit code.
int RunAtc(const AtcOptions& o, std::ostream& out, std::ostream& err);

}  // namespace npu::atc
