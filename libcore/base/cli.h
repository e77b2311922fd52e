// What every tool's main repeats, in one place: CANN's flag spellings and the exit-code contract.
#pragma once
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace CLI {
class App;
class ParseError;
}  // namespace CLI

namespace npu::cli {

// The exit codes of every tool: 0 done, 1 failed (a bad value, file or model, or the work went wrong),
// 2 bad usage (an unknown flag, a required flag missing) or nothing to do.
enum ExitCode : int { kOk = 0, kFailed = 1, kUsage = 2 };

// argv (without the program name) as CANN's tools accept it, reversed as CLI11's parse(vector) wants it:
// a single dash before a multi-letter name is a long flag ("-mode=6", "-out dir" as "--mode=6", "--out dir"),
// and "--h" / "-h" ask for help. One-letter short flags ("-m x") and negative numbers stay as they are.
std::vector<std::string> Args(int argc, char** argv);

// The error for a flag the tool does not have ("--bogus=1" is named as "--bogus"), under the tool's usage
// code, and whether an error is one of usage (exit 2) rather than of a value (exit 1).
Status UnknownFlag(std::string_view flag, std::string_view tool, std::string_view code = "E10001");
// What was left over after parsing, each as the user would want it told (all usage errors, exit 2): a flag the
// tool does not have, with the nearest one it does have ("--input-shape": did you mean --input_shape?), its value
// belonging to it rather than reported apart; and a stray value after a flag that takes one ("-m a b": -m takes
// one value; 2 were given). `args` is argv without the program name, in order (as Args() reads it).
std::vector<Status> LeftoverErrors(const CLI::App& app, const std::vector<std::string>& leftovers,
                                   const std::vector<std::string>& args, std::string_view tool,
                                   std::string_view code = "E10001");
// argv without the program name, in order, with CANN's spellings normalised as Args() does.
std::vector<std::string> ArgsInOrder(int argc, char** argv);
bool IsUsageError(const Status& s);
// The exit code for errors found before any work: kUsage if any is a usage error, else kFailed.
int ExitCodeFor(const std::vector<Status>& errors);
// A CLI11 parse failure reported as every other error (coded, naming the flag) on `out`: kUsage; --help
// and --version print as CLI11 does and give kOk.
// `args`: ArgsInOrder(argc, argv), to tell a stray value from an unknown flag.
int ParseFailed(CLI::App& app, const CLI::ParseError& e, std::string_view tool, std::ostream& out,
                const std::vector<std::string>& args = {});
// Prints "[ERROR] <message>" to `out` (every tool's error line) and keeps it in the plog file (log::RecordError).
void PrintError(std::ostream& out, const Status& error);
// Runs a tool's body with the last line of defence every main shares: an allocation that fails anywhere is
// E19002 (exit 1), any other escaped exception E19999 naming it (exit 1); never an abort.
int RunGuarded(std::string_view tool, std::ostream& out, const std::function<int()>& body);
// --log=<level> (empty: keep ASCEND_GLOBAL_LOG_LEVEL's): sets the level, or E10010 for a level that does not exist.
Status ApplyLogFlag(std::string_view value);

}  // namespace npu::cli
