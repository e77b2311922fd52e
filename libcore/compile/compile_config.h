// CompileConfig: everything that shapes a conversion, parsed and checked once from the flags. atc, aoe and
// msame's .onnx reference path fill CompileFlags from their command lines, call ParseCompileConfig (which
// reports every flag error at once) and hand the result to Compile(); nothing downstream reads a flag string.
#pragma once
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "frontend/importer.h"
#include "ir/aipp_config.h"
#include "ir/shape_profiles.h"
#include "passes/precision.h"
#include "passes/qdq.h"
#include "soc/soc_spec.h"

namespace CLI {
class App;
}  // namespace CLI

namespace npu {

// The conversion flags as typed, CANN's names and spellings (atc and aoe bind their options to these).
struct CompileFlags {
  std::string model, framework, soc_version;
  std::string weight;    // --weight: Caffe's .caffemodel
  std::string soc_spec;  // --soc_spec: a platform .ini of the user's own chip (its SoC_version names it)
  std::string input_shape, input_format, out_nodes;
  std::string dynamic_batch_size, dynamic_image_size, dynamic_dims;  // shape profiles
  std::string insert_op_conf;              // static AIPP config (aipp_op prototxt)
  std::string input_fp16_nodes;            // "in1;in2": inputs given as fp16
  std::string is_input_adjust_hw_layout;   // "true,false": per fp16 input, NC1HWC0 data
  std::string is_output_adjust_hw_layout;  // "true,false": per --out_nodes output, fp16 NC1HWC0
  PrecisionFlags precision;
  std::string fusion_switch_file;
  std::string buffer_optimize = "l2_optimize";  // l2_optimize | l1_optimize | off_optimize (no subgraph bank)
  std::string qdq_fallback = "error";           // error | float: a QDQ layer that cannot be quantized (passes/qdq.h)
  std::string enable_single_stream = "false";   // true: every task on stream 0 (no default branch streams)
  std::string enable_small_channel = "0";       // 1: a conv of <= 4 channels after static AIPP reads NC1HWC0_C04
  std::string dump_after;                       // "PassA,PassB" or "all": the graph after those passes, as text
  std::string cmdline;                          // the effective command line, stored in the .om
};

// The flags of the precision and fusion groups ("Model Tuning", "Operator Tuning"), for atc and aoe.
void AddCompileTuningFlags(CLI::App& app, CompileFlags& flags);

// What the caller is about to do decides which flags it needs.
enum class CompileGoal {
  kConvert,    // atc --mode=0, aoe: a .om for a SoC
  kPreCheck,   // atc --mode=3: import only, but for a SoC
  kReference,  // atc --mode=1 on a model, msame's .onnx path: the framework graph, no SoC
};

struct CompileConfig {
  CompileGoal goal = CompileGoal::kConvert;
  std::string framework = "5";
  const Importer* importer = nullptr;
  std::string model;
  ImportOptions import;                   // input shapes and output selection
  std::string input_format;               // the inputs' recorded layout (empty: by rank)
  ShapeProfiles profiles;                 // empty for a static model
  std::vector<InputRange> input_ranges;   // inputs with a min~max dim (a dynamic-shape model)
  std::vector<std::string> fp16_inputs;   // --input_fp16_nodes
  std::vector<bool> fp16_inputs_nc1hwc0;  // per fp16 input: data in NC1HWC0
  std::vector<bool> nc1hwc0_outputs;      // per --out_nodes output: fp16 NC1HWC0
  std::vector<AippConfig> aipp;
  std::shared_ptr<const SocSpec> soc;     // null for the reference goal
  std::string soc_spec_text;              // --soc_spec's file, carried in the .om
  PrecisionConfig precision;
  std::set<std::string> fusion_off;       // passes --fusion_switch_file turns off
  QdqOptions qdq;                         // --qdq_fallback
  bool single_stream = false;             // --enable_single_stream=true: no parallel branch streams
  bool small_channel = false;             // --enable_small_channel=1: C04 layouts after static AIPP
  std::vector<std::string> notes;         // warnings parsing produced (unknown pass names)
  std::string tune_bank_path;             // TUNE_BANK_PATH (ATC reads only that variable, as CANN's does)
  bool subgraph_bank = true;              // apply the subgraph bank's decisions (off with off_optimize)
  bool operator_bank = true;              // apply the operator bank's tilings
  std::set<std::string> dump_after;       // pass names, or "all"
  bool verify_passes = false;             // Graph::Verify after every pass (NPUKIT_VERIFY_PASSES=1; on in tests)
  std::string cmdline;
};

// The framework_type a single-op JSON's models record.
constexpr const char* kSingleOpFramework = "singleop";

// Parses and checks the flags for `goal`; every problem goes to `errors` (coded, naming flag and value).
CompileConfig ParseCompileConfig(const CompileFlags& flags, CompileGoal goal, std::vector<Status>& errors);
// The same for callers with one error to return.
Result<CompileConfig> MakeCompileConfig(const CompileFlags& flags, CompileGoal goal);

// The config of a single-op JSON's models (atc/aoe --singleop): the SoC, the operator bank, the command line.
Result<CompileConfig> SingleOpConfig(const CompileFlags& flags);

// --dynamic_batch_size / --dynamic_image_size / --dynamic_dims against --input_shape (empty: a static model).
Result<ShapeProfiles> ParseShapeProfiles(const CompileFlags& flags);
// "node:0;node2:1" -> [(node, 0), (node2, 1)]; a missing ":idx" means output 0.
Result<std::vector<std::pair<std::string, int>>> ParseOutNodes(std::string_view spec);
// The chip --soc_spec's file or --soc_version names.
Result<std::shared_ptr<const SocSpec>> TargetSoc(const CompileFlags& flags);

}  // namespace npu
