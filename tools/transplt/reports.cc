// The reports of a run, in transplant_result_file/ as CANN's current transplt writes them: change_list.csv,
// cuda_op_list.csv, unsupported_api.csv, unknown_api.csv, the two advice CSVs, msFmkTranspltlog.txt (and
// unsupported_op.xlsx); plus the JSON report, the unified diff, the summary table and the multi-card script.
#include <xlsxwriter.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json.h"
#include "base/csv.h"
#include "project.h"
#include "source_text.h"

namespace transplt {
namespace {

std::string Now() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&t, &tm);
  std::ostringstream os;
  os << std::put_time(&tm, "%Y-%m-%d %H:%M:%S");
  return os.str();
}

std::string_view NoticeKindName(Notice::Kind k) {
  return k == Notice::kUnknownApi ? "unknown_api" : k == Notice::kPrecision ? "precision" : "performance";
}

size_t CountNotices(const RunResult& r, Notice::Kind k) {
  size_t n = 0;
  for (const FileOutcome& f : r.files)
    for (const NoticeRecord& x : f.notices) n += x.notice->kind == k;
  return n;
}

size_t Count(const RunResult& r, FileStatus s) {
  size_t n = 0;
  for (const FileOutcome& f : r.files) n += f.status == s;
  return n;
}

// A Python file transplt looked at (as opposed to folders and other files it only copies).
bool Scanned(const FileOutcome& f) {
  return f.status == FileStatus::kMigrated || f.status == FileStatus::kUnchanged || f.status == FileStatus::kSkipped ||
         f.status == FileStatus::kFailed;
}

size_t CountScanned(const RunResult& r) { return std::count_if(r.files.begin(), r.files.end(), Scanned); }

std::string Where(const FileOutcome& f) {
  return f.error_line ? f.rel + ":" + std::to_string(f.error_line) + ":" + std::to_string(f.error_column) : f.rel;
}

}  // namespace

// One row per change a user would name: a rewrite that splices a line in several places (a from-import's
// module and name) is one row, not one per splice (the JSON report keeps every splice). CANN's five columns,
// then the rule that made the change (its id in --list-rules).
std::string ChangeListCsv(const RunResult& r) {
  std::string out = "File,Start Line,End Line,Operation Type,Message,Rule\n", last;
  for (const FileOutcome& f : r.files)
    for (const ChangeRecord& c : f.changes) {
      std::string row = npu::CsvCell(f.rel) + "," + std::to_string(c.start_line) + "," + std::to_string(c.end_line) + "," +
                        std::string(OpTypeName(c.edit->op)) + "," + npu::CsvCell(c.edit->message) + "," + npu::CsvCell(c.edit->rule) + "\n";
      if (row != last) out += row;
      last = std::move(row);
    }
  return out;
}

// Every CUDA API the migration met: the original text of each change that touched one, and each unsupported
// API whose name says cuda.
std::string CudaOpListCsv(const RunResult& r) {
  std::string out = "File,Api\n";
  for (const FileOutcome& f : r.files) {
    for (const ChangeRecord& c : f.changes)
      if (c.before.find("cuda") != std::string::npos) out += npu::CsvCell(f.rel) + "," + npu::CsvCell(c.before) + "\n";
    for (const FindingRecord& x : f.findings)
      if (x.finding->api.find("cuda") != std::string::npos) out += npu::CsvCell(f.rel) + "," + npu::CsvCell(x.finding->api) + "\n";
  }
  return out;
}

constexpr const char* kApiColumns = "File,Start Line,End Line,OP,Tips\n";

std::string UnsupportedApiCsv(const RunResult& r) {
  std::string out = kApiColumns;
  for (const FileOutcome& f : r.files)
    for (const FindingRecord& x : f.findings) {
      std::string tips = x.finding->reason + (x.finding->suggestion.empty() ? "" : "; " + x.finding->suggestion);
      out += npu::CsvCell(f.rel) + "," + std::to_string(x.line) + "," + std::to_string(x.line) + "," + npu::CsvCell(x.finding->api) + "," +
             npu::CsvCell(tips) + "\n";
    }
  return out;
}

