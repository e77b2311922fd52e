// Subgraph tuning (--job_type=1, CANN's SGAT): per subgraph, the fusion, L2, stream and core-split decisions
// searched against the simulated end-to-end time of the whole model, the winners kept in the subgraph bank.
// The job is journaled in aoe_workspace/<model>_<timestamp>/ as it goes, so --reload resumes an interrupted
// one where it stopped.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <ostream>

#include "aoe.h"
#include "aoe_report.h"
#include "base/file_io.h"
#include "base/json.h"
#include "base/progress.h"
#include "base/text.h"
#include "compile/compile.h"
#include "sim/schedule.h"
#include "passes/fusion.h"
#include "runtime/runtime.h"
#include "tune/subgraph.h"
#include "tune/subgraph_search.h"

namespace npu::aoe {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// The imported model and what compiling it with a set of decisions costs on the simulated SoC.
class Evaluator {
 public:
  Evaluator(Graph g, const CompileConfig& config, const ModelInfo& info) : g0_(std::move(g)), config_(config), info_(info) {}
  // The rest of the pipeline (fusion, precision, formats, lowering) on the imported graph with `plans`.
  Result<OmModel> Compile(const std::vector<Subgraph>& subgraphs, const std::vector<SubgraphPlan>& plans) const {
    CompileState state;
    state.graph = g0_;
    state.info = info_;
    for (size_t i = 0; i < subgraphs.size(); ++i)
      if (!plans[i].builtin()) ApplySubgraphPlan(state.graph, subgraphs[i], plans[i]);
    NPU_RETURN_IF_ERROR(RunPasses(config_, state, pass::kGraphFusion, pass::kLowering));
    return std::move(state.model);
  }
  Result<double> TotalNs(const std::vector<Subgraph>& subgraphs, const std::vector<SubgraphPlan>& plans) {
    ++evaluations_;
    NPU_ASSIGN_OR_RETURN(OmModel m, Compile(subgraphs, plans));
    if (!soc_) {  // every compile targets the same chip
      NPU_ASSIGN_OR_RETURN(soc_, ModelSoc(m));
    }
    return ScheduleIteration(m.graph, m.tasks, *soc_).total_ns;
  }
  const Graph& graph() const { return g0_; }
  uint64_t evaluations() const { return evaluations_; }

 private:
  Graph g0_;
  const CompileConfig& config_;
  const ModelInfo& info_;
  std::shared_ptr<const SocSpec> soc_;
  uint64_t evaluations_ = 0;
};

// The job's folder and journal: job.json names the subgraphs (their keys), progress.jsonl gets one fsync'd
// line per finished subgraph.
struct Journal {
  fs::path dir;
  std::map<int, json> done;  // subgraph id -> its line
  Status Append(const json& line) {
    std::string text = DumpJson(line) + "\n";
    int fd = ::open((dir / "progress.jsonl").c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) return Status::Error("EG0010", "aoe_workspace", (dir / "progress.jsonl").string(), "cannot open the journal");
    bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    ::close(fd);
    if (!ok) return Status::Error("EG0010", "aoe_workspace", (dir / "progress.jsonl").string(), "cannot write the journal");
    done[line["id"].get<int>()] = line;
    return Status::Ok();
  }
};

std::vector<std::string> KeysOf(const std::vector<Subgraph>& subgraphs) {
  std::vector<std::string> keys;
  for (const auto& s : subgraphs) keys.push_back(s.key);
  return keys;
}

fs::path WorkspaceRoot() {
  const char* work = std::getenv("ASCEND_WORK_PATH");
  return fs::path(work && *work ? work : ".") / "aoe_workspace";
}

}  // namespace

// The job to resume: --reload=PATH, or the newest unfinished job of this model in aoe_workspace/.
Result<fs::path> FindJob(const std::string& reload, const std::string& model_stem) {
  if (!reload.empty()) {
    if (!fs::is_regular_file(fs::path(reload) / "job.json"))
      return Status::Error("EG0003", "--reload", reload, "not an aoe job folder (no job.json)", "Give a folder aoe_workspace/<model>_<timestamp>.");
    return fs::path(reload);
  }
  std::vector<fs::path> jobs;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(WorkspaceRoot(), ec))
    if (e.path().filename().string().starts_with(model_stem + "_") && fs::is_regular_file(e.path() / "job.json") &&
        !fs::exists(e.path() / "finished"))
      jobs.push_back(e.path());
  if (jobs.empty())
    return Status::Error("EG0003", "--reload", WorkspaceRoot().string(), "holds no unfinished subgraph tuning job of " + model_stem,
                         "Run without --reload, from the folder (or ASCEND_WORK_PATH) the interrupted job ran in.");
  std::sort(jobs.begin(), jobs.end());  // names end in the start timestamp
  return jobs.back();
}

