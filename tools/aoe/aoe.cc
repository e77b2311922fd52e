#include "aoe.h"
#include "aoe_report.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "base/cli.h"
#include "base/json.h"
#include "base/shard.h"
#include "base/file_io.h"
#include "base/log.h"
#include "base/progress.h"
#include "compile/compile.h"
#include "frontend/singleop/singleop_json.h"
#include "sim/schedule.h"
#include "kernels/registry.h"
#include "om/om_model.h"
#include "runtime/runtime.h"
#include "tune/bank.h"
#include "tune/search.h"

namespace npu::aoe {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

struct OpFilter {
  std::set<std::string> names, types;
  bool all = true;
};

Result<OpFilter> LoadOpFilter(const std::string& path) {
  OpFilter f;
  if (path.empty()) return f;
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  json j = npu::ParseJson(text);
  auto bad = [&](const std::string& why) {
    return Status::Error("EG0001", "--tune_ops_file", path, why, R"(Write {"tune_ops_name": ["op", ...], "tune_ops_type": ["Conv2D", ...]}.)");
  };
  if (j.is_discarded() || !j.is_object()) return bad("the file is not a JSON object");
  for (const auto& [k, v] : j.items()) {
    if (k != "tune_ops_name" && k != "tune_ops_type") return bad("unknown key \"" + k + "\"");
    if (!v.is_array()) return bad("\"" + k + "\" must be a list of strings");
    for (const auto& s : v) {
      if (!s.is_string() || s.get<std::string>().empty()) return bad("\"" + k + "\" must be a list of non-empty strings");
      (k == "tune_ops_name" ? f.names : f.types).insert(s.get<std::string>());
    }
  }
  if (f.names.empty() && f.types.empty()) return bad("names no operator");
  f.all = false;
  return f;
}

// The types a task answers to: its own, and those it absorbed by fusion (a fused op matches its types).
std::set<std::string> TypesOf(const Node& n, const Task& t) {
  std::set<std::string> types = {t.kernel_name, n.op_type};
  if (n.has_attr(kEpilogueOp)) types.insert(n.attr_string(kEpilogueOp));
  if (n.has_attr(kEpilogueResidualInput)) types.insert("Add");
  return types;
}

constexpr const char* kBadFlagValue = "EG0003";
// A bank a sharded run wrote says which shard it holds (a line "K/N"), so that `aoe bank merge` can tell an
// incomplete set of shards from a complete one.
constexpr const char* kShardMarker = "aoe_shard";

Status MarkShard(const std::string& root, const Shard& s) {
  std::error_code ec;
  fs::create_directories(root, ec);
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create((fs::path(root) / kShardMarker).string()));
  NPU_RETURN_IF_ERROR(w->Write(std::to_string(s.k) + "/" + std::to_string(s.n) + "\n"));
  return w->Commit();
}

// The shards among the bank roots to merge (none when no root came from a sharded run): every root of a sharded
// run must belong to the same N, and together they must hold shards 1..N.
Status CheckShardSet(const std::vector<std::string>& roots) {
  std::map<size_t, std::string> seen;
  size_t total = 0;
  for (const auto& root : roots) {
    const fs::path marker = fs::path(root) / kShardMarker;
    if (!FileExists(marker.string())) continue;
    NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(marker.string()));
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    auto s = ParseShard(text, "bank merge", {"EG0012", "EG0012"});
    if (!s.ok() || text.starts_with("auto")) return Status::Error("EG0012", "bank merge", marker.string(), "is not a K/N shard marker");
    if (total && s.value().n != total)
      return Status::Error("EG0012", "bank merge", root, "holds shard " + text + ", the others belong to a run split " + std::to_string(total) + " ways");
    total = s.value().n;
    if (!seen.emplace(s.value().k, root).second)
      return Status::Error("EG0012", "bank merge", root, "holds shard " + text + ", as " + seen[s.value().k] + " does", "Merge one bank per shard.");
  }
  std::string missing;
  for (size_t k = 1; k <= total; ++k)
    if (!seen.count(k)) missing += (missing.empty() ? "" : ",") + std::to_string(k);
  if (!missing.empty())
    return Status::Error("EG0012", "bank merge", "shards " + missing + " of " + std::to_string(total), "are missing among the banks",
                         "Tune those shards again (a Slurm array: sbatch --array=" + missing + " ... --shard auto/" + std::to_string(total) + "), then merge.");
  return Status::Ok();
}

