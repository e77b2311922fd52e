// A whole transplt run: validate the paths, migrate every Python file of the input (in parallel),
// then write the mirrored tree and the reports into <output>/<name>_msft atomically.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "migrate.h"

namespace transplt {

struct Options {
  std::string input, output, rule_file, report_json;
  bool specify_device = false, similar = false, dry_run = false, diff = false, force = false;
  bool distributed = false;
  std::string main_file, target_model = "model";
  std::string log;  // --log: debug, info, warning, error, null
};

// kDirectory: a folder of the input (recreated); kOmitted: not a file transplt can copy (socket, fifo...).
enum class FileStatus { kMigrated, kUnchanged, kSkipped, kFailed, kCopied, kDirectory, kOmitted };
std::string_view FileStatusName(FileStatus s);

// One change as reported: line numbers and texts resolved against the original file.
struct ChangeRecord {
  uint32_t start_line, end_line, byte_start, byte_end;
  const Edit* edit;
  std::string before;
};

struct FindingRecord {
  uint32_t line, column;
  const Finding* finding;
};

struct NoticeRecord {
  uint32_t line;
  const Notice* notice;
};

struct FileOutcome {
  std::string rel;  // path relative to the input root ("" parent for a single-file input)
  FileStatus status = FileStatus::kCopied;
  std::string reason;             // skipped / failed: why
  uint32_t error_line = 0, error_column = 0;
  Migration migration;
  std::vector<ChangeRecord> changes;
  std::vector<FindingRecord> findings;
  std::vector<NoticeRecord> notices;
  std::string old_utf8, new_utf8;  // decoded texts (diff, report)
  std::string new_bytes;           // what is written when migrated
  uint32_t bom = 0;                // bytes before the UTF-8 text (report spans are file offsets)
};

struct RunResult {
  std::string dest;      // <output>/<name>_msft (_msft_multi with distributed)
  std::string in_root;   // the input folder (a single-file input's folder)
  std::string main_rel;  // distributed -m, relative to in_root
  std::vector<FileOutcome> files;
  size_t changes = 0, findings = 0;
  std::vector<std::string> unmatched_rules;  // -r rules that changed and found nothing
  std::vector<ConfigAdvice> config_advice;   // when some file imports torch
};

// Runs transplt; returns the process exit code (0 done, 1 error, 3 dry run with pending changes).
int RunTransplt(const Options& opts);

// The pieces RunTransplt is made of (kept separate so tests and the bench can call them).
npu::Result<RunResult> MigrateTree(const Options& opts, const RuleSet& rules);
FileOutcome MigrateFile(const std::string& rel, const std::string& raw, const RuleSet& rules, const MigrateOptions& mo);

// Reports (reports.cc).
// The CSV reports of transplant_result_file/, with CANN's columns.
std::string ChangeListCsv(const RunResult& r);       // File, Start Line, End Line, Operation Type, Message
std::string CudaOpListCsv(const RunResult& r);       // File, Api: every CUDA API the migration met
std::string UnsupportedApiCsv(const RunResult& r);   // File, Start Line, End Line, OP, Tips
std::string UnknownApiCsv(const RunResult& r);       // same columns, Tips empty: torch APIs no rule names
std::string PrecisionAdviceCsv(const RunResult& r);  // same columns: calls whose numerics differ on the NPU
std::string PerformanceAdviceCsv(const RunResult& r);  // and calls that could run faster; configuration rows "NA"
std::string LogText(const RunResult& r, const Options& opts);
std::string ReportJson(const RunResult& r, const Options& opts);
std::string SummaryTable(const RunResult& r, const Options& opts);
std::string UnifiedDiff(const FileOutcome& f);
npu::Status WriteUnsupportedXlsx(const RunResult& r, const std::string& path);
std::string DistributedScript(const std::string& main_rel);

}  // namespace transplt
