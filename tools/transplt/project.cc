#include "project.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <regex>
#include <set>
#include <system_error>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/thread_pool.h"
#include "edit_safety.h"
#include "source_text.h"
#include "syntax.h"

namespace fs = std::filesystem;

namespace transplt {
namespace {

// Where CANN's current transplt puts its reports, inside the result folder.
constexpr std::string_view kResultDir = "transplant_result_file";
// Top-level entries of an earlier run's result (this layout's and the older one's), never copied as input.
bool IsEarlierReport(const std::string& rel) {
  static constexpr std::string_view kOld[] = {"msFmkTranspltlog.txt", "change_list.csv", "unsupported_op.xlsx", "run_distributed_npu.sh"};
  return rel == kResultDir || (rel.starts_with(kResultDir) && rel.size() > kResultDir.size() && rel[kResultDir.size()] == '/') ||
         std::find(std::begin(kOld), std::end(kOld), rel) != std::end(kOld);
}

npu::Status PathError(const char* code, const char* param, const std::string& value, std::string why, std::string fix) {
  return npu::Status::Error(code, param, value, std::move(why), std::move(fix));
}

bool IsInside(const fs::path& child, const fs::path& parent) {
  auto c = child.begin(), p = parent.begin();
  for (; p != parent.end(); ++p, ++c)
    if (c == child.end() || *c != *p) return false;
  return true;
}

// Resolves the change and finding positions against the original text.
void Locate(FileOutcome& f) {
  LineIndex lines(f.old_utf8);
  for (const Edit& e : f.migration.edits) {
    uint32_t sl = lines.LineOf(e.start), el = e.end > e.start ? lines.LineOf(e.end - 1) : sl;
    f.changes.push_back({sl, el, e.start + f.bom, e.end + f.bom, &e, f.old_utf8.substr(e.start, e.end - e.start)});
  }
  for (const Finding& x : f.migration.findings) {
    uint32_t l = lines.LineOf(x.offset);
    f.findings.push_back({l, static_cast<uint32_t>(x.offset - lines.LineStart(l) + 1), &x});
  }
  for (const Notice& x : f.migration.notices) f.notices.push_back({lines.LineOf(x.offset), &x});
}

TSPoint PointAt(const LineIndex& lines, uint32_t offset) {
  uint32_t line = lines.LineOf(offset);
  return TSPoint{line - 1, static_cast<uint32_t>(offset - lines.LineStart(line))};
}

TSPoint Advance(TSPoint p, std::string_view text) {
  size_t nl = text.rfind('\n');
  if (nl == std::string_view::npos) return TSPoint{p.row, p.column + static_cast<uint32_t>(text.size())};
  return TSPoint{p.row + static_cast<uint32_t>(std::count(text.begin(), text.end(), '\n')),
                 static_cast<uint32_t>(text.size() - nl - 1)};
}

// Parses the migrated text reusing the original tree: only the edited regions are parsed again.
Tree ReparseEdited(const TSTree* tree, std::string_view old_text, const std::vector<Edit>& edits, std::string_view new_text) {
  Tree copy(ts_tree_copy(tree));
  LineIndex lines(old_text);
  for (auto e = edits.rbegin(); e != edits.rend(); ++e) {  // last first, so earlier offsets stay valid
    TSInputEdit in{};
    in.start_byte = e->start;
    in.old_end_byte = e->end;
    in.new_end_byte = e->start + static_cast<uint32_t>(e->text.size());
    in.start_point = PointAt(lines, e->start);
    in.old_end_point = PointAt(lines, e->end);
    in.new_end_point = Advance(in.start_point, e->text);
    ts_tree_edit(copy.get(), &in);
  }
  return ParsePython(new_text, copy.get());
}

}  // namespace

std::string_view FileStatusName(FileStatus s) {
  switch (s) {
    case FileStatus::kMigrated: return "migrated";
    case FileStatus::kUnchanged: return "unchanged";
    case FileStatus::kSkipped: return "skipped";
    case FileStatus::kFailed: return "failed";
    case FileStatus::kCopied: return "copied";
    case FileStatus::kDirectory: return "directory";
    case FileStatus::kOmitted: return "omitted";
  }
  return "copied";
}

FileOutcome MigrateFile(const std::string& rel, const std::string& raw, const RuleSet& rules, const MigrateOptions& mo) {
  FileOutcome f;
  f.rel = rel;
  auto decoded = DecodeSource(raw);
  if (auto* p = std::get_if<DecodeProblem>(&decoded)) {
    f.status = FileStatus::kSkipped;
    f.reason = p->reason;
    return f;
  }
  SourceText src = std::move(std::get<SourceText>(decoded));
  f.bom = src.bom ? 3 : 0;
  Tree tree = ParsePython(src.utf8);
  TSNode root = ts_tree_root_node(tree.get());
  if (auto err = FirstSyntaxError(root)) {
    f.status = FileStatus::kFailed;
    f.error_line = err->line;
    f.error_column = err->column;
    f.reason = "syntax error; copied unchanged";
    return f;
  }
  f.migration = Migrate(src.utf8, root, rules, mo);
  f.old_utf8 = std::move(src.utf8);
  Locate(f);
  if (f.migration.edits.empty()) {
    f.status = FileStatus::kUnchanged;
    return f;
  }
  f.new_utf8 = ApplyEdits(f.old_utf8, f.migration.edits);
  // Never hand back a file that no longer parses: that would be a rule bug, so keep the original.
  // Only edits that could change the syntax call for parsing the result again.
  bool recheck = std::any_of(f.migration.edits.begin(), f.migration.edits.end(),
                             [&](const Edit& e) { return !KeepsSyntax(e, f.old_utf8, root); });
  Tree check = recheck ? ReparseEdited(tree.get(), f.old_utf8, f.migration.edits, f.new_utf8) : nullptr;
  if (auto err = check ? FirstSyntaxError(ts_tree_root_node(check.get())) : std::nullopt) {
    f.status = FileStatus::kFailed;
    f.reason = "migrated text would not parse (line " + std::to_string(err->line) + "); copied unchanged, please report";
    f.migration.edits.clear();
    f.changes.clear();
    return f;
  }
  auto encoded = EncodeSource(src, f.new_utf8);
  if (auto* p = std::get_if<DecodeProblem>(&encoded)) {
    f.status = FileStatus::kSkipped;
    f.reason = p->reason;
    f.migration.edits.clear();
    f.changes.clear();
    return f;
  }
  f.new_bytes = std::move(std::get<std::string>(encoded));
  f.status = FileStatus::kMigrated;
  return f;
}

// The project file `from <written> import *` in file `rel` names: a module beside the file or under the input's
// root (`pkg.mod` -> pkg/mod.py or pkg/mod/__init__.py), or, with leading dots, relative to the file's package.
std::optional<size_t> StarTarget(const std::string& rel, std::string written, const std::map<std::string, size_t>& by_rel) {
  fs::path dir = fs::path(rel).parent_path();
  std::vector<fs::path> bases;
  if (!written.empty() && written[0] == '.') {
    size_t dots = written.find_first_not_of('.');
    if (dots == std::string::npos) dots = written.size();
    for (size_t up = 1; up < dots; ++up) dir = dir.parent_path();
    bases = {dir};
    written = written.substr(dots);
  } else {
    bases = {dir, fs::path()};
  }
  std::replace(written.begin(), written.end(), '.', '/');
  for (const fs::path& b : bases)
    for (const fs::path& cand : {b / (written + ".py"), b / written / "__init__.py"})
      if (auto it = by_rel.find(cand.lexically_normal().string()); it != by_rel.end()) return it->second;
  return std::nullopt;
}

// What `from <file> import *` brings in: the file's module-level imports, and what its own star imports bring.
void StarExports(size_t i, const std::vector<FileOutcome>& files, const std::map<std::string, size_t>& by_rel,
                 std::set<size_t>& seen, std::vector<std::pair<std::string, std::string>>& out) {
  if (!seen.insert(i).second) return;
  const Migration& m = files[i].migration;
  out.insert(out.end(), m.top_imports.begin(), m.top_imports.end());
  for (const std::string& s : m.star_modules)
    if (auto t = StarTarget(files[i].rel, s, by_rel)) StarExports(*t, files, by_rel, seen, out);
}

bool ReachesTorch(const std::vector<std::pair<std::string, std::string>>& names) {
  return std::any_of(names.begin(), names.end(), [](const auto& n) { return IsTorchRoot(n.second.substr(0, n.second.find('.'))); });
}

npu::Result<RunResult> MigrateTree(const Options& opts, const RuleSet& rules) {
  std::error_code ec;
  fs::path in = opts.input;
  auto st = fs::symlink_status(in, ec);
  if (ec || !fs::exists(st))
    return PathError("ET0001", "--input", opts.input, "the path does not exist", "Give an existing Python file or folder.");
  bool single = fs::is_regular_file(st);
  if (!single && !fs::is_directory(st))
    return PathError("ET0001", "--input", opts.input, "not a regular file or a folder (symbolic links are not followed)",
                     "Give the real path of a Python file or folder.");
  fs::path in_abs = fs::weakly_canonical(fs::absolute(in));
  fs::path out_abs = fs::weakly_canonical(fs::absolute(opts.output));
  fs::path in_root = single ? in_abs.parent_path() : in_abs;
  if (!single && IsInside(out_abs, in_abs))
    return PathError("ET0002", "--output", opts.output, "the output folder is inside the input folder " + in_abs.string(),
                     "Choose an output folder outside the input tree; transplt never writes into its input.");
  if (fs::exists(out_abs, ec) && !fs::is_directory(out_abs, ec))
    return PathError("ET0002", "--output", opts.output, "exists and is not a folder", "Give a folder for the output.");
  std::string name = single ? in_abs.stem().string() : in_abs.filename().string();
  RunResult r;
  r.dest = (out_abs / (name + (opts.distributed ? "_msft_multi" : "_msft"))).string();
  if (!opts.dry_run && fs::exists(r.dest, ec) && !opts.force)
    return PathError("ET0002", "--output", r.dest, "the result folder already exists",
                     "Pass --force to replace it, or choose another --output.");
  // Said once the input and output check out, naming the folder the result will be in.
  if (npu::log::ShowInfo()) std::cerr << "[INFO] migrating " << opts.input << " into " << r.dest << "\n";

  // The files to handle, in a stable order.
  std::vector<std::pair<std::string, fs::file_type>> entries;
  if (single) {
    entries.emplace_back(in_abs.filename().string(), fs::file_type::regular);
  } else {
    fs::recursive_directory_iterator it(in_abs, fs::directory_options::none, ec), end;
    if (ec) return PathError("E13002", "--input", opts.input, ec.message(), "Check the folder's permissions.");
    for (; it != end; it.increment(ec)) {
      if (ec) return PathError("E13002", "--input", it->path().string(), ec.message(), "Check the folder's permissions.");
      entries.emplace_back(it->path().lexically_relative(in_abs).string(), it->symlink_status().type());
    }
    std::sort(entries.begin(), entries.end());
    // Reports of an earlier run (transplt on its own output) are replaced by this run's, not copied.
    std::erase_if(entries, [](const auto& e) { return IsEarlierReport(e.first); });
  }
  if (opts.distributed) {
    fs::path m = fs::weakly_canonical(fs::absolute(opts.main_file));
    if (!fs::is_regular_file(m) || m.extension() != ".py" || !IsInside(m, in_root))
      return PathError("ET0004", "distributed -m", opts.main_file,
                       "the main file must be an existing .py file inside the input", "Give the training entry script.");
  }
  r.in_root = in_root.string();
  if (opts.distributed) r.main_rel = fs::relative(fs::weakly_canonical(fs::absolute(opts.main_file)), in_root).string();

  auto options_for = [&](const std::string& rel, MigrateOptions::StarImports star) {
    MigrateOptions mo;
    mo.specify_device = opts.specify_device || opts.distributed;
    mo.distributed = opts.distributed;
    mo.main_file = opts.distributed && rel == r.main_rel;
    mo.target_model = opts.target_model;
    mo.star_imports = std::move(star);
    return mo;
  };
  r.files.resize(entries.size());
  std::vector<std::string> unreadable(entries.size());
  npu::ThreadPool::Global().ParallelFor(entries.size(), 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      const auto& [rel, type] = entries[i];
      FileOutcome& f = r.files[i];
      f.rel = rel;
      if (type == fs::file_type::directory) {
        f.status = FileStatus::kDirectory;
        continue;
      }
      bool py = fs::path(rel).extension() == ".py";
      if (type == fs::file_type::symlink) {
        f.status = py ? FileStatus::kSkipped : FileStatus::kCopied;
        f.reason = py ? "symbolic link: copied as a link, not migrated" : "";
        continue;
      }
      if (type != fs::file_type::regular) {
        f.status = FileStatus::kOmitted;
        f.reason = "not a regular file: not copied";
        continue;
      }
      if (!py) continue;  // copied as it is
      auto raw = npu::ReadFileToString((in_root / rel).string());
      if (!raw.ok()) {
        unreadable[i] = raw.status().message();
        continue;
      }
      f = MigrateFile(rel, *raw, rules, options_for(rel, {}));
    }
  });
  for (size_t i = 0; i < entries.size(); ++i)
    if (!unreadable[i].empty())
      return PathError("E13002", "--input", (in_root / entries[i].first).string(),
                       "cannot read it: " + unreadable[i] + "; nothing was written",
                       "Fix the file's permissions (or move it out of the input) and run again.");
  // A file that reaches torch only through `from models import *` is migrated again, knowing the names it gets.
  std::map<std::string, size_t> by_rel;
  for (size_t i = 0; i < r.files.size(); ++i)
    if (fs::path(r.files[i].rel).extension() == ".py") by_rel[fs::path(r.files[i].rel).lexically_normal().string()] = i;
  for (size_t i = 0; i < r.files.size(); ++i) {
    MigrateOptions::StarImports star;
    for (const std::string& s : r.files[i].migration.star_modules) {
      auto t = StarTarget(r.files[i].rel, s, by_rel);
      if (!t) continue;
      std::set<size_t> seen{i};
      std::vector<std::pair<std::string, std::string>> names;
      StarExports(*t, r.files, by_rel, seen, names);
      if (ReachesTorch(names)) star[s] = std::move(names);
    }
    if (star.empty()) continue;
    auto raw = npu::ReadFileToString((in_root / r.files[i].rel).string());
    if (raw.ok()) r.files[i] = MigrateFile(r.files[i].rel, *raw, rules, options_for(r.files[i].rel, std::move(star)));
  }
  std::set<std::string> used;
  for (const FileOutcome& f : r.files) {
    r.changes += f.changes.size();
    r.findings += f.findings.size();
    for (const ChangeRecord& c : f.changes) used.insert(c.edit->rule);
    for (const FindingRecord& x : f.findings) used.insert(x.finding->rule);
  }
  for (const std::string& id : rules.custom_ids)
    if (!used.count(id)) r.unmatched_rules.push_back(id);
  if (std::any_of(r.files.begin(), r.files.end(), [](const FileOutcome& f) { return f.migration.imports_torch; }))
    r.config_advice = rules.config_advice;
  return r;
}

