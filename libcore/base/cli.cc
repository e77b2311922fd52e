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
// The other reasons LeftoverErrors gives: all of them usage errors (exit 2), as an unknown flag is.
constexpr std::string_view kStrayValueReason = "a value with no flag before it";
constexpr std::string_view kOneValueReason = " takes one value; ";
constexpr std::string_view kNoValueReason = " was given no value: ";

// "-mode=6" -> true; "-m", "-1", "--mode", "-" -> false.
bool SingleDashLongFlag(std::string_view a) {
  if (a.size() < 3 || a[0] != '-' || a[1] == '-') return false;
  std::string_view name = a.substr(1, a.find('=') == std::string_view::npos ? std::string_view::npos : a.find('=') - 1);
  return name.size() >= 2 && std::isalpha(static_cast<unsigned char>(name[0])) && std::isalpha(static_cast<unsigned char>(name[1]));
}

std::string Normalised(std::string a) {
  if (a == "--h" || a == "-h") return "--help";
  if (SingleDashLongFlag(a)) return "-" + a;
  return a;
}

// "--model=x" -> "--model"; "-m" -> "-m"; a value -> "".
std::string FlagName(std::string_view a) {
  if (a.size() < 2 || a[0] != '-' || std::isdigit(static_cast<unsigned char>(a[1])) || a[1] == '.') return "";
  return std::string(a.substr(0, a.find('=')));
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// Every flag of the app and its subcommands, spelled "--name" / "-n".
void CollectFlags(const CLI::App& app, std::vector<std::string>& out) {
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
    for (const auto& n : o->get_snames()) out.push_back("-" + n);
  }
  for (const CLI::App* sub : app.get_subcommands({})) CollectFlags(*sub, out);
}

