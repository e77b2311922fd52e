// aoe: subgraph and operator tuning against the simulated NPU's cost model.
#include <CLI/CLI.hpp>
#include <iostream>

#include "aoe.h"
#include "base/cli.h"
#include "base/log.h"
#include "frontend/importer.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::aoe::AoeOptions o;
  o.model.framework = "5";
  CLI::App app{"aoe: tune subgraph decisions and operator tilings on the simulated NPU's cost model; results go to the tune banks atc reads (TUNE_BANK_PATH)", "aoe"};
  app.allow_extras();
  app.set_version_flag("--version", npu::aoe::kVersion);
  app.add_option("--job_type,-j", o.job_type, "1 = subgraph tuning (fusion, L2, stream and core-split decisions), 2 = operator tuning (tilings)");
  std::string reload_dir;
  auto* reload = app.add_option("--reload", reload_dir, "resume an interrupted subgraph tuning job (default: the newest in aoe_workspace/)")
                     ->expected(0, 1);
  app.add_option("--model,-m", o.model.model, "model: " + npu::ModelFileKinds());
  app.add_option("--model_path", o.model_path, "directory of models (.onnx) and single-op descriptions (.json) tuned in one batch");
  app.add_option("--singleop", o.singleop, "single-op JSON as atc --singleop reads it: tune those ops' tilings (--job_type=2)");
  app.add_option("--framework,-f", o.model.framework, npu::SupportedFrameworks());
  app.add_option("--weight", o.model.weight, "Caffe: the .caffemodel of --model");
  app.add_option("--soc_version", o.model.soc_version, "target SoC, e.g. Ascend310P3");
  app.add_option("--soc_spec", o.model.soc_spec, "platform .ini of your own chip");
  app.add_option("--input_shape", o.model.input_shape, "as in atc");
  app.add_option("--output", o.model.output, "write the tuned .om here (path without .om)");
  app.add_option("--tune_ops_file", o.tune_ops_file, R"(JSON {"tune_ops_name": [...], "tune_ops_type": [...]}: tune only these)");
  app.add_option("--search", o.search, "guided (default) or exhaustive (the check)");
  app.add_option("--progress_bar", o.progress_bar, "on (default, terminals only) or off");
  app.add_option("--shard", o.shard, "K/N, auto or auto/N (from a Slurm array or Kubernetes Indexed Job): tune only shard K of N (by tiling key); merge the banks with aoe bank merge");
  auto* bank = app.add_subcommand("bank", "verify ROOT | merge OUT ROOT... | diff A B (exit 3 when they differ)");
  bank->add_option("command", o.bank_command, "verify, merge or diff")->required();
  bank->add_option("args", o.bank_args, "bank roots");
  app.add_option("--log", o.model.log, "debug, info, warning, error, null");
  npu::AddCompileTuningFlags(app, o.model);  // precision and fusion flags as in atc
  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);
  try {
    app.parse(npu::cli::Args(argc, argv));
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "aoe", std::cout, args);
  }
  o.unknown_flags = app.remaining();
  o.flag_errors = npu::cli::LeftoverErrors(app, o.unknown_flags, args, "aoe", "EG0000");
  if (reload->count() > 0) o.reload = reload_dir;
  return npu::cli::RunGuarded("aoe", std::cout, [&] { return npu::aoe::RunAoe(o, std::cout); });
}
