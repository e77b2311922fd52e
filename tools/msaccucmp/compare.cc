#include "compare.h"
#include "base/json.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "base/cli.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/progress.h"
#include "base/shard.h"
#include "base/thread_pool.h"
#include "base/half.h"
#include "commands.h"
#include "html_report.h"
#include "custom_scripts.h"
#include "dump/dump_names.h"
#include "report.h"
#include "summary.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

constexpr uint64_t kBigItem = 64ull << 20;  // pairs above this use the whole pool by themselves
constexpr size_t kWindow = 512;             // rows computed between two flushes to the result file

struct Thresholds {
  double pass_cos, warn_cos, atol;
};

std::map<std::string, Thresholds> DefaultThresholds() {
  return {{"float32", {0.9999, 0.999, 1e-5}}, {"float64", {0.9999, 0.999, 1e-7}}, {"float16", {0.999, 0.99, 1e-3}},
          {"bfloat16", {0.995, 0.98, 1e-2}},  {"int8", {0.999, 0.99, 1}},           {"uint8", {0.999, 0.99, 1}},
          {"default", {1.0, 0.9999, 0}}};
}

Result<std::map<std::string, Thresholds>> LoadThresholds(const std::string& path) {
  auto t = DefaultThresholds();
  if (path.empty()) return t;
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  auto j = npu::ParseJson(text);
  auto bad = [&](const std::string& why) {
    return Status::Error("E10001", "--thresholds", path, why,
                         "Use {\"float16\": {\"cosine_pass\": 0.999, \"cosine_warn\": 0.99, \"atol\": 0.001}, ...}.");
  };
  if (!j.is_object()) return bad("not a JSON object");
  for (auto& [dtype, v] : j.items()) {
    if (!v.is_object()) return bad("\"" + dtype + "\" must map to an object");
    Thresholds th = t.count(dtype) ? t[dtype] : t["default"];
    for (auto& [k, x] : v.items()) {
      if (!x.is_number()) return bad(dtype + "." + k + " must be a number");
      if (k == "cosine_pass") th.pass_cos = x;
      else if (k == "cosine_warn") th.warn_cos = x;
      else if (k == "atol") th.atol = x;
      else return bad("unknown key " + dtype + "." + k + " (cosine_pass, cosine_warn, atol)");
    }
    t[dtype] = th;
  }
  return t;
}

struct Ctx {
  std::vector<Metric> shown, computed;  // computed = shown + what the verdict needs
  CustomScripts* custom = nullptr;      // -c: its metrics follow the built-in ones; its layout conversions
  bool overflow = false, full_precision = false;
  uint64_t max_cmp = 0;
  std::map<std::string, Thresholds> thresholds;
};

std::string Fmt3(double v, bool full) {
  if (std::isnan(v)) return "NaN";
  if (full) return FormatNumber(v, true);
  char b[64];
  std::snprintf(b, sizeof b, "%.3f", std::fabs(v) < 0.001 ? 0.0 : v);
  return b;
}

std::string Hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

