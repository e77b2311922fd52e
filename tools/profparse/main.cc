// profparse: msprof-style export of npukit's raw profiling data (PROF_*/).
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/cli.h"
#include "base/log.h"
#include "profparse.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::profparse::Options o;
  CLI::App app{"profparse: export npukit profiling data (PROF_*) as msprof does: op_summary, op_statistic, task_time, step_trace, timeline", "profparse"};
  app.allow_extras();
  app.set_version_flag("--version", npu::profparse::kVersion);
  app.add_option("--export", o.exp, "on: write mindstudio_profiler_output/ in each PROF_* directory");
  app.add_option("--parse", o.parse, "on: check the raw data and print its model and iterations");
  app.add_option("--query", o.query, "on: print the Job Info / Model ID / Iteration table");
  app.add_option("--output", o.output, "a PROF_* directory or the folder holding them");
  app.add_option("--model-id", o.model_id, "export one model (with --iteration-id)");
  app.add_option("--iteration-id", o.iteration_id, "export one iteration (1-based, with --model-id)");
  app.add_option("--summary-format", o.summary_format, "csv (default) or json");
  app.add_option("--type", o.type, "text (default: CSV or JSON tables and the timeline) or db (msprof_<ts>.db, SQLite)");
  app.add_option("--cann_version,--cann-version", o.cann_version,
                 "the CANN version whose msprof the tables follow: 8.5 (default; Block Dim) or latest (msprof 26.x; Block Num)");
  app.add_option("--timeline-per-iteration", o.timeline_per_iteration, "on: one msprof_*.json per iteration");
  app.add_option("--log", o.log, "debug, info, warning, error, null");
  app.add_option("--stamp", o.stamp, "timestamp in the output file names (default: now)");
  auto* diff = app.add_subcommand("diff", "compare two profiles: per-op and per-type deltas, top regressions");
  diff->add_option("profiles", o.diff, "A B (PROF_* directories or folders holding one)")->expected(0, 2);
  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);
  try {
    app.parse(npu::cli::Args(argc, argv));
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "profparse", std::cout, args);
  }
  o.unknown_flags = app.remaining();
  o.flag_errors = npu::cli::LeftoverErrors(app, o.unknown_flags, args, "profparse", "E10001");
  o.diff_mode = diff->parsed();
  return npu::cli::RunGuarded("profparse", std::cout, [&] { return npu::profparse::RunProfparse(o, std::cout); });
}
