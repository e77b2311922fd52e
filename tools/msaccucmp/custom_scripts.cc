#include "custom_scripts.h"

#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "commands.h"
#include "dump/npy.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which has numpy

// The worker: loads every alg_<Name>.py and convert_<SRC>_to_<DST>.py, checks their functions' parameters,
// answers "ready" (or "error: ..."), then answers one JSON request line with one JSON line:
//   {"alg": [npu.npy, golden.npy]}                          -> [[value, message], ...] in metric order
//   {"convert": pair, "in": a.npy, "from": [..], "to": [..], "out": b.npy} -> {"error": ""} or the reason
// The scripts' own prints go to stderr so they cannot break the protocol.
constexpr const char* kWorker = R"PY(
import importlib.util, inspect, json, sys
import numpy as np
out = sys.stdout
sys.stdout = sys.stderr
root, metrics, pairs = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
def load(folder, stem, fn_name, params):
    spec = importlib.util.spec_from_file_location(stem, f"{root}/{folder}/{stem}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    fn = getattr(mod, fn_name, None)
    if fn is None or len(inspect.signature(fn).parameters) != 3:
        raise ValueError(f"{stem}.py needs a function {fn_name}({params}) with exactly three parameters")
    return fn
def why(e):
    return f"{type(e).__name__}: {e}".replace("\n", " ")
try:
    algs = [load("algorithm", "alg_" + n, "compare", "my, golden, args") for n in metrics]
    convs = {p: load("format_convert", "convert_" + p, "convert", "shape_from, shape_to, array") for p in pairs}
except Exception as e:
    print("error: " + why(e), file=out, flush=True)
    sys.exit(1)
print("ready", file=out, flush=True)
class Args:
    pass
def convert(req):
    a = np.load(req["in"])
    try:
        r = np.asarray(convs[req["convert"]](list(req["from"]), list(req["to"]), a))
    except Exception as e:
        return "convert_" + req["convert"] + ".py raised " + why(e)
    if r.dtype != a.dtype:
        return f"convert_{req['convert']}.py returned {r.dtype} for a {a.dtype} tensor; a layout conversion keeps the type"
    np.save(req["out"], np.ascontiguousarray(r))
    return ""
for line in sys.stdin:
    req = json.loads(line)
    if "alg" in req:
        x, y = np.load(req["alg"][0]), np.load(req["alg"][1])
        row = []
        for fn in algs:
            try:
                value, message = fn(x, y, Args())
                row.append([str(value), str(message)])
            except Exception as e:
                row.append(["NaN", why(e)])
        print(json.dumps(row), file=out, flush=True)
    else:
        print(json.dumps({"error": convert(req)}), file=out, flush=True)
)PY";

Status Bad(const std::string& value, const std::string& why, const std::string& fix = "") {
  return Status::Error("E10001", "-c", value, why, fix);
}

std::string ReadLine(FILE* f) {
  std::string line;
  for (int c; (c = std::fgetc(f)) != EOF && c != '\n';) line += static_cast<char>(c);
  return line;
}

// The stems of DIR/folder/<prefix>*.py (without the prefix), each checked as CANN checks them: a script
// another user owns or anyone may write would run with the caller's rights.
Result<std::vector<std::string>> Scripts(const fs::path& folder, const std::string& prefix, std::vector<std::string>& warnings) {
  std::vector<std::string> stems;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return stems;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    std::string file = e.path().filename().string();
    if (!file.starts_with(prefix) || !file.ends_with(".py")) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) return Bad(e.path().string(), "cannot be read");
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return Bad(e.path().string(), "is owned by another user: it would run with your rights", "Own the script, or copy it.");
    if (st.st_mode & S_IWOTH) return Bad(e.path().string(), "anyone may write it: it would run with your rights", "chmod o-w it.");
    if (st.st_mode & S_IWGRP) warnings.push_back(e.path().string() + " is group-writable");
    stems.push_back(file.substr(prefix.size(), file.size() - prefix.size() - 3));
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

}  // namespace

Result<std::unique_ptr<CustomScripts>> CustomScripts::Start(const std::string& dir, std::ostream& out) {
  if (dir.empty()) return std::unique_ptr<CustomScripts>();
  std::vector<std::string> warnings;
  NPU_ASSIGN_OR_RETURN(auto m, Launch(dir, warnings));
  for (const auto& w : warnings) out << "[WARNING] " << w << "\n";
  return m;
}