std::string ShapeCell(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

Row Header(const Plan& p, const Ctx& c) {
  Row h = {"Index"};
  if (p.layout == Layout::kH5) {
    h.insert(h.end(), {"NPUDump", "NPUDumpPath", "GroundTruthPath", "DataType", "Shape"});
  } else {
    if (p.with_sequence) h.push_back("OpSequence");
    h.insert(h.end(), {"OpType", "NPUDump", "DataType"});
    if (p.npu_address) h.push_back("Address");
    h.insert(h.end(), {"GroundTruth", "DataType"});
    if (p.golden_address) h.push_back("Address");
    h.insert(h.end(), {"TensorIndex", "Shape"});
    if (c.overflow) h.push_back("OverFlow");
  }
  for (Metric m : c.shown) h.push_back(std::string(MetricName(m)));
  if (c.custom) h.insert(h.end(), c.custom->names().begin(), c.custom->names().end());
  h.insert(h.end(), {"Verdict", "NPUNaN", "NPUInf", "GoldenNaN", "GoldenInf", "CompareFailReason"});
  return h;
}

std::string Verdict(const MetricResults& r, const std::string& dtype, const Ctx& c) {
  if (r.npu.nan != r.golden.nan || r.npu.inf != r.golden.inf) return "FAIL";
  double cos = r.value[static_cast<int>(Metric::kCosine)], maxabs = r.value[static_cast<int>(Metric::kMaxAbs)];
  if (dtype == "bool") return r.value[static_cast<int>(Metric::kRelEuclid)] == 0 ? "PASS" : "FAIL";
  auto it = c.thresholds.find(dtype);
  const Thresholds& t = it != c.thresholds.end() ? it->second : c.thresholds.at("default");
  if (maxabs <= t.atol) return "PASS";
  if (std::isnan(cos)) return "FAIL";
  return cos >= t.pass_cos ? "PASS" : cos >= t.warn_cos ? "WARN" : "FAIL";
}

struct Side {
  std::optional<LoadedTensor> t;
  std::string error;  // why there is no usable tensor
};

Side LoadSide(const TensorRef& r, const char* missing, CustomScripts* scripts) {
  Side s;
  if (!r.present()) {
    s.error = missing;
    return s;
  }
  auto l = Load(r, scripts);
  if (!l.ok()) s.error = l.status().reason();
  else if (!l.value().problem.empty()) s.error = l.value().problem, s.t = std::move(l).value();
  else s.t = std::move(l).value();
  return s;
}

Row ComputeRow(const CompareItem& it, const Plan& p, const Ctx& c, ThreadPool* pool) {
  Side a = LoadSide(it.npu, "no NPU dump data", c.custom), b = LoadSide(it.golden, "no golden data", c.custom);
  auto dtype = [](const Side& s) { return s.t && s.t->dtype ? std::string(s.t->dtype->name) : std::string("NaN"); };
  auto addr = [](const Side& s) { return s.t && s.t->address ? Hex(s.t->address) : std::string("NaN"); };
  const auto& shape = a.t ? a.t->shape : b.t ? b.t->shape : std::vector<int64_t>{};
  Row row = {it.index};
  if (p.layout == Layout::kH5) {
    row.insert(row.end(), {it.npu_name, it.npu.present() ? it.npu.dataset : "*", it.golden.present() ? it.golden.dataset : "*",
                           dtype(a.t ? a : b), ShapeCell(shape)});
  } else {
    if (p.with_sequence) row.push_back(it.sequence);
    row.insert(row.end(), {it.op_type, it.npu_name, dtype(a)});
    if (p.npu_address) row.push_back(addr(a));
    row.insert(row.end(), {it.golden_name, dtype(b)});
    if (p.golden_address) row.push_back(addr(b));
    row.insert(row.end(), {it.tensor_index, ShapeCell(shape)});
  }
  std::string reason, verdict;
  MetricResults r;
  r.value.fill(NAN);
  r.npu = r.golden = {NAN, NAN, 0, 0};
  bool ready = a.error.empty() && b.error.empty();
  if (!it.npu.present() || !it.golden.present()) verdict = "SKIP", reason = !it.npu.present() ? a.error : b.error;
  else if (!ready) verdict = "FAIL", reason = !a.error.empty() ? "NPU: " + a.error : "golden: " + b.error;
  else if (a.t->numel() != b.t->numel())
    verdict = "FAIL", reason = "shape mismatch: NPU " + ShapeCell(a.t->shape) + " vs golden " + ShapeCell(b.t->shape);
  bool computed = verdict.empty();
  if (computed) {
    size_t n = a.t->numel();
    if (c.max_cmp && c.max_cmp < n) n = c.max_cmp;
    r = ComputeMetrics({a.t->dtype, a.t->data.data(), n}, {b.t->dtype, b.t->data.data(), n}, c.computed, pool);
    verdict = Verdict(r, a.t->dtype->name, c);
    std::set<std::string> seen;
    for (Metric m : c.shown) {
      const std::string& msg = r.message[static_cast<int>(m)];
      if (!msg.empty() && seen.insert(msg).second) reason += (reason.empty() ? "" : " ") + msg;
    }
  }
  if (c.overflow && p.layout != Layout::kH5) {
    bool fp16 = a.t && a.t->dtype && a.t->dtype->code == static_cast<int32_t>(DType::kF16) && ready;
    std::string of = "NaN";
    if (fp16) {
      bool big = r.npu.inf > 0;
      for (size_t i = 0; !big && i < a.t->numel(); ++i) {  // dump payloads sit at any offset: memcpy, not uint16_t*
        uint16_t h;
        std::memcpy(&h, a.t->data.data() + 2 * i, 2);
        big = HalfOverflowed(h);
      }
      of = big ? "YES" : "NO";
    }
    row.push_back(of);
  }
  for (Metric m : c.shown)
    row.push_back(m == Metric::kStd ? (!computed ? "NaN"
                                                              : "(" + Fmt3(r.npu.mean, c.full_precision) + ";" + Fmt3(r.npu.std, c.full_precision) + "),(" +
                                                                    Fmt3(r.golden.mean, c.full_precision) + ";" + Fmt3(r.golden.std, c.full_precision) + ")")
                                    : FormatNumber(r.value[static_cast<int>(m)], c.full_precision));
  if (c.custom) {
    auto values = computed ? c.custom->Compute(*a.t, *b.t) : std::vector<std::pair<std::string, std::string>>(c.custom->names().size(), {"NaN", ""});
    for (size_t i = 0; i < values.size(); ++i) {
      row.push_back(values[i].first);
      if (!values[i].second.empty()) reason += (reason.empty() ? "" : " ") + c.custom->names()[i] + ": " + values[i].second;
    }
  }
  auto count = [&](uint64_t v) { return computed ? std::to_string(v) : std::string("NaN"); };
  row.insert(row.end(), {verdict, count(r.npu.nan), count(r.npu.inf), count(r.golden.nan), count(r.golden.inf), reason});
  return row;
}

// -alg: built-in names or indices; the names of -c's custom metrics are accepted (those always run).
Result<std::vector<Metric>> ParseAlgs(const std::string& s, const std::vector<std::string>& custom) {
  std::vector<Metric> v;
  if (s.empty() || s == "all") {
    for (int i = 0; i < kNumMetrics; ++i) v.push_back(static_cast<Metric>(i));
    return v;
  }
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find_first_of(", ", b);
    std::string t = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!t.empty()) {
      auto m = ParseMetric(t);
      if (!m && std::find(custom.begin(), custom.end(), t) != custom.end()) {
        b = e == std::string::npos ? s.size() + 1 : e + 1;
        continue;
      }
      if (!m) return Status::Error("E10001", "-alg", s, "unknown algorithm \"" + t + "\"", "Use names such as CosineSimilarity or indices 0-9.");
      if (std::find(v.begin(), v.end(), *m) == v.end()) v.push_back(*m);
    }
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (v.empty() && custom.empty()) return Status::Error("E10004", "-alg", s, "no algorithm named");
  return v;
}