namespace {

Result<Journal> OpenJournal(const AoeOptions& o, const std::string& model_stem, const std::string& stamp, const std::vector<Subgraph>& subgraphs) {
  Journal j;
  json keys = KeysOf(subgraphs);
  if (!o.reload) {
    j.dir = WorkspaceRoot() / (model_stem + "_" + stamp);
    std::error_code ec;
    fs::create_directories(j.dir, ec);
    if (ec) return Status::Error("EG0010", "aoe_workspace", j.dir.string(), "cannot create the job folder: " + ec.message());
    std::string text = DumpJson(json{{"model", o.model.model}, {"soc_version", o.model.soc_version}, {"subgraph_keys", keys}}, 2) + "\n";
    NPU_RETURN_IF_ERROR(WriteFileAtomic((j.dir / "job.json").string(), std::as_bytes(std::span(text.data(), text.size()))));
    return j;
  }
  NPU_ASSIGN_OR_RETURN(j.dir, FindJob(*o.reload, model_stem));
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString((j.dir / "job.json").string()));
  json job = ParseJson(text);
  if (job.is_discarded() || !job.is_object() || job.value("subgraph_keys", json()) != keys)
    return Status::Error("EG0003", "--reload", j.dir.string(), "the job was started on another model or with other options (its subgraphs differ)",
                         "Resume with the command that started the job, or run without --reload.");
  std::ifstream in(j.dir / "progress.jsonl");
  std::string line, kept;
  while (std::getline(in, line)) {
    json l = ParseJson(line);  // a line cut short by a kill is the one subgraph to redo
    if (l.is_object() && l.contains("id") && l["id"].is_number_integer() && l.contains("decision") && l["decision"].is_string()) {
      j.done[l["id"].get<int>()] = l;
      kept += line + "\n";
    }
  }
  // Drop the torn line, or the next appended one would run on from it.
  NPU_RETURN_IF_ERROR(WriteFileAtomic((j.dir / "progress.jsonl").string(), std::as_bytes(std::span(kept.data(), kept.size()))));
  return j;
}

// One model's subgraph tuning: the subgraphs, their decision spaces and the decisions taken so far.
struct Job {
  explicit Job(Evaluator& e) : ev(e) {}
  Evaluator& ev;
  std::vector<Subgraph> subgraphs;
  std::vector<SubgraphChoices> choices;
  std::vector<SubgraphPlan> plans;
  std::string context;
  SubgraphBank bank;
  Journal journal;
  bool repeat = false, exhaustive = false;
  std::map<std::string, size_t> decided;  // key -> the subgraph decided first this run (equal keys decide alike)

  Result<double> Ms() {
    NPU_ASSIGN_OR_RETURN(double ns, ev.TotalNs(subgraphs, plans));
    return ns * 1e-6;
  }

  struct Decision {
    std::string outcome;
    std::optional<double> model_ms = std::nullopt;  // the model's time with it, when the search already costed it
  };

  // Decides subgraph i (from the journal, an equal subgraph, the bank, or a search) given the model's time with
  // the decisions so far; fills the search counts into `entry`.
  Result<Decision> Decide(size_t i, double current_ms, json& summary, json& entry) {
    const Subgraph& s = subgraphs[i];
    if (auto done = journal.done.find(s.id); done != journal.done.end() && done->second["key"] == s.key) {
      NPU_ASSIGN_OR_RETURN(plans[i], SubgraphPlan::Parse(done->second["decision"].get<std::string>()));
      return Decision{"resumed"};  // decided before the interruption
    }
    if (auto same = decided.find(s.key); same != decided.end()) {
      plans[i] = plans[same->second];
      return Decision{"same_as_subgraph_" + std::to_string(same->second)};
    }
    if (const SubgraphRecord* hit = repeat ? nullptr : bank.Find(s.key)) {
      plans[i] = hit->plan;
      Count(summary, "repo_hit_num");
      return Decision{"repo_hit"};
    }
    PlanCost cost = [&](const std::vector<SubgraphPlan>& p) { return ev.TotalNs(subgraphs, p); };
    NPU_ASSIGN_OR_RETURN(SubgraphSearchResult r, SearchSubgraph(cost, plans, i, choices[i], current_ms * 1e6, exhaustive));
    entry["evaluations"] = r.evaluations;
    entry["space_size"] = r.space;
    bool banked = bank.Find(s.key) != nullptr;
    if (r.best_ns >= current_ms * 1e6 * (1 - 1e-9) && !banked) {  // a re-tune replaces what the bank held
      Count(summary, "repo_unsatisfied_num");
      return Decision{"unsatisfied", current_ms};  // the built-in decisions are already the best found
    }
    plans[i] = r.best;
    bank.Put({s.key, context, s.Describe(ev.graph()), r.best, current_ms, r.best_ns * 1e-6});
    NPU_RETURN_IF_ERROR(bank.Save());
    Count(summary, banked ? "repo_update_num" : "repo_add_num");
    return Decision{banked ? "update" : "add", r.best_ns * 1e-6};
  }

