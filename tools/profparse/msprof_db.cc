#include "msprof_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/progress.h"
#include "msprof_tables.h"
#include "prof/platform.h"
#include "raw_profile.h"

namespace npu::profparse {
namespace fs = std::filesystem;

namespace {

// msprof's db_constant.h: SCHEMA_VERSION 1.2.0 (the same before and after CANN 8.5).
constexpr const char* kSchemaMajor = "1";
constexpr const char* kSchemaMinor = "2";
constexpr const char* kSchemaMicro = "0";
// ENUM_API_TYPE's contents (the reference's Table 2).
constexpr std::pair<int, const char*> kApiTypes[] = {{20000, "acl"},  {15000, "model"}, {10000, "node"},  {5500, "communication"},
                                                     {5000, "runtime"}, {50001, "op"},    {50002, "queue"}, {50003, "trace"},
                                                     {50004, "mstx"}};
constexpr uint32_t kNoContext = UINT32_MAX;  // a task that is not a subtask of a subgraph

constexpr const char* kSchema = R"(
CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
CREATE TABLE META_DATA (name TEXT, value TEXT);
CREATE TABLE SESSION_TIME_INFO (startTimeNs INTEGER, endTimeNs INTEGER);
CREATE TABLE NPU_INFO (id INTEGER, name TEXT);
CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT);
CREATE TABLE TASK (startNs INTEGER, endNs INTEGER, deviceId INTEGER, connectionId INTEGER, globalTaskId INTEGER,
                   globalPid INTEGER, taskType INTEGER, contextId INTEGER, streamId INTEGER, taskId INTEGER, modelId INTEGER);
CREATE INDEX TaskIndex ON TASK (startNs, globalTaskId);
CREATE TABLE COMPUTE_TASK_INFO (name INTEGER, globalTaskId INTEGER, blockNum INTEGER, mixBlockNum INTEGER, taskType INTEGER,
                                opType INTEGER, inputFormats INTEGER, inputDataTypes INTEGER, inputShapes INTEGER,
                                outputFormats INTEGER, outputDataTypes INTEGER, outputShapes INTEGER, attrInfo INTEGER,
                                opState INTEGER, hf32Eligible INTEGER);
CREATE TABLE TASK_PMU_INFO (globalTaskId INTEGER, name INTEGER, value NUMERIC);
CREATE TABLE CANN_API (startNs INTEGER, endNs INTEGER, type INTEGER, globalTid INTEGER, connectionId INTEGER, name INTEGER);
CREATE TABLE AICORE_FREQ (deviceId INTEGER, timestampNs NUMERIC, freq INTEGER);
)";

struct StmtDeleter {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Stmt = std::unique_ptr<sqlite3_stmt, StmtDeleter>;

class Db {
 public:
  static Result<Db> Create(const std::string& path) {
    Db db;
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
      std::string why = raw ? sqlite3_errmsg(raw) : "out of memory";
      sqlite3_close(raw);
      return Status::Error("E13004", "--output", path, "cannot create the database: " + why);
    }
    db.db_.reset(raw);
    // One transaction, no journal: the file is a temporary that is renamed into place only when complete.
    NPU_RETURN_IF_ERROR(db.Exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN;"));
    NPU_RETURN_IF_ERROR(db.Exec(kSchema));
    return db;
  }
  Status Exec(const char* sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_.get(), sql, nullptr, nullptr, &err) == SQLITE_OK) return Status::Ok();
    std::string why = err ? err : sqlite3_errmsg(db_.get());
    sqlite3_free(err);
    return Status::Error("E13004", "--type", "db", "SQLite: " + why);
  }
  Result<Stmt> Prepare(const char* sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v2(db_.get(), sql, -1, &s, nullptr) != SQLITE_OK)
      return Status::Error("E19999", "--type", "db", std::string("SQLite: ") + sqlite3_errmsg(db_.get()));
    return Stmt(s);
  }
  // Binds the values in order (int64 or double) and runs the statement once.
  template <typename... V>
  Status Insert(sqlite3_stmt* s, V... values) {
    int i = 0;
    (Bind(s, ++i, values), ...);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Status::Error("E13004", "--type", "db", std::string("SQLite: ") + sqlite3_errmsg(db_.get()));
    return Status::Ok();
  }
  Status InsertText(sqlite3_stmt* s, int64_t id, const std::string& text) {
    sqlite3_bind_int64(s, 1, id);
    sqlite3_bind_text(s, 2, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    const int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE) return Status::Error("E13004", "--type", "db", std::string("SQLite: ") + sqlite3_errmsg(db_.get()));
    return Status::Ok();
  }
  Status Close() {
    NPU_RETURN_IF_ERROR(Exec("COMMIT;"));
    db_.reset();
    return Status::Ok();
  }

 private:
  static void Bind(sqlite3_stmt* s, int i, int64_t v) { sqlite3_bind_int64(s, i, v); }
  static void Bind(sqlite3_stmt* s, int i, uint64_t v) { sqlite3_bind_int64(s, i, static_cast<int64_t>(v)); }
  static void Bind(sqlite3_stmt* s, int i, uint32_t v) { sqlite3_bind_int64(s, i, v); }
  static void Bind(sqlite3_stmt* s, int i, int v) { sqlite3_bind_int64(s, i, v); }
  static void Bind(sqlite3_stmt* s, int i, double v) { sqlite3_bind_double(s, i, v); }
  struct Closer {
    void operator()(sqlite3* d) const { sqlite3_close(d); }
  };
  std::unique_ptr<sqlite3, Closer> db_;
};