// A shard's Run value (report.h): a fingerprint of what decides the rows (the inputs, the options that change
// cells, every pair compared, in order) and the number of rows of the whole run. FNV-1a, 64 bits: stable across
// builds and hosts, as the shards of one job may run on different nodes.
std::string ShardRun(const CompareOptions& o, const Plan& p) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    h = (h ^ 0xff) * 0x100000001b3ull;  // a separator: "ab","c" differs from "a","bc"
  };
  for (const std::string* s : {&o.npu, &o.golden, &o.fusion, &o.quant_fusion, &o.close_fusion, &o.alg, &o.max_cmp, &o.range, &o.select,
                               &o.precision, &o.thresholds})
    mix(*s);
  mix(o.overflow ? "overflow" : "");
  for (const auto& it : p.items) mix(it.npu_name), mix(it.golden_name), mix(it.tensor_index);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf) + "/" + std::to_string(p.items.size());
}

// Which items shard k of n owns: contiguous runs balanced by bytes; every shard computes the same cut.
std::vector<size_t> ShardItems(const std::vector<CompareItem>& items, size_t k, size_t n) {
  long double total = 0;
  for (const auto& it : items) total += static_cast<long double>(std::max<uint64_t>(it.bytes(), 1));
  std::vector<size_t> mine;
  long double before = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    long double w = static_cast<long double>(std::max<uint64_t>(items[i].bytes(), 1));
    size_t owner = std::min<size_t>(n - 1, static_cast<size_t>((before + w / 2) * static_cast<long double>(n) / total));
    if (owner == k - 1) mine.push_back(i);
    before += w;
  }
  return mine;
}