// The tool's flag nearest to an unknown one, when it is near enough to be a slip: '-' for '_', case, one name
// beginning the other, or at most a third of the letters wrong.
std::string NearestFlag(const CLI::App& app, std::string_view flag) {
  auto fold = [](std::string_view f) {
    std::string s(f.substr(f.find_first_not_of('-') == std::string_view::npos ? 0 : f.find_first_not_of('-')));
    for (char& c : s) c = c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  std::vector<std::string> flags;
  CollectFlags(app, flags);
  std::string best;
  size_t best_distance = fold(flag).size() / 3 + 1;
  for (const auto& f : flags) {
    if (f == "--help" || f == "-h") continue;
    const std::string a = fold(flag), b = fold(f);
    // "--output_dir" for "--output": one name begins the other, as a suffix or a truncation would.
    const bool prefix = std::min(a.size(), b.size()) >= 3 && (a.starts_with(b) || b.starts_with(a));
    size_t d = EditDistance(a, b);
    if (prefix) d = std::min<size_t>(d, 1);
    if (d < best_distance) best = f, best_distance = d;
  }
  return best;
}

bool IsFlagOfApp(const CLI::App& app, std::string_view flag) {
  std::vector<std::string> flags;
  CollectFlags(app, flags);
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

Status UnknownFlagNear(const CLI::App& app, std::string_view flag, std::string_view tool, std::string_view code) {
  const std::string name = FlagName(flag).empty() ? std::string(flag) : FlagName(flag);
  const std::string near = NearestFlag(app, name);
  const std::string fix = near.empty() ? "See " + std::string(tool) + " --help for the supported flags."
                                       : "Did you mean " + near + "? See " + std::string(tool) + " --help.";
  return Status::Error(std::string(code), name, "", std::string(kUnknownFlagReason), fix);
}

}  // namespace

std::vector<std::string> Args(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.push_back(Normalised(argv[i]));
  return args;
}

std::vector<std::string> ArgsInOrder(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.push_back(Normalised(argv[i]));
  return args;
}

namespace {

// "--export --output=../prof": CLI11 hands a flag of the tool to the flag before it as its value.
void FlagsTakenAsValues(const CLI::App& app, std::string_view tool, std::string_view code, std::vector<Status>& errors) {
  for (const CLI::Option* o : app.get_options())
    for (const std::string& v : o->results()) {
      const std::string name = FlagName(v);
      if (name.empty() || !IsFlagOfApp(app, name)) continue;
      errors.push_back(Status::Error(std::string(code), o->get_name(), "",
                                     o->get_name() + std::string(kNoValueReason) + "what follows it, " + v + ", is a flag of its own",
                                     "Write " + o->get_name() + "=VALUE (see " + std::string(tool) + " --help for its values)."));
    }
}

// A value (at args[pos] when found there) that no flag took: after a one-value flag ("-m a b": the strays after -m's a), one error
// for that flag however many strays follow it; otherwise a value with no flag.
void StrayValue(const CLI::App& app, const std::vector<std::string>& args, size_t pos, const std::string& value,
                std::string_view tool, std::string_view code, std::vector<Status>& errors) {
  const bool found = pos < args.size();
  size_t first = pos;  // walk back over the other strays to the flag they follow
  while (found && first > 0 && FlagName(args[first - 1]).empty()) --first;
  const std::string flag = found && first > 0 ? FlagName(args[first - 1]) : "";
  if (flag.empty() || !IsFlagOfApp(app, flag) || args[first - 1].find('=') != std::string::npos) {
    errors.push_back(Status::Error(std::string(code), value, "", std::string(kStrayValueReason),
                                   "Put the flag it belongs to before it (see " + std::string(tool) + " --help)."));
    return;
  }
  if (!errors.empty() && errors.back().param() == flag) return;
  size_t given = 0;
  std::string values;
  for (size_t i = first; i < args.size() && FlagName(args[i]).empty(); ++i, ++given) values += (values.empty() ? "" : " ") + args[i];
  errors.push_back(Status::Error(std::string(code), flag, values, flag + std::string(kOneValueReason) + std::to_string(given) + " were given",
                                 "Give one value (a shell pattern such as dump/*/0 may have matched several folders; quote a "
                                 "value that holds spaces)."));
}

}  // namespace

std::vector<Status> LeftoverErrors(const CLI::App& app, const std::vector<std::string>& leftovers,
                                   const std::vector<std::string>& args, std::string_view tool, std::string_view code) {
  std::vector<Status> errors;
  FlagsTakenAsValues(app, tool, code, errors);
  size_t at = 0;      // where in args the previous leftover was found: leftovers keep their order
  std::string owner;  // an unknown flag whose value the next leftover may be
  for (const std::string& left : leftovers) {
    const size_t pos = std::find(args.begin() + static_cast<std::ptrdiff_t>(std::min(at, args.size())), args.end(), left) - args.begin();
    if (pos < args.size()) at = pos + 1;
    if (!FlagName(left).empty()) {
      errors.push_back(UnknownFlagNear(app, left, tool, code));
      owner = left.find('=') == std::string::npos ? left : "";
      continue;
    }
    const bool owned = !owner.empty() && pos < args.size() && pos > 0 && args[pos - 1] == owner;  // "--output_dir o"
    owner.clear();
    if (!owned) StrayValue(app, args, pos, left, tool, code, errors);
  }
  return errors;
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
         s.reason() == kUnknownFlagReason || s.reason() == kStrayValueReason ||
         s.reason().find(kOneValueReason) != std::string::npos || s.reason().find(kNoValueReason) != std::string::npos;
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

int ParseFailed(CLI::App& app, const CLI::ParseError& e, std::string_view tool, std::ostream& out,
                const std::vector<std::string>& args) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e) == 0 ? kOk : kUsage;  // --help, --version
  std::string what = e.what();
  Status s;
  // CLI11 checks what is required before what is left over, so `tool sub --typo` would blame a required flag
  // the user probably did type, and `tool --typo` would ask for a subcommand: the leftover is named instead.
  const std::vector<std::string> left = app.remaining(true);
  if (e.get_name() == "RequiredError" && !left.empty() && left.front().starts_with('-'))
    s = UnknownFlagNear(app, left.front(), tool, "E10001");
  else if (e.get_name() == "RequiredError" && !left.empty())
    s = Status::Error("E10001", left.front(), "", "not a subcommand or argument of " + std::string(tool), "See " + std::string(tool) + " --help.");
  else if (e.get_name() == "RequiredError" && what.starts_with("A subcommand"))
    s = Status::Error("E10007", "subcommand", "", "a subcommand is required", "See " + std::string(tool) + " --help for the subcommands.");
  else if (e.get_name() == "RequiredError")
    s = Status::Error("E10007", what.substr(0, what.find(' ')), "", what, "See " + std::string(tool) + " --help.");
  else if (size_t at = what.find("not expected: "); at != std::string::npos) {  // CLI11's extras, in any context
    std::vector<std::string> extras = left;
    if (extras.empty()) extras.push_back(what.substr(at + 14));
    std::vector<Status> all = LeftoverErrors(app, extras, args, tool, "E10001");
    for (size_t i = 0; i + 1 < all.size(); ++i) out << "[ERROR] " << all[i].message() << "\n";
    s = all.empty() ? UnknownFlag(what.substr(at + 14), tool) : all.back();
  }
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