// A single-op JSON (aoe --singleop, or a .json in --model_path) rather than an ONNX model.
bool IsSingleOpFile(const std::string& path) { return fs::path(path).extension() == ".json"; }

// The model as atc builds it with the subgraph bank's decisions but the built-in tilings (no operator bank):
// what operator tuning tunes, after subgraph tuning, as CANN orders them.
Result<OmModel> BuildModel(const AoeModelOptions& mo, std::vector<std::string>& warnings) {
  NPU_ASSIGN_OR_RETURN(CompileConfig config, MakeCompileConfig(mo, CompileGoal::kConvert));
  config.operator_bank = false;
  CompileState state;
  auto m = Compile(config, &state);
  warnings = std::move(state.warnings);
  return m;
}

// Every op description of a single-op JSON as one model of independent tasks, built-in tilings.
Result<OmModel> BuildSingleOps(const AoeModelOptions& mo) {
  NPU_ASSIGN_OR_RETURN(CompileConfig config, SingleOpConfig(mo));
  config.operator_bank = false;
  RegisterBuiltinOps();
  NPU_ASSIGN_OR_RETURN(Graph g, ImportSingleOpsAsOneGraph(mo.model));
  return CompileSingleOp(config, std::move(g));
}

Status TuneModel(const AoeOptions& o, const AoeModelOptions& mo, const OpFilter& filter, Report& report, std::ostream& out) {
  auto started = std::chrono::steady_clock::now();
  std::vector<std::string> warnings;
  bool single_ops = IsSingleOpFile(mo.model);
  NPU_ASSIGN_OR_RETURN(OmModel m, single_ops ? BuildSingleOps(mo) : BuildModel(mo, warnings));
  for (const auto& w : warnings) out << "[WARNING] " << w << "\n";
  NPU_ASSIGN_OR_RETURN(auto soc_ptr, ModelSoc(m));
  const SocSpec& soc = *soc_ptr;
  NPU_ASSIGN_OR_RETURN(TuneBank bank, TuneBank::Open(TuneBank::DefaultRoot(), soc));
  std::optional<Shard> shard;
  if (!o.shard.empty()) {  // K/N or auto (base/shard.h)
    NPU_ASSIGN_OR_RETURN(shard, ParseShard(o.shard, "--shard", {kBadFlagValue, "EG0000"}));
  }
  bool repeat = RepeatTune();
  SearchStrategy strategy = o.search == "exhaustive" ? SearchStrategy::kExhaustive : SearchStrategy::kGuided;
  IterationTiming before = ScheduleIteration(m.graph, m.tasks, soc);

  // Unique works to tune (tasks with the same key share one search and one bank record).
  std::map<std::string, std::vector<size_t>> by_key;
  std::vector<std::string> order;
  std::set<std::string> matched_names, matched_types;
  for (size_t k = 0; k < m.tasks.size(); ++k) {
    const Task& t = m.tasks[k];
    const Node& n = m.graph.nodes[t.op_index];
    const Work& w = before.tasks[k].work;
    if (!t.on_device() || !Tunable(w) || t.core_cap > 0) continue;  // a core-split share is a subgraph decision
    if (!filter.all) {
      bool by_name = filter.names.count(n.name) > 0;
      std::set<std::string> types = TypesOf(n, t);
      std::string type_hit;
      for (const auto& ty : types)
        if (filter.types.count(ty)) type_hit = ty;
      if (!by_name && type_hit.empty()) continue;
      if (by_name) matched_names.insert(n.name);
      if (!type_hit.empty()) matched_types.insert(type_hit);
    } else if (w.kind != WorkKind::kCube) {
      continue;  // by default aoe tunes cube ops; name vector ops in --tune_ops_file to tune them too
    }
    std::string key = TilingKey(w);
    if (shard && TilingKeyHash(key) % shard->n != shard->k - 1) continue;
    if (!by_key.count(key)) order.push_back(key);
    by_key[key].push_back(k);
  }
  for (const auto& name : filter.names)
    if (!matched_names.count(name)) out << "[WARNING] tune_ops_name " << name << " is not a tunable op of " << mo.model << "\n";
  for (const auto& type : filter.types)
    if (!matched_types.count(type)) out << "[WARNING] tune_ops_type " << type << " matches no tunable op of " << mo.model << "\n";

  json& opat = report.Section();
  json& summary = opat["repo_summary"];
  ProgressBar progress(o.progress_bar == "on", order.size(), "ops");
  for (size_t i = 0; i < order.size(); ++i) {
    const std::string& key = order[i];
    size_t k0 = by_key[key].front();
    const Task& t0 = m.tasks[k0];
    const Node& n0 = m.graph.nodes[t0.op_index];
    const TaskTiming& tt = before.tasks[k0];
    double before_ns = tt.duration_ns;
    json op = {{"op_name", n0.name}, {"op_type", t0.kernel_name}, {"tiling_key", key}, {"tasks", by_key[key].size()},
               {"performance_before_tune(us)", before_ns / 1000}, {"predicted_cycles_before", tt.cost.core_cycles}};
    const BankRecord* hit = repeat ? nullptr : bank.Find(key);
    Tiling chosen = t0.tiling;
    std::string outcome;
    if (hit && CheckTiling(tt.work, hit->tiling, soc).ok()) {
      chosen = hit->tiling;
      outcome = "repo_hit";
      Count(summary, "repo_hit_num");
    } else {
      SearchResult r = SearchTiling(tt.work, soc, tt.l2, strategy, t0.tiling);
      op["evaluations"] = r.evaluations;
      op["space_size"] = r.space_size;
      if (r.best_ns < before_ns * (1 - 1e-9)) {
        chosen = r.best;
        bool update = bank.Find(key) != nullptr;
        bank.Put({t0.kernel_name, key, r.best, before_ns / 1000, r.best_ns / 1000});
        outcome = update ? "update" : "add";
        Count(summary, update ? "repo_update_num" : "repo_add_num");
      } else {
        outcome = "unsatisfied";  // the built-in tiling is already the best found
        Count(summary, "repo_unsatisfied_num");
      }
    }
    for (size_t k : by_key[key]) {
      m.tasks[k].tiling = chosen;
      m.tasks[k].block_dim = static_cast<uint32_t>(chosen.block_dim);
      if (outcome != "unsatisfied") m.tasks[k].tiling_source = "tune_bank";
    }
    TaskCost after = EstimateTask(tt.work, chosen, soc, tt.l2);
    op["performance_after_tune(us)"] = after.duration_ns / 1000;
    op["performance_improvement"] = Percent(before_ns, after.duration_ns);
    op["predicted_cycles_after"] = after.core_cycles;
    op["bound_after"] = std::string(BoundName(after.bound));
    op["result"] = outcome;
    Count(summary, "total_num");
    if (outcome == "add" || outcome == "update") opat["repo_modified_operators"][outcome + "_repo_operators"].push_back(op);
    opat["operators"].push_back(op);
    NPU_RETURN_IF_ERROR(report.Write());  // written as it goes
    out << "[Aoe]" << n0.name << " Tuning process finished.\n";
    progress.Update(i + 1);
  }
  NPU_RETURN_IF_ERROR(bank.Save());
  if (shard) NPU_RETURN_IF_ERROR(MarkShard(TuneBank::DefaultRoot(), *shard));  // after the bank: a failed shard leaves no marker
  IterationTiming after = ScheduleIteration(m.graph, m.tasks, soc);
  opat["model_baseline_performance(ms)"] = before.total_ns * 1e-6;
  opat["model_result_performance(ms)"] = after.total_ns * 1e-6;
  opat["model_performance_improvement"] = Percent(before.total_ns, after.total_ns);
  opat["opat_tune_result"] = "tune success";
  opat["tune_bank"] = bank.dir();
  report.SetTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  NPU_RETURN_IF_ERROR(report.Write());
  if (!mo.output.empty() && single_ops)
    out << "[WARNING] --output: " << mo.model << " describes single ops, not a model; atc --singleop with TUNE_BANK_PATH builds them with the banked tilings\n";
  if (!mo.output.empty() && !single_ops) {
    m.attrs["aoe_version"] = kVersion;
    NPU_RETURN_IF_ERROR(SaveOm(mo.output + ".om", m));
    out << "[Aoe]tuned model written to " << mo.output << ".om\n";
  }
  out << "[Aoe]" << fs::path(mo.model).stem().string() << " process finished. Performance improved by "
      << Percent(before.total_ns, after.total_ns) << " (simulated " << before.total_ns * 1e-6 << " ms -> " << after.total_ns * 1e-6
      << " ms per inference on " << soc.name << ")\n";
  return Status::Ok();
}

}  // namespace

