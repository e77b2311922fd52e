// transplt: migrate PyTorch GPU training scripts to the NPU build of PyTorch (torch_npu).
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/cli.h"
#include "base/version.h"
#include "base/log.h"
#include "project.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  CLI::App app{"transplt: migrate PyTorch GPU scripts to the NPU (torch_npu); writes <output>/<name>_msft/", "transplt"};
  app.set_version_flag("--version", NPUKIT_TOOL_VERSION("transplt"));
  transplt::Options o;
  bool list_rules = false;
  app.add_option("-i,--input", o.input, "Python file or folder to migrate (never written to)");
  app.add_option("-o,--output", o.output, "folder that receives <name>_msft/ (not inside the input)");
  app.add_option("-r,--rule", o.rule_file, "custom rule JSON (ArgsModifyRule, FuncNameModifyRule, ModuleNameModifyRule)");
  app.add_flag("-s,--specify-device", o.specify_device, "pin the device from the DEVICE_ID environment variable");
  app.add_flag("--sim,--similar", o.similar, "replace unsupported APIs by similar ones (reported as such)");
  app.add_flag("--dry-run", o.dry_run, "write nothing; print the summary; exit 3 when changes are pending");
  app.add_flag("--diff", o.diff, "print a unified diff of every change to stdout (summary goes to stderr)");
  app.add_option("--report-json", o.report_json, "write every change and finding (rule id, span, before/after) to FILE");
  app.add_flag("--force", o.force, "replace an existing <name>_msft result folder");
  app.add_option("--log", o.log, "debug, info, warning, error, null (also ASCEND_GLOBAL_LOG_LEVEL)");
  app.add_flag("--list-rules", list_rules, "print the built-in rules with their ids and exit");
  auto* dist = app.add_subcommand("distributed", "turn a single-card script into a multi-card (DDP over hccl) one; give it last");
  dist->add_option("-m,--main", o.main_file, "the training entry script (inside the input)")->required();
  dist->add_option("-t,--target_model,--target-model", o.target_model, "the model variable (default: model)");

  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);

  try {
    app.parse(npu::cli::Args(argc, argv));  // the original tool spells -sim with one dash
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "transplt", std::cerr, args);
  }
  if (list_rules) {
    std::cout << transplt::RuleSet::Builtin(o.similar).Describe();
    return 0;
  }
  o.distributed = static_cast<bool>(*dist);
  return npu::cli::RunGuarded("transplt", std::cerr, [&] { return transplt::RunTransplt(o); });
}
