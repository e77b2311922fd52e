// libatc: the atc command line over libcore's Compile(). main.cc parses flags into AtcOptions; RunAtc checks
// them all at once and runs the mode, each in its own file (convert.cc, precheck.cc, to_json.cc, display.cc,
// singleop.cc, inspect.cc).
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "compile/compile_config.h"

namespace npu::atc {

// The conversion flags (CompileFlags) plus what selects and shapes atc's own outputs.
struct AtcOptions : CompileFlags {
  std::string mode = "0", output, log, json, om;
  std::string check_report;  // default: $ASCEND_WORK_PATH/check_result.json, else ./check_result.json
  std::string explain_precision;
  std::string singleop;                       // single-op JSON: one .om per op into --output (a folder)
  std::string display_model_info = "0";       // 1: print the --mode=6 summary after converting
  std::string save_original_model = "false";  // true: also <output>_original.om (before fusion/precision/formats)
  std::string external_weight = "0";  // 0 weights in the .om, 1 weight/weight_<hash> files, 2 one combined file
  std::vector<std::string> unknown_flags;
  std::vector<Status> flag_errors;  // what unknown_flags mean: cli::LeftoverErrors
};

constexpr const char* kVersion = NPUKIT_TOOL_VERSION("atc");

// Every problem with the flags, not just the first; `config` receives the conversion's (modes 0, 1, 3).
std::vector<Status> ValidateOptions(const AtcOptions& o, CompileConfig* config = nullptr);
// Runs the requested mode; prints progress and errors to `out`; returns the exit code.
int RunAtc(const AtcOptions& o, std::ostream& out);

// The modes (one file each); each returns the exit code.
int Convert(const AtcOptions& o, const CompileConfig& config, std::ostream& out);  // mode 0
int PreCheck(const AtcOptions& o, const CompileConfig& config, std::ostream& out);  // mode 3
int ToJson(const AtcOptions& o, const CompileConfig& config, std::ostream& out);   // mode 1
int Display(const std::string& om, std::ostream& out);                               // mode 6
int ConvertSingleOps(const AtcOptions& o, std::ostream& out);                        // --singleop
// --mode=diff / --mode=verify (inspect.cc): exit 0 identical / sound, 1 different / broken, 2 unreadable.
int DiffModels(const std::string& a, const std::string& b, std::ostream& out);
int VerifyModel(const std::string& path, std::ostream& out);
// The .om files of those modes: --om and the positional arguments.
std::vector<std::string> InspectedFiles(const AtcOptions& o);

// What every mode prints on failure: CANN's line, then each error. Returns 1.
int Fail(std::ostream& out, const std::vector<Status>& errors);
// Writes `j` (any nlohmann JSON text) atomically; strings that are not UTF-8 are replaced, never thrown on.
Status WriteJsonFile(const std::string& path, const std::string& text);
// The pre-check report (mode 3 always; mode 0 when ops are unsupported) and where it went.
Status WriteCheckReport(const AtcOptions& o, const ModelInfo& info, const Status& import_status, std::ostream& out);

}  // namespace npu::atc