Status Report::Write() const {
  std::string text = DumpJson(root, 2) + "\n";
  return WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

std::string Percent(double before, double after) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", after > 0 ? (before / after - 1) * 100 : 0.0);  // CANN: before/after - 1
  return buf;
}

void Count(json& summary, const char* counter) { summary[counter] = summary.value(counter, 0) + 1; }

bool RepeatTune() {
  const char* v = std::getenv("REPEAT_TUNE");
  return v && (std::string_view(v) == "True" || std::string_view(v) == "true");
}

std::vector<Status> ValidateOptions(const AoeOptions& o) {
  std::vector<Status> errs;
  errs.insert(errs.end(), o.flag_errors.begin(), o.flag_errors.end());
  if (o.job_type.empty()) errs.push_back(Status::Error("EG0000", "--job_type", "", "--job_type is required: 1 (subgraph tuning) or 2 (operator tuning)"));
  else if (o.job_type != "1" && o.job_type != "2") errs.push_back(Status::Error("EG0003", "--job_type", o.job_type, "the value must be 1 or 2"));
  if (o.reload && o.job_type != "1")
    errs.push_back(Status::Error("EG0000", "--reload", *o.reload, "only subgraph tuning (--job_type=1) can be resumed", "Operator tuning skips what the bank holds: just run it again."));
  if (o.reload && !o.model_path.empty())
    errs.push_back(Status::Error("EG0000", "--reload", *o.reload, "resumes one model's job, not a --model_path batch", "Give --model."));
  if (o.job_type == "1" && !o.tune_ops_file.empty())
    errs.push_back(Status::Error("EG0000", "--tune_ops_file", o.tune_ops_file, "selects operators for operator tuning (--job_type=2)"));
  if (o.job_type == "1" && !o.shard.empty())
    errs.push_back(Status::Error("EG0000", "--shard", o.shard, "splits operator tuning (--job_type=2) only: subgraph decisions depend on each other"));
  if (o.model.model.empty() + o.model_path.empty() + o.singleop.empty() != 2)
    errs.push_back(Status::Error("EG0000", "--model", "", "give exactly one of --model, --model_path and --singleop"));
  if (!o.singleop.empty() && !FileExists(o.singleop)) errs.push_back(Status::Error("EG0011", "--singleop", o.singleop, "the file does not exist"));
  if (!o.singleop.empty() && o.job_type == "1")
    errs.push_back(Status::Error("EG0000", "--job_type", "1", "single-op descriptions have no subgraphs to tune", "Use --job_type=2."));
  if (!o.singleop.empty() && !o.model.soc_spec.empty())
    errs.push_back(Status::Error("EG0000", "--soc_spec", o.model.soc_spec, "single-op tuning takes a built-in --soc_version"));
  if (!o.model.model.empty() && !FileExists(o.model.model)) errs.push_back(Status::Error("EG0011", "--model", o.model.model, "the file does not exist"));
  if (!o.model_path.empty() && !fs::is_directory(o.model_path)) errs.push_back(Status::Error("EG0011", "--model_path", o.model_path, "not a directory"));
  if (!FindImporter(o.model.framework))
    errs.push_back(Status::Error("EG0003", "--framework", o.model.framework, "this build tunes models of " + SupportedFrameworks()));
  if (o.model.soc_version.empty() && o.model.soc_spec.empty()) errs.push_back(Status::Error("EG0000", "--soc_version", "", "--soc_version is required"));
  else if (o.model.soc_spec.empty() && !FindSoc(o.model.soc_version))
    errs.push_back(Status::Error("EG0003", "--soc_version", o.model.soc_version, "supported SoCs are " + SocNames()));
  if (o.search != "guided" && o.search != "exhaustive") errs.push_back(Status::Error("EG0003", "--search", o.search, "the value must be guided or exhaustive"));
  if (!o.shard.empty())
    if (auto s = ParseShard(o.shard, "--shard", {kBadFlagValue, "EG0000"}); !s.ok()) errs.push_back(s.status());
  if (o.progress_bar != "on" && o.progress_bar != "off") errs.push_back(Status::Error("EG0003", "--progress_bar", o.progress_bar, "the value must be on or off"));
  if (!o.model.log.empty() && !log::ParseLevel(o.model.log))
    errs.push_back(Status::Error("EG0003", "--log", o.model.log, "the log level must be one of debug, info, warning, error, null"));
  if (const char* bank = std::getenv("TUNE_BANK_PATH"); bank && *bank) {
    std::error_code ec;
    if (!fs::is_directory(bank, ec))
      errs.push_back(Status::Error("EG0002", "TUNE_BANK_PATH", bank, "the directory does not exist", "Create it (CANN requires an existing bank root) or unset the variable."));
    else if (::access(bank, R_OK | W_OK | X_OK) != 0)
      errs.push_back(Status::Error("EG0002", "TUNE_BANK_PATH", bank, "no read/write access", "Fix the permissions or point TUNE_BANK_PATH elsewhere."));
  }
  return errs;
}