Result<std::unique_ptr<CustomScripts>> CustomScripts::Launch(const std::string& dir, std::vector<std::string>& warnings) {
  std::unique_ptr<CustomScripts> m(new CustomScripts());  // private constructor: make_unique cannot reach it
  m->dir_ = dir;
  NPU_ASSIGN_OR_RETURN(m->metrics_, Scripts(fs::path(dir) / "algorithm", "alg_", warnings));
  NPU_ASSIGN_OR_RETURN(std::vector<std::string> pairs, Scripts(fs::path(dir) / "format_convert", "convert_", warnings));
  for (const std::string& p : pairs) {
    size_t to = p.find("_to_");
    if (to == std::string::npos || !FormatFromName(p.substr(0, to)) || !FormatFromName(p.substr(to + 4)))
      return Bad((fs::path(dir) / "format_convert" / ("convert_" + p + ".py")).string(), "is not named convert_<SRC>_to_<DST>.py with two formats npukit knows (NCHW, NC1HWC0, FRACTAL_NZ, ...)");
    m->conversions_.insert(p);
  }
  if (m->metrics_.empty() && pairs.empty())
    return Bad(dir, "holds no algorithm/alg_<Name>.py and no format_convert/convert_<SRC>_to_<DST>.py");
  char tmpl[] = "/tmp/npukit-custom-XXXXXX";
  if (!::mkdtemp(tmpl)) return Bad(dir, "cannot create a scratch folder");
  m->scratch_ = tmpl;
  ::signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-run is a row message, not the end of msaccucmp
  int in[2] = {-1, -1}, out[2] = {-1, -1};
  auto close_all = [&] {
    for (int fd : {in[0], in[1], out[0], out[1]})
      if (fd >= 0) ::close(fd);
  };
  if (::pipe(in) != 0 || ::pipe(out) != 0) {
    close_all();
    return Bad(dir, "cannot start the Python worker: " + std::string(std::strerror(errno)));
  }
  // Names go over as JSON lists: a metric file may be named alg_<anything>.py, spaces included.
  std::vector<std::string> args = {kPython, "-c", kWorker, dir, DumpJson(nlohmann::json(m->metrics_)), DumpJson(nlohmann::json(pairs))};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // posix_spawn, not fork and exec: a forked child runs the OpenMP runtime's fork handler, which registers the
  // child in /dev/shm, and the exec'd interpreter never removes that file.
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  for (int fd : {in[0], in[1], out[0], out[1]}) posix_spawn_file_actions_addclose(&actions, fd);
  pid_t pid = -1;
  const int failed = ::posix_spawn(&pid, kPython, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]), ::close(out[1]);
  in[0] = out[1] = -1;
  if (failed) {
    close_all();
    return Bad(dir, std::string("cannot start the Python worker (") + kPython + "): " + std::strerror(failed));
  }
  m->pid_ = pid;
  m->to_ = ::fdopen(in[1], "w");
  if (m->to_) in[1] = -1;
  m->from_ = ::fdopen(out[0], "r");
  if (m->from_) out[0] = -1;
  close_all();  // whatever fdopen did not take
  if (!m->to_ || !m->from_) return Bad(dir, "cannot start the Python worker");
  std::string hello = ReadLine(m->from_);
  if (hello != "ready")
    return Bad(dir, hello.empty() ? std::string("the Python worker (") + kPython + ") did not start" : hello.substr(hello.find(' ') + 1));
  return m;
}

CustomScripts::~CustomScripts() {
  if (to_) std::fclose(to_);  // EOF ends the worker's loop
  if (from_) std::fclose(from_);
  if (pid_ > 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  if (!scratch_.empty()) fs::remove_all(scratch_, ec);
}

Result<std::string> CustomScripts::Ask(const std::string& request) {
  std::fprintf(to_, "%s\n", request.c_str());
  std::fflush(to_);
  std::string answer = ReadLine(from_);
  if (answer.empty()) return Bad(dir_, "the Python worker stopped answering");
  return answer;
}

std::vector<std::pair<std::string, std::string>> CustomScripts::Compute(const LoadedTensor& npu, const LoadedTensor& golden) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> row(metrics_.size(), {"NaN", ""});
  const std::string a = scratch_ + "/npu.npy", b = scratch_ + "/golden.npy";
  Status s = WriteNpyBytes(a, *npu.dtype, npu.shape, npu.data);
  if (s.ok()) s = WriteNpyBytes(b, *golden.dtype, golden.shape, golden.data);
  auto answer = s.ok() ? Ask(DumpJson(nlohmann::json({{"alg", {a, b}}}))) : Result<std::string>(s);
  if (!answer.ok()) {
    for (auto& cell : row) cell.second = answer.status().reason();
    return row;
  }
  nlohmann::json j = ParseJson(answer.value());
  for (size_t i = 0; i < row.size(); ++i) {
    if (!j.is_array() || i >= j.size() || !j[i].is_array() || j[i].size() != 2 || !j[i][0].is_string() || !j[i][1].is_string())
      row[i].second = "the custom metric worker gave no answer for it";
    else
      row[i] = {j[i][0].get<std::string>(), j[i][1].get<std::string>()};
  }
  return row;
}

Result<LaidOut> CustomScripts::Convert(const DumpTensor& t, std::string_view to, const std::vector<int64_t>& shape_to) {
  const std::string pair = std::string(FormatName(t.format)) + "_to_" + std::string(to);
  const GeType* d = FindGeType(t.dtype_code);
  if (!d || !d->descr) return Bad(dir_, "convert_" + pair + ".py cannot take a " + (d ? d->name : std::string("undecodable")) + " tensor: numpy has no such type");
  std::lock_guard<std::mutex> lock(mu_);
  const std::string a = scratch_ + "/from.npy", b = scratch_ + "/to.npy";
  NPU_RETURN_IF_ERROR(WriteNpyBytes(a, *d, t.shape, t.data));
  nlohmann::json req = {{"convert", pair}, {"in", a}, {"from", t.shape}, {"to", shape_to}, {"out", b}};
  NPU_ASSIGN_OR_RETURN(std::string answer, Ask(DumpJson(req)));
  nlohmann::json j = ParseJson(answer);
  if (!j.is_object() || !j.contains("error") || !j["error"].is_string()) return Bad(dir_, "the Python worker gave no answer for convert_" + pair + ".py");
  if (!j["error"].get<std::string>().empty()) return Bad(dir_, j["error"].get<std::string>());
  NPU_ASSIGN_OR_RETURN(Tensor r, ReadNpy(b));
  LaidOut out;
  out.shape = r.shape();
  auto bytes = r.bytes();
  out.bytes.assign(bytes.begin(), bytes.end());
  return out;
}

}  // namespace npu::cmp
