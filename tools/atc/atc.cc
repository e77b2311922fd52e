// atc's flag checks and mode dispatch. The conversion itself is libcore's Compile() (compile/compile.h);
// the flags it needs are checked by ParseCompileConfig, the rest here, and every error is reported at once.
#include "atc.h"

#include <ostream>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "kernels/registry.h"
#include "soc/soc_spec.h"

namespace npu::atc {
namespace {

bool IsInspectMode(const std::string& mode) { return mode == "diff" || mode == "verify"; }

// --mode=diff a.om b.om / --mode=verify --om=x.om: the files, nothing else.
std::vector<Status> ValidateInspect(const AtcOptions& o) {
  std::vector<Status> errs;
  for (const Status& e : o.flag_errors)  // the files of diff and verify are positional: only flags are errors
    if (e.reason() == "unknown flag") errs.push_back(e);
  auto files = InspectedFiles(o);
  size_t want = o.mode == "diff" ? 2 : 1;
  if (files.size() != want)
    errs.push_back(Status::Error("E10001", "--mode", o.mode, "needs " + std::to_string(want) + " .om file(s), got " + std::to_string(files.size()),
                                 o.mode == "diff" ? "Use atc --mode=diff a.om b.om." : "Use atc --mode=verify --om=model.om."));
  for (const auto& f : files)
    if (!FileExists(f)) errs.push_back(Status::Error("E13001", "--om", f, "the file does not exist"));
  return errs;
}

// --singleop: a JSON of ops instead of a model.
void ValidateSingleOp(const AtcOptions& o, std::vector<Status>& errs) {
  if (!FileExists(o.singleop)) errs.push_back(Status::Error("E10023", "--singleop", o.singleop, "the file does not exist"));
  if (o.output.empty()) errs.push_back(Status::Error("E10004", "--output", "", "Value for --output (the folder for the .om files) is empty"));
  if (o.soc_version.empty()) errs.push_back(Status::Error("E10007", "--soc_version", "", "--soc_version is required with --singleop"));
  else if (!FindSoc(o.soc_version)) errs.push_back(Status::Error("E10001", "--soc_version", o.soc_version, "supported SoCs are " + SocNames()));
  if (!o.model.empty()) errs.push_back(Status::Error("E10047", "--singleop", o.singleop, "--singleop and --model are mutually exclusive"));
}

// What only mode 0 writes: the .om's path and atc's own output switches.
void ValidateConvertOutputs(const AtcOptions& o, std::vector<Status>& errs) {
  if (o.mode == "0" && o.output.empty()) errs.push_back(Status::Error("E10004", "--output", "", "Value for --output is empty"));
  if (o.display_model_info != "0" && o.display_model_info != "1")
    errs.push_back(Status::Error("E10006", "--display_model_info", o.display_model_info, "the value must be 1 or 0"));
  if (o.save_original_model != "true" && o.save_original_model != "false")
    errs.push_back(Status::Error("E10005", "--save_original_model", o.save_original_model, "the value must be true or false"));
  if (o.external_weight != "0" && o.external_weight != "1" && o.external_weight != "2")
    errs.push_back(Status::Error("E10001", "--external_weight", o.external_weight, "the value must be 0, 1 or 2"));
}

// Modes 1 and 6 read --om (mode 1 with --framework reads a framework model from it).
void ValidateReadModes(const AtcOptions& o, CompileConfig& config, std::vector<Status>& errs) {
  if (o.mode == "1" && !o.framework.empty()) {
    CompileFlags as_model = o;
    as_model.model = o.om;
    std::vector<Status> config_errs;
    config = ParseCompileConfig(as_model, CompileGoal::kReference, config_errs);
    for (auto& e : config_errs)
      if (e.param() != "--model") errs.push_back(e);  // the file is --om's, checked below
  }
  if (o.om.empty()) errs.push_back(Status::Error("E10004", "--om", "", "Value for --om is empty; mode " + o.mode + " reads the model given by --om"));
  else if (!FileExists(o.om)) errs.push_back(Status::Error("E13001", "--om", o.om, "the file does not exist"));
  if (o.mode == "1" && o.json.empty()) errs.push_back(Status::Error("E10004", "--json", "", "Value for --json is empty"));
}

CompileGoal GoalOf(const AtcOptions& o) { return o.mode == "3" ? CompileGoal::kPreCheck : CompileGoal::kConvert; }

}  // namespace

int Fail(std::ostream& out, const std::vector<Status>& errors) {
  out << "ATC run failed, Please check the detail log, Try 'atc --help' for more information\n";
  for (const auto& e : errors) {
    log::RecordError("ATC", e.message());
    out << e.message() << "\n";
  }
  return cli::kFailed;
}

Status WriteJsonFile(const std::string& path, const std::string& text) {
  return WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::vector<std::string> InspectedFiles(const AtcOptions& o) {
  std::vector<std::string> files;
  if (!o.om.empty()) files.push_back(o.om);
  for (const auto& f : o.unknown_flags)
    if (!f.starts_with("-")) files.push_back(f);
  return files;
}

std::vector<Status> ValidateOptions(const AtcOptions& o, CompileConfig* config) {
  CompileConfig unused;
  if (!config) config = &unused;
  if (IsInspectMode(o.mode)) return ValidateInspect(o);
  std::vector<Status> errs;
  errs.insert(errs.end(), o.flag_errors.begin(), o.flag_errors.end());
  if (!o.log.empty() && !log::ParseLevel(o.log))
    errs.push_back(Status::Error("E10010", "--log", o.log, "the log level must be one of debug, info, warning, error, null"));
  if (o.mode != "0" && o.mode != "1" && o.mode != "3" && o.mode != "6") {
    errs.push_back(Status::Error("E10001", "--mode", o.mode,
                                 "only support 0(model to framework model), 1(framework model to json), 3(only pre-check), 6(display model info), "
                                 "diff (two .om files), verify (one .om)"));
    return errs;
  }
  if (!o.singleop.empty()) {
    ValidateSingleOp(o, errs);
    return errs;
  }
  if (o.mode == "0" || o.mode == "3") {
    *config = ParseCompileConfig(o, GoalOf(o), errs);
    ValidateConvertOutputs(o, errs);
  }
  if (o.mode == "1" || o.mode == "6") ValidateReadModes(o, *config, errs);
  return errs;
}

// CANN's ATC appends .om to --output and takes "--output=net.om" as net: the file is net.om, not net.om.om.
AtcOptions WithOutputStem(AtcOptions o) {
  constexpr std::string_view kSuffix = ".om";
  if (o.singleop.empty() && o.output.size() > kSuffix.size() && o.output.ends_with(kSuffix))
    o.output.resize(o.output.size() - kSuffix.size());
  return o;
}

int RunAtc(const AtcOptions& given, std::ostream& out) {
  const AtcOptions o = WithOutputStem(given);
  if (!o.log.empty())
    if (auto l = log::ParseLevel(o.log)) log::SetLevel(*l);
  out << "ATC start working now, please wait for a moment.\n";
  CompileConfig config;
  std::vector<Status> errs = ValidateOptions(o, &config);
  if (!errs.empty()) {
    Fail(out, errs);
    return IsInspectMode(o.mode) ? cli::kUsage : cli::ExitCodeFor(errs);
  }
  RegisterBuiltinOps();  // every mode reads op schemas (work kinds, inference) or kernels (verify)
  if (!o.singleop.empty()) return ConvertSingleOps(o, out);
  if (o.mode == "diff") return DiffModels(InspectedFiles(o)[0], InspectedFiles(o)[1], out);
  if (o.mode == "verify") return VerifyModel(InspectedFiles(o)[0], out);
  if (o.mode == "1") return ToJson(o, config, out);
  if (o.mode == "6") return Display(o.om, out);
  if (o.mode == "3") return PreCheck(o, config, out);
  return Convert(o, config, out);
}

}  // namespace npu::atc