int RunBankCommand(const std::string& command, const std::vector<std::string>& args, std::ostream& out) {
  auto fail = [&](const Status& s) {
    cli::PrintError(out, s);
    return 1;
  };
  auto usage = [&](const char* want) {
    cli::PrintError(out, Status::Error("EG0000", "bank " + command, std::to_string(args.size()) + " argument(s)", std::string("usage: aoe bank ") + want));
    return 2;
  };
  if (command == "verify") {
    if (args.size() != 1) return usage("verify ROOT");
    auto files = ReadBankTree(args[0]);
    if (!files.ok()) return fail(files.status());
    size_t records = 0;
    for (const auto& f : files.value()) records += f.lines.size();
    out << "[Aoe]bank " << args[0] << ": " << files.value().size() << " file(s), " << records << " record(s), all well-formed\n";
    return 0;
  }
  if (command == "merge") {
    if (args.size() < 2) return usage("merge OUT_ROOT ROOT...");
    std::string absent;
    size_t n_absent = 0;
    for (size_t i = 1; i < args.size(); ++i)
      if (std::error_code ec; !fs::is_directory(args[i], ec)) absent += (n_absent++ ? ", " : "") + args[i];
    if (n_absent > 0)
      return fail(Status::Error("EG0012", "bank merge", absent,
                                std::to_string(n_absent) + " of the " + std::to_string(args.size() - 1) + " bank folder(s) to merge do not exist",
                                "Give the bank folders the tuning runs wrote (npukit-slurm aoe: OUT/shards/<K>); the first "
                                "argument, " + args[0] + ", is the merged bank to write."));
    if (Status s = CheckShardSet({args.begin() + 1, args.end()}); !s.ok()) return fail(s);
    std::map<std::string, BankFile> merged;  // by relative path; per key the fastest tiling wins
    for (size_t i = 1; i < args.size(); ++i) {
      auto files = ReadBankTree(args[i]);
      if (!files.ok()) return fail(files.status());
      for (auto& f : files.value()) {
        BankFile& m = merged[f.relative_path];
        m.relative_path = f.relative_path;
        for (auto& [key, line] : f.lines) {
          auto it = m.after_us.find(key);
          if (it == m.after_us.end() || f.after_us[key] < it->second) m.lines[key] = line, m.after_us[key] = f.after_us[key];
        }
      }
    }
    std::vector<BankFile> out_files;
    size_t records = 0;
    for (auto& [path, f] : merged) records += f.lines.size(), out_files.push_back(std::move(f));
    if (Status s = WriteBankTree(args[0], out_files); !s.ok()) return fail(s);
    out << "[Aoe]merged " << args.size() - 1 << " bank(s) into " << args[0] << ": " << out_files.size() << " file(s), " << records << " record(s)\n";
    return 0;
  }
  if (command == "diff") {
    if (args.size() != 2) return usage("diff A B");
    auto a = ReadBankTree(args[0]), b = ReadBankTree(args[1]);
    if (!a.ok()) return fail(a.status());
    if (!b.ok()) return fail(b.status());
    std::map<std::string, std::pair<std::string, double>> in_a, in_b;  // path|key -> (line, after)
    for (auto [files, dst] : {std::pair{&a.value(), &in_a}, std::pair{&b.value(), &in_b}})
      for (const auto& f : *files)
        for (const auto& [key, line] : f.lines) (*dst)[f.relative_path + "|" + key] = {line, f.after_us.at(key)};
    size_t only_a = 0, only_b = 0, differ = 0;
    for (const auto& [k, v] : in_a) {
      auto it = in_b.find(k);
      if (it == in_b.end()) ++only_a, out << "- " << k << "\n";
      else if (it->second.first != v.first) ++differ, out << "~ " << k << " after " << v.second << " us -> " << it->second.second << " us\n";
    }
    for (const auto& [k, v] : in_b)
      if (!in_a.count(k)) ++only_b, out << "+ " << k << "\n";
    out << "[Aoe]only in A: " << only_a << ", only in B: " << only_b << ", different: " << differ << "\n";
    return only_a || only_b || differ ? 3 : 0;
  }
  cli::PrintError(out, Status::Error("EG0000", "bank", command, "unknown bank command", "Use verify, merge or diff."));
  return 2;
}

