// libprofparse: msprof's export interface over npukit's raw profiling data. main.cc only parses flags.
#pragma once
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/version.h"

namespace npu::profparse {

struct Options {
  std::string exp = "off", parse = "off", query = "off";  // --export / --parse / --query
  std::string output;                                     // a PROF_* directory or the folder holding them
  std::string model_id, iteration_id;                      // --model-id / --iteration-id (together)
  std::string summary_format = "csv";                      // csv | json
  std::string cann_version = "8.5";                        // whose column names the tables follow (msprof_tables.h)
  std::string type = "text";                               // text: CSV/JSON tables and the timeline; db: msprof_<ts>.db
  std::string timeline_per_iteration = "off";              // on: msprof_<dev>_<model>_<iter>_<ts>.json each
  std::string stamp;                                       // file-name timestamp (default: now); tests pin it
  std::string log;
  bool diff_mode = false;                                  // `profparse diff A B`
  std::vector<std::string> diff;                           // its A and B
  std::vector<std::string> unknown_flags;
  std::vector<Status> flag_errors;  // what unknown_flags mean: cli::LeftoverErrors
};

constexpr const char* kVersion = NPUKIT_TOOL_VERSION("profparse");

std::vector<Status> ValidateOptions(const Options& o);
int RunProfparse(const Options& o, std::ostream& out);

// Per PROF dir: writes mindstudio_profiler_output/ and returns the files written.
struct ExportResult {
  std::vector<std::string> files;
  uint64_t tasks = 0, iterations = 0, raw_bytes = 0;
  std::vector<std::string> warnings;
};
Result<ExportResult> ExportProfile(const std::string& prof_dir, const Options& o);
// `profparse diff A B`: per-op and per-type deltas of two profiles, aligned by op sequence.
int DiffProfiles(const std::string& a, const std::string& b, std::ostream& out);

}  // namespace npu::profparse