namespace {

std::string NoticeCsv(const RunResult& r, Notice::Kind kind) {
  std::string out = kApiColumns;
  for (const FileOutcome& f : r.files)
    for (const NoticeRecord& x : f.notices)
      if (x.notice->kind == kind)
        out += npu::CsvCell(f.rel) + "," + std::to_string(x.line) + "," + std::to_string(x.line) + "," + npu::CsvCell(x.notice->api) + "," +
               npu::CsvCell(x.notice->tip) + "\n";
  return out;
}

}  // namespace

// transplt keeps no list of the torch APIs torch_npu supports (CANN ships one per torch release), so this is
// every torch API a file calls that no rule of transplt's names: the ones nobody has vouched for.
std::string UnknownApiCsv(const RunResult& r) { return NoticeCsv(r, Notice::kUnknownApi); }
std::string PrecisionAdviceCsv(const RunResult& r) { return NoticeCsv(r, Notice::kPrecision); }
std::string PerformanceAdviceCsv(const RunResult& r) {
  std::string out = NoticeCsv(r, Notice::kPerformance);
  for (const ConfigAdvice& c : r.config_advice) out += "NA,NA,NA," + npu::CsvCell(c.setting) + "," + npu::CsvCell(c.tip) + "\n";
  return out;
}

npu::Status WriteUnsupportedXlsx(const RunResult& r, const std::string& path) {
  lxw_workbook* wb = workbook_new(path.c_str());
  if (!wb) return npu::Status::Error("E13004", "unsupported_op.xlsx", path, "cannot create the workbook", "");
  lxw_worksheet* ws = workbook_add_worksheet(wb, "unsupported_op");
  lxw_format* bold = workbook_add_format(wb);
  format_set_bold(bold);
  const char* head[] = {"File", "Line", "API", "Reason", "Suggestion"};
  const double widths[] = {40, 8, 40, 60, 60};
  for (lxw_col_t c = 0; c < 5; ++c) {
    worksheet_write_string(ws, 0, c, head[c], bold);
    worksheet_set_column(ws, c, c, widths[c], nullptr);
  }
  lxw_row_t row = 1;
  for (const FileOutcome& f : r.files)
    for (const FindingRecord& x : f.findings) {
      worksheet_write_string(ws, row, 0, f.rel.c_str(), nullptr);
      worksheet_write_number(ws, row, 1, x.line, nullptr);
      worksheet_write_string(ws, row, 2, x.finding->api.c_str(), nullptr);
      worksheet_write_string(ws, row, 3, x.finding->reason.c_str(), nullptr);
      worksheet_write_string(ws, row, 4, x.finding->suggestion.c_str(), nullptr);
      ++row;
    }
  worksheet_freeze_panes(ws, 1, 0);
  // The rewrites, as change_list.csv lists them, each with its rule.
  lxw_worksheet* changes = workbook_add_worksheet(wb, "change_list");
  const char* change_head[] = {"File", "Start Line", "End Line", "Operation Type", "Message", "Rule"};
  const double change_widths[] = {40, 10, 10, 14, 80, 10};
  for (lxw_col_t c = 0; c < 6; ++c) {
    worksheet_write_string(changes, 0, c, change_head[c], bold);
    worksheet_set_column(changes, c, c, change_widths[c], nullptr);
  }
  row = 1;
  const ChangeRecord* last = nullptr;
  for (const FileOutcome& f : r.files)
    for (const ChangeRecord& c : f.changes) {
      if (last && last->start_line == c.start_line && last->end_line == c.end_line && last->edit->op == c.edit->op &&
          last->edit->message == c.edit->message && last->edit->rule == c.edit->rule)
        continue;  // one row per rewrite, as in the CSV
      last = &c;
      worksheet_write_string(changes, row, 0, f.rel.c_str(), nullptr);
      worksheet_write_number(changes, row, 1, c.start_line, nullptr);
      worksheet_write_number(changes, row, 2, c.end_line, nullptr);
      worksheet_write_string(changes, row, 3, std::string(OpTypeName(c.edit->op)).c_str(), nullptr);
      worksheet_write_string(changes, row, 4, c.edit->message.c_str(), nullptr);
      worksheet_write_string(changes, row, 5, c.edit->rule.c_str(), nullptr);
      ++row;
    }
  worksheet_freeze_panes(changes, 1, 0);
  if (lxw_error e = workbook_close(wb); e != LXW_NO_ERROR)
    return npu::Status::Error("E13004", "unsupported_op.xlsx", path, lxw_strerror(e), "");
  return {};
}

