// file_compare, overflow and merge.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <regex>
#include <sstream>

#include "base/file_io.h"
#include "base/log.h"
#include "commands.h"
#include "compare/layout.h"
#include "compare/metrics.h"
#include "base/cli.h"
#include "dump/dump_names.h"
#include "dump/overflow_record.h"
#include "report.h"
#include "sources.h"
#include "html_report.h"
#include "summary.h"

namespace npu::cmp {
namespace fs = std::filesystem;

int Fail(std::ostream& out, Status s) {
  if (s.param() == "output") s.with_param("-out");
  cli::PrintError(out, s);
  return cli::ExitCodeFor({s});
}
namespace {

Status EnsureDir(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  return ec ? Status::Error("E13004", "-out", dir, "cannot create the folder: " + ec.message()) : Status::Ok();
}

// One line of tensor statistics for the overflow summary.
std::string Stats(const DumpTensor& t) {
  std::ostringstream os;
  os << "  " << t.kind_name() << " " << t.index;
  const GeType* d = FindGeType(t.dtype_code);
  if (!d || !t.problem.empty()) return os.str() + ": " + (t.problem.empty() ? "unsupported data type" : t.problem) + "\n";
  size_t n = t.data.size() / d->size;
  std::vector<double> v(n);
  DecodeToDouble(*d, t.data.data(), n, v.data());
  double mx = -INFINITY, mn = INFINITY, sum = 0;
  size_t nan = 0, inf = 0;
  for (double x : v) {
    if (std::isnan(x)) { ++nan; continue; }
    if (std::isinf(x)) ++inf;
    mx = std::max(mx, x), mn = std::min(mn, x), sum += x;
  }
  std::string shape = "[";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += (i ? "," : "") + std::to_string(t.shape[i]);
  os << " " << d->name << shape << "]: max " << FormatNumber(n ? mx : NAN) << ", min " << FormatNumber(n ? mn : NAN) << ", mean " << FormatNumber(n > nan ? sum / double(n - nan) : NAN)
     << ", NaN " << nan << ", Inf " << inf << "\n";
  return os.str();
}

std::string ShapeText(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// A dump saved as .npy keeps its device layout: a 5-D NC1HWC0 array against a 4-D NCHW golden of the same N, H
// and W with C1 = ceil(C / C0) is the same tensor, laid back to NCHW (and C's padding cropped) as compare does.
// Nothing to do (nullopt) when the shapes do not fit that pattern.
std::optional<Result<LaidOut>> FromNc1hwc0(const LoadedTensor& a, std::span<const int64_t> golden) {
  const auto& s = a.shape;
  if (s.size() != 5 || golden.size() != 4 || s[4] <= 0 || s[0] != golden[0] || s[2] != golden[2] || s[3] != golden[3] ||
      s[1] != (golden[1] + s[4] - 1) / s[4])
    return std::nullopt;
  DumpTensor t;
  t.dtype_code = a.dtype->code;
  t.format = static_cast<int>(Format::kNC1HWC0);
  t.shape = s;
  t.original_shape.assign(golden.begin(), golden.end());
  t.data = a.data;
  return ConvertLayout(t, a.dtype->size, "NCHW", golden);
}

}  // namespace

int RunFileCompare(const std::string& npu, const std::string& golden, const std::string& out_dir, std::ostream& out) {
  for (const auto& [flag, p] : {std::pair{"-m", npu}, std::pair{"-g", golden}})
    if (!p.ends_with(".npy")) return Fail(out, Status::Error("E10001", flag, p, "file_compare takes .npy files"));
  TensorRef ra{TensorRef::kNpy, npu, false, 0, "", 0}, rb{TensorRef::kNpy, golden, false, 0, "", 0};
  auto a = Load(ra), b = Load(rb);
  if (!a.ok()) return Fail(out, Status(a.status()).with_param("-m"));
  if (!b.ok()) return Fail(out, Status(b.status()).with_param("-g"));
  if (!a.value().problem.empty() || !b.value().problem.empty())
    return Fail(out, Status::Error("EC0015", "-m", npu, a.value().problem.empty() ? b.value().problem : a.value().problem));
  LaidOut laid;
  if (a.value().shape != b.value().shape) {
    auto converted = FromNc1hwc0(a.value(), b.value().shape);
    if (!converted || !converted->ok())
      return Fail(out, Status::Error("EC0015", "-g", golden,
                                     "the shapes differ: -m " + ShapeText(a.value().shape) + ", -g " + ShapeText(b.value().shape),
                                     "Compare arrays of one shape (or a 5-D NC1HWC0 -m against its 4-D NCHW -g); "
                                     "msaccucmp convert -f NCHW lays a dump back before saving it."));
    laid = std::move(converted->value());
    out << "[INFO] -m " << ShapeText(a.value().shape) << " is NC1HWC0: compared as NCHW " << ShapeText(laid.shape)
        << " with -g\n";
    a.value().data = laid.bytes;
    a.value().shape = laid.shape;
  }
  std::vector<Metric> ms;
  for (int i = 0; i < kNumMetrics; ++i)
    if (i != static_cast<int>(Metric::kKL) && i != static_cast<int>(Metric::kStd)) ms.push_back(static_cast<Metric>(i));
  auto r = ComputeMetrics({a.value().dtype, a.value().data.data(), a.value().numel()}, {b.value().dtype, b.value().data.data(), b.value().numel()}, ms);
  std::string text;
  for (Metric m : ms) {
    text += std::string(MetricName(m)) + ": " + FormatNumber(r.value[static_cast<int>(m)]);
    if (!r.message[static_cast<int>(m)].empty()) text += " (" + r.message[static_cast<int>(m)] + ")";
    text += "\n";
  }
  std::string dir = out_dir.empty() ? "." : out_dir;
  if (Status s = EnsureDir(dir); !s.ok()) return Fail(out, s);
  auto written = WriteFileUnique(dir + "/" + "file_result_" + Timestamp14() + ".txt", std::as_bytes(std::span(text.data(), text.size())));
  if (!written.ok()) return Fail(out, written.status());
  const std::string& path = written.value();
  out << text;
  if (log::ShowInfo()) out << "[INFO] result written to " << path << "\n";
  return 0;
}

int RunOverflow(const std::string& dump_dir, const std::string& out_dir, const std::string& top, std::ostream& out) {
  char* end = nullptr;
  long n = std::strtol(top.c_str(), &end, 10);
  if (top.empty() || *end || n < 1 || n > 5) return Fail(out, Status::Error("E10001", "-n", top, "must be an integer in [1, 5]"));
  std::error_code ec;
  if (!fs::is_directory(dump_dir, ec)) return Fail(out, Status::Error("E13001", "-d", dump_dir, "not a folder"));
  struct Found { uint64_t ts; std::string path; };
  std::vector<Found> debug;
  std::map<std::string, std::vector<std::pair<DumpFileName, std::string>>> by_dir;
  NameMaps maps;
  for (auto it = fs::recursive_directory_iterator(dump_dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    auto name = ParseDumpFileName(RealFileName(it->path().string(), maps));
    if (!name) continue;
    if (name->op_type == kOpDebugType) debug.push_back({name->timestamp, it->path().string()});
    else by_dir[it->path().parent_path().string()].emplace_back(*name, it->path().string());
  }
  std::sort(debug.begin(), debug.end(), [](const Found& a, const Found& b) { return a.ts < b.ts; });
  std::string text = "Overflow records: " + std::to_string(debug.size()) + "\n";
  for (size_t k = 0; k < debug.size() && k < static_cast<size_t>(n); ++k) {
    auto f = ReadDumpFile(debug[k].path);
    if (!f.ok()) {
      text += "\n[" + std::to_string(k + 1) + "] " + f.status().message() + "\n";
      continue;
    }
    OverflowRecord r;
    if (f.value().outputs.empty() || f.value().outputs[0].data.size() != sizeof r) {
      text += "\n[" + std::to_string(k + 1) + "] " + debug[k].path + ": not an overflow record\n";
      continue;
    }
    std::memcpy(&r, f.value().outputs[0].data.data(), sizeof r);
    if (r.magic != OverflowRecord::kMagic) {
      text += "\n[" + std::to_string(k + 1) + "] " + debug[k].path + ": bad magic\n";
      continue;
    }
    std::string op = "(no op dump found)", stats;
    for (const auto& [name, path] : by_dir[fs::path(debug[k].path).parent_path().string()])
      if (name.task_id == r.task_id && name.stream_id == r.stream_id) {
        op = name.op_type + " " + name.op_name;
        if (auto d = ReadDumpFile(path); d.ok()) {
          for (const auto& t : d.value().inputs) stats += Stats(t);
          for (const auto& t : d.value().outputs) stats += Stats(t);
        } else {
          stats = "  " + d.status().message() + "\n";
        }
      }
    text += "\n[" + std::to_string(k + 1) + "] " + op + "\n  task_id " + std::to_string(r.task_id) + ", stream_id " + std::to_string(r.stream_id) +
            ", status " + std::to_string(r.status) + ", Inf/NaN elements " + std::to_string(r.non_finite) + ", out-of-range elements " +
            std::to_string(r.saturated) + "\n  first: output " + std::to_string(r.first_output) + " element " + std::to_string(r.first_index) +
            ", value before saturation " + FormatNumber(r.first_value) + "\n" + stats;
  }
  std::string dir = out_dir.empty() ? "." : out_dir;
  if (Status s = EnsureDir(dir); !s.ok()) return Fail(out, s);
  auto written = WriteFileUnique(dir + "/" + "overflow_summary_" + Timestamp14() + ".txt", std::as_bytes(std::span(text.data(), text.size())));
  if (!written.ok()) return Fail(out, written.status());
  const std::string& path = written.value();
  out << text;
  if (log::ShowInfo()) out << "[INFO] summary written to " << path << "\n";
  return 0;
}

int RunMerge(const std::vector<std::string>& inputs, const std::string& out_dir, const std::string& format, const std::string& report,
             std::ostream& out) {
  if (format != "csv" && format != "json") return Fail(out, Status::Error("E10001", "--format", format, "must be csv or json"));
  if (Status s = CheckReportFlag(report, format, false); !s.ok()) return Fail(out, s);
  static const std::regex kShard(R"(result_\d+_shard(\d+)of(\d+)(?:_\d+)?\.csv)");
  std::map<size_t, std::string> shards;
  size_t total = 0;
  std::error_code ec;
  auto consider = [&](const fs::path& p) -> Status {
    std::smatch m;
    std::string name = p.filename().string();
    if (!std::regex_match(name, m, kShard)) return Status::Ok();
    size_t k = std::stoul(m[1].str().substr(0, 9)), n = std::stoul(m[2].str().substr(0, 9));
    if (total && n != total) return Status::Error("E10001", "merge", p.string(), "belongs to a run split " + std::to_string(n) + " ways, others to " + std::to_string(total));
    total = n;
    if (!shards.emplace(k, p.string()).second)
      return Status::Error("E10001", "merge", p.string(), "shard " + std::to_string(k) + " appears twice (" + shards[k] + ")", "Merge the shards of one run only.");
    return Status::Ok();
  };
  for (const auto& in : inputs) {
    Status s;
    if (fs::is_directory(in, ec))
      for (const auto& e : fs::directory_iterator(in, ec)) s = s.ok() ? consider(e.path()) : s;
    else if (fs::exists(in, ec)) s = consider(in);
    else s = Status::Error("E13001", "merge", in, "the path does not exist");
    if (!s.ok()) return Fail(out, s);
  }
  if (shards.empty()) return Fail(out, Status::Error("EC0002", "merge", "", "no result_*_shard{K}of{N}.csv files among the inputs"));
  std::string missing;
  for (size_t k = 1; k <= total; ++k)
    if (!shards.count(k)) missing += (missing.empty() ? "" : ",") + std::to_string(k);
  if (!missing.empty())
    return Fail(out, Status::Error("E10001", "merge", "shards " + missing + " of " + std::to_string(total), "are missing (no result file)",
                                   "Run those shards again (a Slurm array: sbatch --array=" + missing + " ... --shard auto/" + std::to_string(total) +
                                       "), then merge again."));
  Row header;
  std::map<size_t, Row> rows;
  std::string run, run_shard;  // every shard's Run value (report.h) must be the first one's
  constexpr size_t kLead = 2;  // Ordinal, Run
  for (const auto& [k, path] : shards) {
    auto csv = ReadCsv(path);
    if (!csv.ok()) return Fail(out, csv.status());
    auto& t = csv.value();
    if (t.empty() || t[0].size() < kLead || t[0][0] != "Ordinal" || t[0][1] != "Run")
      return Fail(out, Status::Error("EC0015", "merge", path, "not a shard result (no Ordinal and Run columns)", "Merge the files compare --shard wrote."));
    Row h(t[0].begin() + kLead, t[0].end());
    if (!header.empty() && h != header) return Fail(out, Status::Error("EC0015", "merge", path, "its columns differ from the other shards"));
    header = h;
    for (size_t i = 1; i < t.size(); ++i) {
      char* end = nullptr;
      unsigned long long ord = t[i].empty() ? 0 : std::strtoull(t[i][0].c_str(), &end, 10);
      if (t[i].size() != header.size() + kLead || *end || !rows.emplace(ord, Row(t[i].begin() + kLead, t[i].end())).second)
        return Fail(out, Status::Error("EC0015", "merge", path, "row " + std::to_string(i) + " is malformed (cut short?) or repeats an ordinal",
                                       "Run shard " + std::to_string(k) + " again."));
      if (run.empty()) run = t[i][1], run_shard = path;
      if (t[i][1] != run)
        return Fail(out, Status::Error("EC0015", "merge", path, "belongs to another comparison than " + run_shard + " (its -m, -g, -f or options differ)",
                                       "Merge the shards of one compare only."));
    }
  }
  const size_t slash = run.rfind('/');
  const size_t total_rows = slash == std::string::npos ? rows.size() : std::strtoull(run.c_str() + slash + 1, nullptr, 10);
  size_t expect = 0;
  for (const auto& [ord, r] : rows)
    if (ord != expect++) return Fail(out, Status::Error("EC0015", "merge", std::to_string(ord), "rows are missing before this ordinal; a shard is incomplete"));
  if (rows.size() != total_rows)
    return Fail(out, Status::Error("EC0015", "merge", std::to_string(rows.size()) + " rows", "the run has " + std::to_string(total_rows) + "; a shard is cut short",
                                   "Run the shard whose file was cut short again."));
  std::string dir = out_dir.empty() ? "." : out_dir;
  if (Status s = EnsureDir(dir); !s.ok()) return Fail(out, s);
  auto w = ResultWriter::Create(dir + "/result_" + Timestamp14() + "." + format, format, header);
  if (!w.ok()) return Fail(out, w.status());
  Summary sum(header);
  for (const auto& [ord, r] : rows) {
    sum.Add(r);
    if (Status s = w.value()->Add(ord, r); !s.ok()) return Fail(out, s);
  }
  auto path = w.value()->Finish();
  if (!path.ok()) return Fail(out, path.status());
  sum.Print(out);
  if (log::ShowInfo()) out << "[INFO] merged " << total << " shard(s), " << rows.size() << " row(s) into " << path.value() << "\n";
  if (report == "html") {
    auto page = WriteHtmlReport(path.value());
    if (!page.ok()) return Fail(out, page.status());
    if (log::ShowInfo()) out << "[INFO] report written to " << page.value() << "\n";
  }
  return 0;
}

int RunReport(const std::vector<std::string>& inputs, const std::string& out_dir, std::ostream& out) {
  static const std::regex kResult(R"(result_\d+(?:_\d+)?\.csv)");  // single-run and merged results, not shards
  std::vector<std::string> csvs;
  std::error_code ec;
  for (const auto& in : inputs) {
    if (fs::is_directory(in, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(in, ec))
        if (e.is_regular_file() && std::regex_match(e.path().filename().string(), kResult)) found.push_back(e.path().string());
      std::sort(found.begin(), found.end());
      csvs.insert(csvs.end(), found.begin(), found.end());
    } else if (fs::exists(in, ec)) {
      csvs.push_back(in);
    } else {
      return Fail(out, Status::Error("E13001", "report", in, "the path does not exist"));
    }
  }
  if (csvs.empty()) return Fail(out, Status::Error("EC0002", "report", "", "no result_<ts>.csv files among the inputs"));
  std::vector<HtmlPageSummary> pages;
  const std::string dir = out_dir.empty() ? "." : out_dir;
  for (const auto& csv : csvs) {
    HtmlPageSummary p;
    auto page = WriteHtmlReport(csv, &p);
    if (!page.ok()) return Fail(out, page.status());
    p.page = fs::relative(page.value(), dir, ec).string();
    p.title = fs::relative(csv, dir, ec).string();
    if (log::ShowInfo()) out << "[INFO] report written to " << page.value() << "\n";
    pages.push_back(std::move(p));
  }
  if (pages.size() < 2) return 0;
  fs::create_directories(dir, ec);
  auto w = AtomicFileWriter::Create((fs::path(dir) / "index.html").string());
  if (!w.ok()) return Fail(out, w.status());
  Status s = w.value()->Write(RenderHtmlIndex(pages, "msaccucmp: " + std::to_string(pages.size()) + " comparisons"));
  if (s.ok()) s = w.value()->Commit();
  if (!s.ok()) return Fail(out, s);
  if (log::ShowInfo()) out << "[INFO] index of " << pages.size() << " reports written to " << (fs::path(dir) / "index.html").string() << "\n";
  return 0;
}

}  // namespace npu::cmp