int RunAoe(const AoeOptions& o, std::ostream& out) {
  if (!o.bank_command.empty()) return RunBankCommand(o.bank_command, o.bank_args, out);
  auto errs = ValidateOptions(o);
  if (!errs.empty()) {
    for (const auto& e : errs) cli::PrintError(out, e);
    return cli::ExitCodeFor(errs);
  }
  if (!o.model.log.empty())
    if (auto l = log::ParseLevel(o.model.log)) log::SetLevel(*l);
  auto filter = LoadOpFilter(o.tune_ops_file);
  if (!filter.ok()) {
    cli::PrintError(out, filter.status());
    return 1;
  }
  std::vector<std::string> models;
  if (!o.model_path.empty()) {
    for (const auto& e : fs::directory_iterator(o.model_path))
      if (e.path().extension() == ".onnx" || (e.path().extension() == ".json" && o.job_type == "2")) models.push_back(e.path().string());
    std::sort(models.begin(), models.end());
    if (models.empty()) {
      cli::PrintError(out, Status::Error("EG0011", "--model_path", o.model_path, "holds no .onnx model or single-op .json description"));
      return cli::kUsage;  // nothing to do
    }
  } else {
    models.push_back(o.singleop.empty() ? o.model.model : o.singleop);
  }
  if (models.size() > 1 && !o.model.output.empty()) {  // --model_path: one tuned .om per model in the --output folder
    std::error_code ec;
    fs::create_directories(o.model.output, ec);
    if (ec) {
      cli::PrintError(out, Status::Error("EG0010", "--output", o.model.output, "cannot create the folder: " + ec.message()));
      return 1;
    }
  }
  if (o.reload)  // nothing to resume is an error before any result file or job folder exists
    if (auto job = FindJob(*o.reload, fs::path(models.front()).stem().string()); !job.ok()) {
      cli::PrintError(out, job.status());
      return 1;
    }
  auto started = std::chrono::steady_clock::now();
  std::string stamp = Timestamp17();
  const char* work = std::getenv("ASCEND_WORK_PATH");
  if (work && *work) {
    std::error_code ec;
    fs::create_directories(work, ec);
    if (ec) {
      cli::PrintError(out, Status::Error("EG0010", "ASCEND_WORK_PATH", work, "cannot create the directory: " + ec.message()));
      return 1;
    }
  }
  Report report;
  bool subgraph = o.job_type == "1";
  report.section = subgraph ? "SGAT" : "OPAT";
  report.path = std::string(work && *work ? work : ".") + (subgraph ? "/aoe_result_sgat_" : "/aoe_result_opat_") + stamp + "_pid" + std::to_string(::getpid()) + ".json";
  int rc = 0;
  for (const auto& model : models) {
    AoeModelOptions mo = o.model;
    mo.model = model;
    if (models.size() > 1 && !o.model.output.empty()) mo.output = o.model.output + "/" + fs::path(model).stem().string();
    report.report_key = "report_" + stamp + "_" + std::to_string(::gettid()) + (models.size() > 1 ? "_" + fs::path(model).stem().string() : "");
    json summary = {{"repo_add_num", 0}, {"repo_hit_num", 0}, {"repo_reserved_num", 0}, {"repo_unsatisfied_num", 0}, {"repo_update_num", 0}, {"total_num", 0}};
    json section = subgraph ? json{{"sgat_tune_result", "tuning"}, {"repo_summary", summary}, {"subgraphs", json::array()}}
                            : json{{"opat_tune_result", "tuning"},
                                   {"repo_modified_operators", {{"add_repo_operators", json::array()}, {"update_repo_operators", json::array()}}},
                                   {"repo_summary", summary}, {"tune_failed_operators", json::array()}, {"operators", json::array()}};
    report.root[report.report_key] = json::array(
        {{{"basic", {{"tuning_name", fs::path(model).stem().string()}, {"tuning_time(s)", 0}, {"soc_version", mo.soc_version}, {"search", o.search}}}},
         {{report.section, section}}});
    Status s = subgraph ? TuneSubgraphs(o, mo, report, out) : TuneModel(o, mo, filter.value(), report, out);
    if (!s.ok()) {
      report.Section()[subgraph ? "sgat_tune_result" : "opat_tune_result"] = "tune failed";
      (void)report.Write();
      cli::PrintError(out, s);
      rc = 1;
    }
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  out << "[Aoe]result: " << report.path << "\n";
  out << "[Aoe]Aoe process finished,cost time " << static_cast<long>(std::lround(secs)) << "s.\n";
  return rc;
}

}  // namespace npu::aoe