std::string LogText(const RunResult& r, const Options& opts) {
  std::string out, now = Now(), progress;  // progress changes once per file, so it is formatted once per file
  size_t done = 0, total = CountScanned(r);
  auto set_progress = [&] {
    char buf[48] = "";
    if (total) std::snprintf(buf, sizeof buf, "[Progress: %.2f%%] ", 100.0 * static_cast<double>(done) / total);
    progress = buf;
  };
  set_progress();
  auto line = [&](const char* level, const std::string& msg) {
    ((((out += now) += " [") += level) += "] ");
    ((out += progress) += msg) += '\n';
  };
  line("INFO", "transplt " + opts.input + " -> " + r.dest + (opts.specify_device ? " -s" : "") +
                   (opts.similar ? " -sim" : "") + (opts.distributed ? " distributed -m " + opts.main_file + " -t " + opts.target_model : ""));
  for (const std::string& id : r.unmatched_rules) line("WARNING", "custom rule " + id + " matched nothing in the input");
  for (const FileOutcome& f : r.files) {
    if (f.status == FileStatus::kOmitted) line("WARNING", f.rel + " " + f.reason);
    if (!Scanned(f)) continue;
    ++done;
    set_progress();
    switch (f.status) {
      case FileStatus::kSkipped: line("WARNING", f.rel + " skipped: " + f.reason); break;
      case FileStatus::kFailed: line("WARNING", Where(f) + " " + f.reason); break;
      case FileStatus::kUnchanged: line("INFO", f.rel + " needs no change"); break;
      default: line("INFO", f.rel + " migrated: " + std::to_string(f.changes.size()) + " changes"); break;
    }
    for (const ChangeRecord& c : f.changes)
      line("INFO", "line: " + std::to_string(c.start_line) + " ~ " + std::to_string(c.end_line) + "  Operation Type: " +
                       std::string(OpTypeName(c.edit->op)) + "  Rule: " + c.edit->rule + "  Message: " + c.edit->message);
    for (const FindingRecord& x : f.findings)
      line("WARNING", f.rel + ":" + std::to_string(x.line) + " unsupported API " + x.finding->api + ": " + x.finding->reason);
    for (const std::string& n : f.migration.notes) line("WARNING", f.rel + ": " + n);
  }
  return out;
}

std::string ReportJson(const RunResult& r, const Options& opts) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["tool"] = "transplt";
  j["input"] = opts.input;
  j["output"] = r.dest;
  j["dry_run"] = opts.dry_run;
  ordered_json files = ordered_json::array();
  for (const FileOutcome& f : r.files) {
    if (!Scanned(f)) continue;
    ordered_json o;
    o["file"] = f.rel;
    o["status"] = FileStatusName(f.status);
    if (!f.reason.empty()) o["reason"] = f.reason;
    if (f.error_line) o["error"] = {{"line", f.error_line}, {"column", f.error_column}};
    ordered_json changes = ordered_json::array();
    for (const ChangeRecord& c : f.changes)
      changes.push_back({{"rule", c.edit->rule}, {"operation", OpTypeName(c.edit->op)}, {"start_line", c.start_line},
                         {"end_line", c.end_line}, {"span", {c.byte_start, c.byte_end}}, {"before", c.before},
                         {"after", c.edit->text}, {"message", c.edit->message}});
    o["changes"] = std::move(changes);
    ordered_json findings = ordered_json::array();
    for (const FindingRecord& x : f.findings)
      findings.push_back({{"rule", x.finding->rule}, {"line", x.line}, {"column", x.column}, {"api", x.finding->api},
                          {"reason", x.finding->reason}, {"suggestion", x.finding->suggestion}});
    o["findings"] = std::move(findings);
    ordered_json notices = ordered_json::array();
    for (const NoticeRecord& x : f.notices)
      notices.push_back({{"kind", NoticeKindName(x.notice->kind)}, {"rule", x.notice->rule}, {"line", x.line}, {"api", x.notice->api}, {"tip", x.notice->tip}});
    o["notices"] = std::move(notices);
    o["notes"] = f.migration.notes;
    files.push_back(std::move(o));
  }
  j["files"] = std::move(files);
  j["unmatched_custom_rules"] = r.unmatched_rules;
  ordered_json config = ordered_json::array();
  for (const ConfigAdvice& c : r.config_advice) config.push_back({{"rule", c.id}, {"setting", c.setting}, {"tip", c.tip}});
  j["config_advice"] = std::move(config);
  j["summary"] = {{"files_scanned", CountScanned(r)},
                  {"files_changed", Count(r, FileStatus::kMigrated)},
                  {"files_unchanged", Count(r, FileStatus::kUnchanged)},
                  {"files_skipped", Count(r, FileStatus::kSkipped)},
                  {"files_failed", Count(r, FileStatus::kFailed)},
                  {"changes", r.changes},
                  {"unsupported", r.findings},
                  {"unknown_apis", CountNotices(r, Notice::kUnknownApi)},
                  {"precision_advice", CountNotices(r, Notice::kPrecision)},
                  {"performance_advice", CountNotices(r, Notice::kPerformance)}};
  return npu::DumpJson(j, 2) + "\n";
}