// STRING_IDS: every string once.
class Strings {
 public:
  int64_t Id(const std::string& s) {
    auto [it, fresh] = ids_.emplace(s, static_cast<int64_t>(ids_.size()));
    return it->second;
  }
  const std::unordered_map<std::string, int64_t>& all() const { return ids_; }

 private:
  std::unordered_map<std::string, int64_t> ids_;
};

// Removes a temporary database that was not renamed into place.
struct TempFile {
  std::string path;
  bool keep = false;
  ~TempFile() {
    if (!keep) std::filesystem::remove(path);
  }
};

}  // namespace

Result<ExportResult> ExportDb(const std::string& prof_dir, const Options& o) {
  ExportResult res;
  NPU_ASSIGN_OR_RETURN(RawProfile p, LoadProfile(prof_dir));
  const DeviceInfo& d = p.device;
  const std::string out_dir = prof_dir + "/mindstudio_profiler_output";
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::Error("E13004", "--output", out_dir, "cannot create the directory: " + ec.message());
  const std::string name = "msprof_" + (o.stamp.empty() ? Timestamp14() : o.stamp) + ".db";
  TempFile tmp{out_dir + "/." + name + ".tmp"};
  fs::remove(tmp.path, ec);
  NPU_ASSIGN_OR_RETURN(Db db, Db::Create(tmp.path));
  Strings strings;
  NPU_ASSIGN_OR_RETURN(Stmt task, db.Prepare("INSERT INTO TASK VALUES (?,?,?,?,?,?,?,?,?,?,?)"));
  NPU_ASSIGN_OR_RETURN(Stmt info, db.Prepare("INSERT INTO COMPUTE_TASK_INFO VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"));
  NPU_ASSIGN_OR_RETURN(Stmt pmu_row, db.Prepare("INSERT INTO TASK_PMU_INFO VALUES (?,?,?)"));
  const ChipClass chip = ChipClassOf(d.platform);
  const std::vector<PmuColumn> pmu_cols = PmuColumns(chip, d.aic_metrics);
  std::vector<int64_t> pmu_names;
  for (const PmuColumn& c : pmu_cols) pmu_names.push_back(strings.Id(c.name));
  const int64_t na = strings.Id("N/A"), static_state = strings.Id("static"), no = strings.Id("NO");
  const uint64_t global_pid = d.pid;

  // Each iteration's tasks were launched by its aclmdlExecute: the API call's connection id links them to it.
  std::map<uint32_t, int64_t> connection_of_iteration;
  NPU_ASSIGN_OR_RETURN(Stmt api, db.Prepare("INSERT INTO CANN_API VALUES (?,?,?,?,?,?)"));
  int64_t connection_id = 0;
  for (const ApiCall& a : p.apis) {
    const int64_t connection = connection_id++;
    const uint32_t iteration = p.IterationOf(a.begin);  // the host clock is the simulated device's (1 GHz ticks)
    if (LaunchesTheModel(a) && iteration != kNoIteration) connection_of_iteration.emplace(iteration, connection);
    const uint64_t global_tid = global_pid << 32 | a.thread;
    NPU_RETURN_IF_ERROR(db.Insert(api.get(), a.begin, a.end, static_cast<int>(a.level), global_tid, connection, strings.Id(a.name)));
  }

  NPU_ASSIGN_OR_RETURN(TaskStream tasks, TaskStream::Open(p, true));
  NoteIncomplete(p, tasks.incomplete());
  res.raw_bytes = tasks.raw_bytes();
  uint64_t global_task = 0, first_ns = UINT64_MAX;
  const PmuSample* pmu = nullptr;
  for (DeviceTask h; tasks.Next(h, pmu); ++global_task) {
    const uint64_t start = d.NsOf(h.start_ticks), end = std::max(start, d.NsOf(h.end_ticks));
    first_ns = std::min(first_ns, start);
    if (h.iteration != kNoIteration) res.iterations = std::max<uint64_t>(res.iterations, h.iteration + 1ull);
    const NodeInfo* n = p.Node(h.stream_id, h.task_id);
    const int64_t type_id = strings.Id(std::string(p.KernelType(h.stream_id, h.task_id)));
    auto conn = connection_of_iteration.find(h.iteration);
    const int64_t connection = conn == connection_of_iteration.end() ? -1 : conn->second;
    NPU_RETURN_IF_ERROR(db.Insert(task.get(), start, end, 0, connection, global_task, global_pid, type_id, kNoContext,
                                  uint32_t{h.stream_id}, uint32_t{h.task_id}, 0));
    if (!n) continue;  // the runtime's own tasks (PROFILING_ENABLE, ...) have no compute info
    NPU_RETURN_IF_ERROR(db.Insert(info.get(), strings.Id(n->op_name), global_task, n->block_dim, uint64_t{n->mix_block_dim}, type_id,
                                  strings.Id(n->op_type), strings.Id(n->input_formats), strings.Id(n->input_dtypes),
                                  strings.Id(n->input_shapes), strings.Id(n->output_formats), strings.Id(n->output_dtypes),
                                  strings.Id(n->output_shapes), na, static_state, no));
    if (!pmu) continue;
    const PmuContext ctx{n->task_type, n->block_dim, n->mix_block_dim, static_cast<double>(end - start) / 1000};
    for (size_t i = 0; i < pmu_cols.size(); ++i)
      if (auto v = PmuValue(pmu_cols[i], *pmu, d, ctx)) NPU_RETURN_IF_ERROR(db.Insert(pmu_row.get(), global_task, pmu_names[i], *v));
  }
  NPU_RETURN_IF_ERROR(tasks.status());
  res.tasks = global_task;

  NPU_ASSIGN_OR_RETURN(Stmt kv, db.Prepare("INSERT INTO ENUM_API_TYPE VALUES (?,?)"));
  for (const auto& [id, api_name] : kApiTypes) NPU_RETURN_IF_ERROR(db.InsertText(kv.get(), id, api_name));
  NPU_ASSIGN_OR_RETURN(Stmt freq, db.Prepare("INSERT INTO AICORE_FREQ VALUES (?,?,?)"));
  if (first_ns != UINT64_MAX) NPU_RETURN_IF_ERROR(db.Insert(freq.get(), 0, static_cast<double>(first_ns), static_cast<int64_t>(d.aic_mhz + 0.5)));
  NPU_ASSIGN_OR_RETURN(Stmt session, db.Prepare("INSERT INTO SESSION_TIME_INFO VALUES (?,?)"));
  NPU_RETURN_IF_ERROR(db.Insert(session.get(), d.collection_begin_us * 1000, d.collection_end_us * 1000));
  NPU_ASSIGN_OR_RETURN(Stmt npu_info, db.Prepare("INSERT INTO NPU_INFO VALUES (?,?)"));
  NPU_RETURN_IF_ERROR(db.InsertText(npu_info.get(), 0, d.platform));
  NPU_ASSIGN_OR_RETURN(Stmt host, db.Prepare("INSERT INTO HOST_INFO VALUES (?,?)"));
  sqlite3_bind_text(host.get(), 1, d.host_uid.data(), static_cast<int>(d.host_uid.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(host.get(), 2, d.host_name.data(), static_cast<int>(d.host_name.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(host.get()) != SQLITE_DONE) return Status::Error("E13004", "--type", "db", "SQLite: cannot write HOST_INFO");
  NPU_RETURN_IF_ERROR(db.Exec(("INSERT INTO META_DATA VALUES ('SCHEMA_VERSION', '" + std::string(kSchemaMajor) + "." + kSchemaMinor + "." +
                               kSchemaMicro + "'), ('SCHEMA_VERSION_MAJOR', '" + kSchemaMajor + "'), ('SCHEMA_VERSION_MINOR', '" +
                               kSchemaMinor + "'), ('SCHEMA_VERSION_MICRO', '" + kSchemaMicro + "');")
                                  .c_str()));
  NPU_ASSIGN_OR_RETURN(Stmt ids, db.Prepare("INSERT INTO STRING_IDS VALUES (?,?)"));
  for (const auto& [text, id] : strings.all()) NPU_RETURN_IF_ERROR(db.InsertText(ids.get(), id, text));
  for (Stmt* s : {&task, &info, &pmu_row, &api, &kv, &freq, &session, &npu_info, &host, &ids}) s->reset();
  NPU_RETURN_IF_ERROR(db.Close());
  fs::rename(tmp.path, out_dir + "/" + name, ec);
  if (ec) return Status::Error("E13004", "--output", out_dir + "/" + name, "cannot rename the database into place: " + ec.message());
  tmp.keep = true;
  res.files.push_back(name);
  res.warnings = p.warnings;
  if (tasks.unmatched_pmu()) res.warnings.push_back(std::to_string(tasks.unmatched_pmu()) + " AI Core task(s) without a matching PMU record: no TASK_PMU_INFO rows for them");
  return res;
}

}  // namespace npu::profparse