namespace {

npu::Status WriteTree(const RunResult& r, const Options& opts) {
  const fs::path in_root = r.in_root;
  fs::path dest = r.dest, parent = dest.parent_path();
  std::error_code ec;
  fs::create_directories(parent, ec);
  std::string pid = std::to_string(getpid());
  fs::path stage = parent / ("." + dest.filename().string() + ".partial-" + pid);
  fs::remove_all(stage, ec);
  auto fail = [&](const std::string& what, const std::string& why) {
    fs::remove_all(stage, ec);
    return PathError("E13004", "--output", what, why + "; nothing was written", "Check that the output disk is writable and has room.");
  };
  if (!fs::create_directory(stage, ec)) return fail(stage.string(), ec.message());
  for (const FileOutcome& f : r.files) {  // folders first, so files can be written in any order
    if (f.status == FileStatus::kOmitted) continue;
    fs::path dir = f.status == FileStatus::kDirectory ? stage / f.rel : (stage / f.rel).parent_path();
    if (!fs::create_directories(dir, ec) && ec) return fail(dir.string(), ec.message());
  }
  // The reports and the files are independent: write them across the pool (reports first, they are the
  // longest tasks), and keep the first error. Reports go to transplant_result_file/, as CANN's do.
  struct WriteError {
    std::string what, why;
  };
  fs::path reports = stage / kResultDir;
  if (!fs::create_directory(reports, ec)) return fail(reports.string(), ec.message());
  auto write_text = [&](const fs::path& path, const std::string& text) -> std::optional<WriteError> {
    std::ofstream o(path, std::ios::binary);
    o << text;
    if (o.good()) return std::nullopt;
    return WriteError{path.string(), "write failed"};
  };
  const std::vector<std::pair<const char*, std::string (*)(const RunResult&)>> csvs = {
      {"change_list.csv", ChangeListCsv}, {"cuda_op_list.csv", CudaOpListCsv}, {"unsupported_api.csv", UnsupportedApiCsv},
      {"unknown_api.csv", UnknownApiCsv}, {"api_precision_advice.csv", PrecisionAdviceCsv}, {"api_performance_advice.csv", PerformanceAdviceCsv}};
  const size_t n = r.files.size(), k = csvs.size() + 1;
  std::vector<std::optional<WriteError>> errors(n + k);
  npu::ThreadPool::Global().ParallelFor(n + k, 1, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) {
      if (i == 0) errors[i] = write_text(reports / "msFmkTranspltlog.txt", LogText(r, opts));
      if (i > 0 && i < k) errors[i] = write_text(reports / csvs[i - 1].first, csvs[i - 1].second(r));
      if (i < k) continue;
      const FileOutcome& f = r.files[i - k];
      if (f.status == FileStatus::kDirectory || f.status == FileStatus::kOmitted) continue;
      std::error_code fec;
      fs::path src = in_root / f.rel, dst = stage / f.rel;
      if (fs::is_symlink(fs::symlink_status(src))) {
        fs::copy_symlink(src, dst, fec);
      } else if (f.status == FileStatus::kMigrated) {
        std::ofstream o(dst, std::ios::binary);
        o.write(f.new_bytes.data(), static_cast<std::streamsize>(f.new_bytes.size()));
        o.close();
        if (!o.good()) fec = std::make_error_code(std::errc::io_error);
        else fs::permissions(dst, fs::status(src).permissions(), fec);
      } else {
        fs::copy_file(src, dst, fec);
      }
      if (fec) errors[i] = WriteError{dst.string(), fec.message()};
    }
  });
  for (const auto& err : errors)
    if (err) return fail(err->what, err->why);
  if (npu::Status s = WriteUnsupportedXlsx(r, (reports / "unsupported_op.xlsx").string()); !s.ok()) {
    fs::remove_all(stage, ec);
    return s;
  }
  for (const auto& entry : fs::directory_iterator(reports, ec))  // read-only, as CANN leaves its reports
    fs::permissions(entry.path(), fs::perms::owner_read | fs::perms::group_read, ec);
  if (opts.distributed) {
    if (auto err = write_text(stage / "run_distributed_npu.sh", DistributedScript(r.main_rel))) return fail(err->what, err->why);
    fs::permissions(stage / "run_distributed_npu.sh", fs::perms(0750), ec);
  }
  // Swap the finished tree into place; an old result (--force) is removed only after that.
  fs::path old = parent / ("." + dest.filename().string() + ".old-" + pid);
  bool had_old = fs::exists(fs::symlink_status(dest));
  if (had_old) {
    fs::rename(dest, old, ec);
    if (ec) return fail(dest.string(), "cannot move the previous result aside: " + ec.message());
  }
  fs::rename(stage, dest, ec);
  if (ec) {
    if (had_old) fs::rename(old, dest, ec);
    return fail(dest.string(), "cannot move the result into place");
  }
  if (had_old) fs::remove_all(old, ec);
  return {};
}

}  // namespace

