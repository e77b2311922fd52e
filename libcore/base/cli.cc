#include "base/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <new>
#include <ostream>
#include <stdexcept>

#include "base/log.h"

namespace npu::cli {
namespace {

constexpr std::string_view kUnknownFlagReason = "unknown flag";

// "-mode=6" -> true; "-m", "-1", "--mode", "-" -> false.
bool SingleDashLongFlag(std::string_view a) {
  if (a.size() < 3 || a[0] != '-' || a[1] == '-') return false;
  std::string_view name = a.substr(1, a.find('=') == std::string_view::npos ? std::string_view::npos : a.find('=') - 1);
  return name.size() >= 2 && std::isalpha(static_cast<unsigned char>(name[0])) && std::isalpha(static_cast<unsigned char>(name[1]));
}

}  // namespace

std::vector<std::string> Args(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    std::string a = argv[i];
    if (a == "--h" || a == "-h") a = "--help";
    else if (SingleDashLongFlag(a)) a = "-" + a;
    args.push_back(std::move(a));
  }
  return args;
}

Status UnknownFlag(std::string_view flag, std::string_view tool, std::string_view code) {
  return Status::Error(std::string(code), std::string(flag.substr(0, flag.find('='))), "", std::string(kUnknownFlagReason),
                       "See " + std::string(tool) + " --help for the supported flags.");
}

bool IsUsageError(const Status& s) {
  if (s.ok()) return false;
  // E10004 empty / E10007 missing required parameter / E10057 a flag that needs another; EG0000 is aoe's
  // usage error (its codes are EGxxxx).
  static constexpr std::string_view kUsageCodes[] = {"E10004", "E10007", "E10057", "EG0000"};
  return std::find(std::begin(kUsageCodes), std::end(kUsageCodes), s.code()) != std::end(kUsageCodes) ||
         s.reason() == kUnknownFlagReason;
}

int ExitCodeFor(const std::vector<Status>& errors) {
  if (errors.empty()) return kOk;
  return std::any_of(errors.begin(), errors.end(), IsUsageError) ? kUsage : kFailed;
}

Status ApplyLogFlag(std::string_view value) {
  if (value.empty()) return Status::Ok();
  auto level = log::ParseLevel(value);
  if (!level) return Status::Error("E10010", "--log", std::string(value), "the log level must be one of debug, info, warning, error, null");
  log::SetLevel(*level);
  return Status::Ok();
}

int ParseFailed(CLI::App& app, const CLI::ParseError& e, std::string_view tool, std::ostream& out) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e) == 0 ? kOk : kUsage;  // --help, --version
  std::string what = e.what();
  Status s;
  // CLI11 checks what is required before what is left over, so `tool sub --typo` would blame a required flag
  // the user probably did type, and `tool --typo` would ask for a subcommand: the leftover is named instead.
  const std::vector<std::string> left = app.remaining(true);
  if (e.get_name() == "RequiredError" && !left.empty() && left.front().starts_with('-'))
    s = UnknownFlag(left.front(), tool);
  else if (e.get_name() == "RequiredError" && !left.empty())
    s = Status::Error("E10001", left.front(), "", "not a subcommand or argument of " + std::string(tool), "See " + std::string(tool) + " --help.");
  else if (e.get_name() == "RequiredError" && what.starts_with("A subcommand"))
    s = Status::Error("E10007", "subcommand", "", "a subcommand is required", "See " + std::string(tool) + " --help for the subcommands.");
  else if (e.get_name() == "RequiredError")
    s = Status::Error("E10007", what.substr(0, what.find(' ')), "", what, "See " + std::string(tool) + " --help.");
  else if (size_t at = what.find("not expected: "); at != std::string::npos)  // CLI11's extras, in any context
    s = UnknownFlag(what.substr(at + 14), tool);
  else
    s = Status::Error("E10001", "command line", "", what, "See " + std::string(tool) + " --help.");
  out << "[ERROR] " << s.message() << "\n";
  return kUsage;
}

int RunGuarded(std::string_view tool, std::ostream& out, const std::function<int()>& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    PrintError(out, Status::Error("E19002", std::string(tool), "memory", "an allocation failed"));
  } catch (const std::exception& e) {
    PrintError(out, Status::Error("E19999", std::string(tool), e.what(), "an unexpected exception reached the top of the tool"));
  }
  return kFailed;
}

void PrintError(std::ostream& out, const Status& error) {
  out << "[ERROR] " << error.message() << "\n";
  log::RecordError("TOOL", error.message());
}

}  // namespace npu::cli