std::string SummaryTable(const RunResult& r, const Options& opts) {
  std::map<std::string, size_t> by_rule, by_api;
  for (const FileOutcome& f : r.files) {
    for (const ChangeRecord& c : f.changes) ++by_rule[c.edit->rule];
    for (const FindingRecord& x : f.findings) ++by_api[x.finding->api];
  }
  std::ostringstream os;
  auto row = [&](const std::string& k, size_t v) { os << "  " << std::left << std::setw(52) << k << std::right << std::setw(8) << v << "\n"; };
  os << "transplt: " << opts.input << " -> " << r.dest << (opts.dry_run ? "  (dry run: nothing written)" : "") << "\n";
  row("python files scanned", CountScanned(r));
  row("  changed", Count(r, FileStatus::kMigrated));
  row("  unchanged", Count(r, FileStatus::kUnchanged));
  row("  skipped (binary, encoding, link)", Count(r, FileStatus::kSkipped));
  row("  failed (syntax errors, copied as is)", Count(r, FileStatus::kFailed));
  row("other files copied", Count(r, FileStatus::kCopied));
  row("changes", r.changes);
  row("unsupported API uses", r.findings);
  row("torch APIs no rule knows (unknown_api.csv)", CountNotices(r, Notice::kUnknownApi));
  row("precision advice", CountNotices(r, Notice::kPrecision));
  row("performance advice", CountNotices(r, Notice::kPerformance) + r.config_advice.size());
  if (!by_rule.empty()) os << "changes by rule:\n";
  for (const auto& [k, v] : by_rule) row("  " + k, v);
  if (!by_api.empty()) os << "unsupported APIs:\n";
  for (const auto& [k, v] : by_api) row("  " + k, v);
  for (const FileOutcome& f : r.files) {
    if (f.status == FileStatus::kSkipped || f.status == FileStatus::kFailed || f.status == FileStatus::kOmitted)
      os << "  " << FileStatusName(f.status) << ": " << Where(f) << ": " << f.reason << "\n";
    for (const std::string& n : f.migration.notes) os << "  review: " << f.rel << ": " << n << "\n";
  }
  for (const std::string& id : r.unmatched_rules) os << "  [WARNING] custom rule " << id << " matched nothing in the input\n";
  return os.str();
}