int RunTransplt(const Options& opts) {
  RuleSet rules = RuleSet::Builtin(opts.similar);
  auto report = [](const npu::Status& s) {
    std::cerr << "transplt: " << s.message() << "\n";
    return npu::cli::ExitCodeFor({s});
  };
  if (npu::Status s = npu::cli::ApplyLogFlag(opts.log); !s.ok()) {
    report(s);
    return npu::cli::kUsage;
  }
  std::string missing = std::string(opts.input.empty() ? " -i/--input" : "") + (opts.output.empty() ? " -o/--output" : "");
  if (!missing.empty()) return report(npu::Status::Error("E10007", missing.substr(1), "", "required to migrate", ""));
  if (!opts.rule_file.empty())
    if (npu::Status s = rules.AddCustom(opts.rule_file); !s.ok()) return report(s);
  if (opts.distributed && !std::regex_match(opts.target_model, std::regex(R"(^([A-Za-z_]\w*\.)*[A-Za-z_]\w*$)")))
    return report(PathError("E10001", "distributed -t", opts.target_model, "not a Python variable name such as model or self.model",
                            "Give the name the script assigns the model to."));
  auto result = MigrateTree(opts, rules);
  if (!result.ok()) return report(result.status());
  RunResult& r = *result;
  for (const FileOutcome& f : r.files)
    NPU_LOG(kInfo, "transplt", f.rel << ": " << FileStatusName(f.status));
  bool any_python = std::any_of(r.files.begin(), r.files.end(), [](const FileOutcome& f) {
    return f.status == FileStatus::kMigrated || f.status == FileStatus::kUnchanged || f.status == FileStatus::kFailed;
  });
  if (!any_python) {  // nothing to migrate: write nothing, exit 2 (the tools' "nothing to do")
    std::cerr << "transplt: " << npu::Status::Error("ET0001", "--input", opts.input, "holds no Python file to migrate", "Point -i at a .py file or a folder of them.").message() << "\n";
    return npu::cli::kUsage;
  }
  if (opts.diff)
    for (const FileOutcome& f : r.files)
      if (f.status == FileStatus::kMigrated) std::cout << UnifiedDiff(f);
  if (!opts.report_json.empty()) {
    std::string json = ReportJson(r, opts);
    if (npu::Status s = npu::WriteFileAtomic(opts.report_json, std::as_bytes(std::span(json.data(), json.size()))); !s.ok())
      return report(s);
  }
  if (!opts.dry_run) {
    if (npu::Status s = WriteTree(r, opts); !s.ok()) return report(s);
  }
  (opts.diff ? std::cerr : std::cout) << SummaryTable(r, opts);
  return opts.dry_run && r.changes > 0 ? 3 : 0;
}

}  // namespace transplt
