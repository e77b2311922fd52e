#include "custom_metrics.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/json.h"
#include "commands.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

constexpr const char* kPython = "/usr/bin/python3";  // Debian's, which has numpy

// The worker: loads every alg_<Name>.py, checks compare() takes exactly three parameters, answers "ready" (or
// "error: ..."), then one JSON line [[value, message], ...] per "npu.npy\tgolden.npy" line. The scripts' own
// prints go to stderr so they cannot break the protocol.
constexpr const char* kWorker = R"PY(
import importlib.util, inspect, json, sys
import numpy as np
out = sys.stdout
sys.stdout = sys.stderr
root, names = sys.argv[1], sys.argv[2:]
algs = []
try:
    for n in names:
        spec = importlib.util.spec_from_file_location("alg_" + n, f"{root}/algorithm/alg_{n}.py")
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        fn = getattr(mod, "compare", None)
        if fn is None or len(inspect.signature(fn).parameters) != 3:
            raise ValueError(f"alg_{n}.py needs a function compare(my, golden, args) with exactly three parameters")
        algs.append(fn)
except Exception as e:
    print("error: " + f"{type(e).__name__}: {e}".replace("\n", " "), file=out, flush=True)
    sys.exit(1)
print("ready", file=out, flush=True)
class Args:
    pass
for line in sys.stdin:
    a, b = line.rstrip("\n").split("\t")
    x, y = np.load(a), np.load(b)
    row = []
    for fn in algs:
        try:
            value, message = fn(x, y, Args())
            row.append([str(value), str(message)])
        except Exception as e:
            row.append(["NaN", f"{type(e).__name__}: {e}".replace("\n", " ")])
    print(json.dumps(row), file=out, flush=True)
)PY";

Status Bad(const std::string& value, const std::string& why, const std::string& fix = "") {
  return Status::Error("E10001", "-c", value, why, fix);
}

std::string ReadLine(FILE* f) {
  std::string line;
  for (int c; (c = std::fgetc(f)) != EOF && c != '\n';) line += static_cast<char>(c);
  return line;
}

}  // namespace

Result<std::unique_ptr<CustomMetrics>> CustomMetrics::Start(const std::string& dir, std::vector<std::string>& warnings) {
  std::error_code ec;
  fs::path algs = fs::path(dir) / "algorithm";
  if (!fs::is_directory(algs, ec)) return Bad(dir, "no algorithm/ folder in it", "Put the metrics in DIR/algorithm/alg_<Name>.py.");
  std::unique_ptr<CustomMetrics> m(new CustomMetrics());
  for (const auto& e : fs::directory_iterator(algs, ec)) {
    std::string file = e.path().filename().string();
    if (!file.starts_with("alg_") || !file.ends_with(".py")) continue;
    struct stat st {};
    if (::stat(e.path().c_str(), &st) != 0) return Bad(e.path().string(), "cannot be read");
    if (st.st_uid != ::geteuid() && st.st_uid != 0)
      return Bad(e.path().string(), "is owned by another user: it would run with your rights", "Own the script, or copy it.");
    if (st.st_mode & S_IWOTH) return Bad(e.path().string(), "anyone may write it: it would run with your rights", "chmod o-w it.");
    if (st.st_mode & S_IWGRP) warnings.push_back(e.path().string() + " is group-writable");
    m->names_.push_back(file.substr(4, file.size() - 7));
  }
  std::sort(m->names_.begin(), m->names_.end());
  if (m->names_.empty()) return Bad(dir, "algorithm/ holds no alg_<Name>.py");
  char tmpl[] = "/tmp/npukit-custom-XXXXXX";
  if (!::mkdtemp(tmpl)) return Bad(dir, "cannot create a scratch folder");
  m->scratch_ = tmpl;
  ::signal(SIGPIPE, SIG_IGN);  // a worker that dies mid-run is a row message, not the end of msaccucmp
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return Bad(dir, "cannot start the Python worker");
  std::vector<std::string> args = {kPython, "-c", kWorker, dir};
  args.insert(args.end(), m->names_.begin(), m->names_.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  m->pid_ = ::fork();
  if (m->pid_ == 0) {
    ::dup2(in[0], 0), ::dup2(out[1], 1);
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    ::execv(kPython, argv.data());
    ::_exit(127);
  }
  ::close(in[0]), ::close(out[1]);
  m->to_ = ::fdopen(in[1], "w");
  m->from_ = ::fdopen(out[0], "r");
  if (m->pid_ < 0 || !m->to_ || !m->from_) return Bad(dir, "cannot start the Python worker");
  std::string hello = ReadLine(m->from_);
  if (hello != "ready")
    return Bad(dir, hello.empty() ? std::string("the Python worker (") + kPython + ") did not start" : hello.substr(hello.find(' ') + 1));
  return m;
}

CustomMetrics::~CustomMetrics() {
  if (to_) std::fclose(to_);  // EOF ends the worker's loop
  if (from_) std::fclose(from_);
  if (pid_ > 0) {
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  std::error_code ec;
  if (!scratch_.empty()) fs::remove_all(scratch_, ec);
}

std::vector<std::pair<std::string, std::string>> CustomMetrics::Compute(const LoadedTensor& npu, const LoadedTensor& golden) {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, std::string>> row(names_.size(), {"NaN", ""});
  const std::string a = scratch_ + "/npu.npy", b = scratch_ + "/golden.npy";
  Status s = WriteNpyBytes(a, *npu.dtype, npu.shape, npu.data);
  if (s.ok()) s = WriteNpyBytes(b, *golden.dtype, golden.shape, golden.data);
  if (!s.ok()) {
    for (auto& cell : row) cell.second = s.reason();
    return row;
  }
  std::fprintf(to_, "%s\t%s\n", a.c_str(), b.c_str());
  std::fflush(to_);
  nlohmann::json j = ParseJson(ReadLine(from_));
  for (size_t i = 0; i < row.size(); ++i) {
    if (!j.is_array() || i >= j.size() || !j[i].is_array() || j[i].size() != 2 || !j[i][0].is_string() || !j[i][1].is_string())
      row[i].second = "the custom metric worker stopped answering";
    else
      row[i] = {j[i][0].get<std::string>(), j[i][1].get<std::string>()};
  }
  return row;
}

}  // namespace npu::cmp