// Hunks come straight from the edits: each group of edits touching nearby lines is one hunk.
std::string UnifiedDiff(const FileOutcome& f) {
  const std::string& old = f.old_utf8;
  LineIndex lines(old);
  auto line_text = [&](uint32_t l) {
    size_t s = lines.LineStart(l), e = l < lines.LineCount() ? lines.LineStart(l + 1) : old.size();
    return std::string_view(old).substr(s, e - s);
  };
  auto emit = [](std::ostringstream& os, char tag, std::string_view text) {
    os << tag << text;
    if (text.empty() || text.back() != '\n') os << "\n\\ No newline at end of file\n";
  };
  struct Group { uint32_t first, last; size_t begin, end; };  // lines, edit index range
  std::vector<Group> groups;
  const auto& edits = f.migration.edits;
  for (size_t i = 0; i < edits.size(); ++i) {
    uint32_t a = lines.LineOf(edits[i].start), b = edits[i].end > edits[i].start ? lines.LineOf(edits[i].end - 1) : a;
    // Whole lines inserted before line a replace no old line.
    if (edits[i].start == edits[i].end && lines.LineStart(a) == edits[i].start && !edits[i].text.empty() &&
        edits[i].text.back() == '\n')
      b = a - 1;
    if (!groups.empty() && a <= groups.back().last + 1) {
      groups.back().last = std::max(groups.back().last, b);
      groups.back().end = i + 1;
    } else {
      groups.push_back({a, b, i, i + 1});
    }
  }
  std::ostringstream os;
  os << "--- a/" << f.rel << "\n+++ b/" << f.rel << "\n";
  const uint32_t ctx = 3, n_lines = old.empty() || old.back() == '\n' ? lines.LineCount() - 1 : lines.LineCount();
  long shift = 0;  // new line numbers run ahead of old ones by this much
  for (size_t g = 0; g < groups.size();) {
    size_t h = g;  // groups [g, h] form one hunk
    while (h + 1 < groups.size() && groups[h + 1].first <= groups[h].last + 2 * ctx + 1) ++h;
    uint32_t from = groups[g].first > ctx ? groups[g].first - ctx : 1;
    uint32_t to = std::min<uint32_t>(groups[h].last + ctx, std::max<uint32_t>(n_lines, 1));
    std::ostringstream body;
    long added = 0, removed = 0, context = 0;
    uint32_t at = from;
    for (size_t k = g; k <= h; ++k) {
      for (; at < groups[k].first; ++at, ++context) emit(body, ' ', line_text(at));
      size_t s = lines.LineStart(groups[k].first);
      size_t e = groups[k].last < lines.LineCount() ? lines.LineStart(groups[k].last + 1) : old.size();
      std::string repl;
      size_t pos = s;
      for (size_t x = groups[k].begin; x < groups[k].end; ++x) {
        repl.append(old, pos, edits[x].start - pos);
        repl += edits[x].text;
        pos = edits[x].end;
      }
      repl.append(old, pos, e - pos);
      for (uint32_t l = groups[k].first; l <= groups[k].last; ++l, ++removed) emit(body, '-', line_text(l));
      for (size_t p = 0; p < repl.size();) {
        size_t nl = repl.find('\n', p);
        size_t q = nl == std::string::npos ? repl.size() : nl + 1;
        emit(body, '+', std::string_view(repl).substr(p, q - p));
        ++added;
        p = q;
      }
      at = groups[k].last + 1;
    }
    for (; at <= to; ++at, ++context) emit(body, ' ', line_text(at));
    os << "@@ -" << from << "," << (removed + context) << " +" << (from + shift) << "," << (added + context) << " @@\n"
       << body.str();
    shift += added - removed;
    g = h + 1;
  }
  return os.str();
}

std::string DistributedScript(const std::string& main_rel) {
  return "#!/bin/bash\n"
         "# Generated by transplt: starts one training process per NPU of this machine.\n"
         "# Set NPUS to the devices to use; extra arguments are passed to the training script.\n"
         "export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}\n"
         "export MASTER_PORT=${MASTER_PORT:-29688}\n"
         "export HCCL_WHITELIST_DISABLE=1\n"
         "NPUS=${NPUS:-\"0 1 2 3 4 5 6 7\"}\n"
         "export RANK_SIZE=$(echo $NPUS | wc -w)\n"
         "cd \"$(dirname \"$0\")\"\n"
         "rank=0\n"
         "for i in $NPUS; do\n"
         "  export DEVICE_ID=$i\n"
         "  export RANK_ID=$rank\n"
         "  nohup python3 '" + main_rel + "' \"$@\" > output_npu_${i}.log 2>&1 &\n"
         "  rank=$((rank + 1))\n"
         "done\n"
         "wait\n";
}

}  // namespace transplt