// Computes rows for `order` (item indices) in windows, in parallel, and hands them to `sink` in order.
Status RunItems(const Plan& p, const Ctx& c, const std::vector<size_t>& order, bool progress,
                const std::function<Status(size_t, Row&)>& sink) {
  ThreadPool& pool = ThreadPool::Global();
  ProgressBar bar(progress, order.size(), "tensors");
  for (size_t w = 0; w < order.size(); w += kWindow) {
    size_t end = std::min(order.size(), w + kWindow);
    std::vector<Row> rows(end - w);
    std::vector<size_t> small, big;
    for (size_t i = w; i < end; ++i) (p.items[order[i]].bytes() > kBigItem ? big : small).push_back(i - w);
    for (size_t i : big) rows[i] = ComputeRow(p.items[order[w + i]], p, c, &pool);  // each splits across the pool
    std::sort(small.begin(), small.end(), [&](size_t a, size_t b) { return p.items[order[w + a]].bytes() > p.items[order[w + b]].bytes(); });
    std::atomic<size_t> next{0};
    pool.ParallelFor(static_cast<size_t>(pool.size()), 1, [&](size_t, size_t) {
      for (size_t k; (k = next.fetch_add(1)) < small.size();) rows[small[k]] = ComputeRow(p.items[order[w + small[k]]], p, c, nullptr);
    });
    for (size_t i = 0; i < rows.size(); ++i) NPU_RETURN_IF_ERROR(sink(order[w + i], rows[i]));
    bar.Update(end);
  }
  return Status::Ok();
}

Status WriteMapping(const Plan& p, const std::string& dir, std::ostream& out) {
  std::string path = dir + "/mapping_" + Timestamp14() + ".csv";
  NPU_ASSIGN_OR_RETURN(auto w, ResultWriter::Create(path, "csv", {"Index", "OpType", "NPUDump", "GroundTruth", "TensorIndex", "NPUDumpPath", "GroundTruthPath"}));
  for (size_t i = 0; i < p.items.size(); ++i) {
    const auto& it = p.items[i];
    NPU_RETURN_IF_ERROR(w->Add(i, {it.index, it.op_type, it.npu_name, it.golden_name, it.tensor_index,
                                   it.npu.present() ? it.npu.path : "*", it.golden.present() ? it.golden.path : "*"}));
  }
  NPU_ASSIGN_OR_RETURN(path, w->Finish());
  if (log::ShowInfo()) out << "[INFO] mapping written to " << path << "\n";
  return Status::Ok();
}

// -p 1 (h5): <result stem>_filtered/filtered_result.csv with the rows whose cosine is NaN or at most
// kPostProcessCosine, and each such pair of tensors as .npy for a closer look.
constexpr double kPostProcessCosine = 0.95;

bool PostProcessKeeps(const Row& header, const Row& row) {
  auto col = std::find(header.begin(), header.end(), "CosineSimilarity") - header.begin();
  if (col >= static_cast<long>(row.size())) return false;
  const std::string& cell = row[col];
  if (cell == "NaN") return true;
  char* end = nullptr;
  double v = std::strtod(cell.c_str(), &end);
  return end != cell.c_str() && *end == '\0' && v <= kPostProcessCosine;
}