  // The tuned .om in the job folder (and at --output), then the marker that the job is finished.
  Result<fs::path> SaveTuned(const std::string& output) {
    NPU_ASSIGN_OR_RETURN(OmModel tuned, ev.Compile(subgraphs, plans));
    tuned.attrs["aoe_version"] = kVersion;
    tuned.attrs["subgraph_bank"] = bank.path();
    fs::path om = journal.dir / "tunespace" / "result" / (journal.dir.filename().string() + "_tune.om");
    std::error_code ec;
    fs::create_directories(om.parent_path(), ec);
    if (ec) return Status::Error("EG0010", "aoe_workspace", om.parent_path().string(), "cannot create the folder: " + ec.message());
    NPU_RETURN_IF_ERROR(SaveOm(om.string(), tuned));
    if (!output.empty()) NPU_RETURN_IF_ERROR(SaveOm(output + ".om", tuned));
    std::string marker = "finished\n";
    NPU_RETURN_IF_ERROR(WriteFileAtomic((journal.dir / "finished").string(), std::as_bytes(std::span(marker.data(), marker.size()))));
    return om;
  }
};

}  // namespace

Status TuneSubgraphs(const AoeOptions& o, const AoeModelOptions& mo, Report& report, std::ostream& out) {
  auto started = std::chrono::steady_clock::now();
  std::string stem = fs::path(mo.model).stem().string();
  NPU_ASSIGN_OR_RETURN(CompileConfig config, MakeCompileConfig(mo, CompileGoal::kConvert));
  CompileState imported;  // the framework model as Ascend IR before fusion: compiled again with every decision tried
  NPU_RETURN_IF_ERROR(RunPasses(config, imported, pass::kImport, pass::kAscendIRMapping));
  Evaluator ev(std::move(imported.graph), config, imported.info);
  NPU_ASSIGN_OR_RETURN(OmModel builtin, ev.Compile({}, {}));
  NPU_ASSIGN_OR_RETURN(auto soc, ModelSoc(builtin));
  Job job(ev);
  job.context = SubgraphContext(*soc, builtin.attrs["precision_mode"]);
  job.subgraphs = PartitionSubgraphs(ev.graph(), job.context);
  job.choices = ChoicesOf(ev.graph(), job.subgraphs, builtin.graph, soc->ai_cores);
  job.plans.resize(job.subgraphs.size());
  NPU_ASSIGN_OR_RETURN(job.bank, SubgraphBank::Open(SubgraphBank::DefaultPath(*soc)));
  NPU_ASSIGN_OR_RETURN(job.journal, OpenJournal(o, stem, Timestamp17(), job.subgraphs));
  job.repeat = RepeatTune();
  job.exhaustive = o.search == "exhaustive";
  NPU_ASSIGN_OR_RETURN(double baseline_ms, job.Ms());
  double current_ms = baseline_ms;

  json& sgat = report.Section();
  sgat["workspace"] = job.journal.dir.string();
  ProgressBar progress(o.progress_bar == "on", job.subgraphs.size(), "subgraphs");
  for (size_t i = 0; i < job.subgraphs.size(); ++i) {
    const Subgraph& s = job.subgraphs[i];
    json entry = {{"subgraph_id", s.id}, {"subgraph", s.Describe(ev.graph())}, {"key", s.key}, {"ops", s.nodes.size()},
                  {"model_performance_before(ms)", current_ms}, {"dimensions", job.choices[i].dims()}};
    NPU_ASSIGN_OR_RETURN(Job::Decision d, job.Decide(i, current_ms, sgat["repo_summary"], entry));
    const std::string& outcome = d.outcome;
    job.decided.emplace(s.key, i);
    if (outcome != "resumed" && !outcome.starts_with("same_as")) Count(sgat["repo_summary"], "total_num");
    if (d.model_ms) {
      current_ms = *d.model_ms;
    } else {
      NPU_ASSIGN_OR_RETURN(current_ms, job.Ms());
    }
    std::string decision = job.plans[i].ToString();
    entry.update({{"decision", decision}, {"model_performance_after(ms)", current_ms}, {"result", outcome}});
    sgat["subgraphs"].push_back(entry);
    if (outcome != "resumed")
      NPU_RETURN_IF_ERROR(job.journal.Append({{"id", s.id}, {"key", s.key}, {"decision", decision}, {"result", outcome}}));
    NPU_RETURN_IF_ERROR(report.Write());  // written as it goes
    out << "[Aoe]subgraph " << s.id << " (" << s.Describe(ev.graph()) << ") Tuning process finished: " << decision << "\n";
    progress.Update(i + 1);
  }
  NPU_ASSIGN_OR_RETURN(fs::path om, job.SaveTuned(mo.output));
  sgat.update({{"model_baseline_performance(ms)", baseline_ms}, {"model_result_performance(ms)", current_ms},
               {"model_performance_improvement", Percent(baseline_ms, current_ms)}, {"sgat_tune_result", "tune success"},
               {"subgraph_bank", job.bank.path()}, {"tuned_model", om.string()}});
  report.SetTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  NPU_RETURN_IF_ERROR(report.Write());
  out << "[Aoe]tuned model written to " << om.string() << (mo.output.empty() ? "" : " and " + mo.output + ".om") << "\n";
  out << "[Aoe]" << stem << " process finished. Performance improved by " << Percent(baseline_ms, current_ms) << " (simulated "
      << baseline_ms << " ms -> " << current_ms << " ms per inference on " << soc->name << ")\n";
  return Status::Ok();
}

}  // namespace npu::aoe
