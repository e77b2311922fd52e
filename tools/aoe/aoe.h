// libaoe: operator tuning (--job_type=2) and subgraph tuning (--job_type=1, sgat.cc) against the simulator's
// cost model, into the tune banks atc reads.
// main.cc only parses flags.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "compile/compile_config.h"

namespace npu::aoe {

// The model to tune: atc's conversion flags, where the tuned .om goes and the log level.
struct AoeModelOptions : CompileFlags {
  std::string output, log;
};

struct AoeOptions {
  AoeModelOptions model;          // --model, --framework, --soc_version, --input_shape, precision flags, ...
  std::string model_path;         // a directory of models (.onnx) and single-op descriptions (.json), tuned in turn
  std::string singleop;           // a single-op JSON (atc --singleop's format): its ops' tilings
  std::string job_type;           // 1 = subgraph tuning, 2 = operator tuning
  std::optional<std::string> reload;  // --reload[=job folder] (empty: the newest): resume a subgraph tuning job
  std::string tune_ops_file;      // {"tune_ops_name": [...], "tune_ops_type": [...]}
  std::string search = "guided";  // guided | exhaustive
  std::string progress_bar = "on";
  std::string shard;              // "K/N": tune only the ops whose tiling key hashes to shard K of N
  std::string bank_command;       // `aoe bank verify|merge|diff ...`
  std::vector<std::string> bank_args;
  std::vector<std::string> unknown_flags;
  std::vector<Status> flag_errors;  // what unknown_flags mean: cli::LeftoverErrors
};

constexpr const char* kVersion = NPUKIT_TOOL_VERSION("aoe");

std::vector<Status> ValidateOptions(const AoeOptions& o);
int RunAoe(const AoeOptions& o, std::ostream& out);
// `aoe bank verify ROOT`, `aoe bank merge OUT ROOT...`, `aoe bank diff A B`.
int RunBankCommand(const std::string& command, const std::vector<std::string>& args, std::ostream& out);

}  // namespace npu::aoe