Status WriteFiltered(const std::string& result_path, const Row& header, const std::vector<std::pair<size_t, Row>>& rows, const Plan& p) {
  std::string dir = result_path.substr(0, result_path.rfind('.')) + "_filtered";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::Error("E13004", "-out", dir, "cannot create the folder: " + ec.message());
  NPU_ASSIGN_OR_RETURN(auto w, ResultWriter::Create(dir + "/filtered_result.csv", "csv", header));
  for (const auto& [ordinal, row] : rows) {
    NPU_RETURN_IF_ERROR(w->Add(ordinal, row));
    const CompareItem& it = p.items[ordinal];
    for (const auto& [side, ref] : {std::pair{"npu", &it.npu}, std::pair{"golden", &it.golden}}) {
      if (!ref->present()) continue;
      auto t = Load(*ref);
      if (!t.ok() || !t.value().problem.empty() || !t.value().dtype) continue;  // the row already says why
      NPU_RETURN_IF_ERROR(WriteNpyBytes(dir + "/" + SanitizeDumpName(it.tensor_index) + "_" + side + ".npy", *t.value().dtype,
                                        t.value().shape, t.value().data));
    }
  }
  return w->Finish().status();
}

}  // namespace

Status SingleOpDetail(const Plan& p, const CompareOptions& o, CustomScripts* scripts, const std::string& dir, std::ostream& out);

int RunCompare(const CompareOptions& o, std::ostream& out) {
  auto fail = [&](const Status& s) { return Fail(out, s); };
  Ctx c;
  auto started = CustomScripts::Start(o.custom, out);
  if (!started.ok()) return fail(started.status());
  std::unique_ptr<CustomScripts> custom = std::move(started).value();
  c.custom = custom.get();
  auto algs = ParseAlgs(o.alg, custom ? custom->names() : std::vector<std::string>{});
  if (!algs.ok()) return fail(algs.status());
  c.shown = algs.value();
  c.computed = c.shown;
  for (Metric m : {Metric::kCosine, Metric::kMaxAbs, Metric::kRelEuclid})
    if (std::find(c.computed.begin(), c.computed.end(), m) == c.computed.end()) c.computed.push_back(m);
  c.overflow = o.overflow || o.advisor;
  char* end = nullptr;
  long long max_cmp = std::strtoll(o.max_cmp.c_str(), &end, 10);
  if (o.max_cmp.empty() || *end || max_cmp < 0) return fail(Status::Error("E10001", "-max", o.max_cmp, "must be an integer >= 0 (0 = all elements)"));
  c.max_cmp = static_cast<uint64_t>(max_cmp);
  if (o.precision != "6" && o.precision != "full") return fail(Status::Error("E10001", "--precision", o.precision, "must be 6 or full"));
  c.full_precision = o.precision == "full";
  if (o.format != "csv" && o.format != "json") return fail(Status::Error("E10001", "--format", o.format, "must be csv or json"));
  if (Status r = CheckReportFlag(o.report, o.format, !o.shard.empty()); !r.ok()) return fail(r);
  if (!o.range.empty() && !o.select.empty()) return fail(Status::Error("E10001", "-s", o.select, "-r and -s exclude each other"));
  if (!o.op_name.empty() && (!o.range.empty() || !o.select.empty() || o.mapping))
    return fail(Status::Error("E10001", "-op", o.op_name, "-op excludes -r, -s and -map"));
  if ((!o.input_index.empty() || !o.output_index.empty()) && o.op_name.empty() && fs::is_directory(o.npu))
    return fail(Status::Error("E10001", "-i/-o", o.input_index + o.output_index, "-i and -o select a tensor of the op named by -op"));
  if (!o.input_index.empty() && !o.output_index.empty()) return fail(Status::Error("E10001", "-i", o.input_index, "-i and -o exclude each other"));
  if (!o.post_process.empty() && o.post_process != "0" && o.post_process != "1")
    return fail(Status::Error("E10001", "-p", o.post_process, "must be 0 or 1"));
  if (o.post_process == "1" && !(o.npu.ends_with(".h5") && o.golden.ends_with(".h5")))
    return fail(Status::Error("E10001", "-p", o.post_process, "post-processing applies to .h5 comparisons"));
  if (o.mapping && o.fusion.empty() && o.quant_fusion.empty())
    return fail(Status::Error("E10007", "-f", "", "-map needs the fusion rule file -f or the quantization record -q"));
  auto th = LoadThresholds(o.thresholds);
  if (!th.ok()) return fail(th.status());
  c.thresholds = th.value();
  std::optional<std::pair<size_t, size_t>> shard;
  if (!o.shard.empty()) {
    auto s = ParseShard(o.shard, "--shard", {"E10001", "E10057"});  // K/N, or auto from the scheduler (base/shard.h)
    if (!s.ok()) return fail(s.status());
    shard = std::pair{s.value().k, s.value().n};
  }
  bool file_mode = !fs::is_directory(o.npu) && !o.npu.ends_with(".h5");
  auto plan = BuildPlan(o);
  if (!plan.ok()) return fail(plan.status());
  Plan& p = plan.value();
  if (p.items.empty()) {
    out << "[WARNING] no op of the NPU dump matches the golden data; nothing to compare\n";
    return cli::kUsage;
  }
  std::string dir = o.out.empty() ? "." : o.out;  // created only once there is something to write
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail(Status::Error("E13004", "-out", dir, "cannot create the folder: " + ec.message()));

  if (o.mapping) {
    Status s = WriteMapping(p, dir, out);
    return s.ok() ? 0 : fail(s);
  }
  if (!o.op_name.empty()) {
    Status s = SingleOpDetail(p, o, custom.get(), dir, out);
    return s.ok() ? 0 : fail(s);
  }

  std::vector<size_t> order;
  if (shard) order = ShardItems(p.items, shard->first, shard->second);
  else
    for (size_t i = 0; i < p.items.size(); ++i) order.push_back(i);
  Row header = Header(p, c);
  // Shards are always CSV (exact cells, so `merge` reproduces a single run byte for byte).
  std::string format = shard ? "csv" : o.format;
  std::string stem = "result_" + Timestamp14() + (shard ? "_shard" + std::to_string(shard->first) + "of" + std::to_string(shard->second) : "");
  std::unique_ptr<ResultWriter> w;
  std::string result_path;  // a second compare in the same second gets result_<ts>_1.csv, never this run's file
  if (!file_mode || !o.out.empty()) {
    auto r = ResultWriter::Create(dir + "/" + stem + "." + format, format, header, shard ? ShardRun(o, p) : std::string());
    if (!r.ok()) return fail(r.status());
    w = std::move(r).value();
  }
  Summary sum(header);
  std::vector<std::pair<size_t, Row>> filtered;  // -p 1
  Status s = RunItems(p, c, order, o.progress, [&](size_t ordinal, Row& row) {
    sum.Add(row);
    if (o.post_process == "1" && PostProcessKeeps(header, row)) filtered.emplace_back(ordinal, row);
    if (file_mode)
      for (size_t i = 0; i < header.size(); ++i) out << header[i] << ": " << row[i] << "\n";
    return w ? w->Add(ordinal, row) : Status::Ok();
  });
  if (s.ok() && w) {
    auto done = w->Finish();
    if (done.ok()) result_path = done.value();
    s = done.status();
  }
  if (s.ok() && o.post_process == "1" && !filtered.empty()) s = WriteFiltered(result_path, header, filtered, p);
  if (!s.ok()) return fail(s);
  for (const auto& n : p.notes) out << "[WARNING] " << n << "\n";
  sum.Print(out);
  if (w && log::ShowInfo()) out << "[INFO] result written to " << result_path << (shard ? " (merge the shards with msaccucmp merge)" : "") << "\n";
  if (w && o.report == "html") {
    auto page = WriteHtmlReport(result_path);
    if (!page.ok()) return fail(page.status());
    if (log::ShowInfo()) out << "[INFO] report written to " << page.value() << "\n";
  }
  if (sum.Compared() == 0 && !shard) {  // every row SKIP: the dump and the golden data share nothing
    out << "[WARNING] no tensor pair could be compared (every row is SKIP); check that -m and -g come from the same model\n";
    return cli::kUsage;
  }
  if (o.advisor) {
    Status a = sum.Advise(dir, out);
    if (!a.ok()) return fail(a);
  }
  return 0;
}

}  // namespace npu::cmp
