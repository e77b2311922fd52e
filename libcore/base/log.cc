#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

namespace npu::log {
namespace {
std::atomic<Level> g_level{Level::kNull};
std::atomic<bool> g_stdout{false};
std::atomic<bool> g_chosen{false};
std::mutex g_mu;
constexpr const char* kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "NULL"};
// Log files as CANN's tools keep them: <ASCEND_PROCESS_LOG_PATH or ~/ascend/log>/debug/plog/plog-<pid>_<ts>.log,
// a new file once one passes this size.
constexpr long kMaxLogFileBytes = 20L << 20;

struct LogFile {
  std::FILE* f = nullptr;
  long written = 0;
  bool failed = false;  // could not create the folder or file: stop trying, keep logging to the terminal
  ~LogFile() {
    if (f) std::fclose(f);
  }
  void Append(const char* line, size_t n, const char* stamp) {
    if (failed) return;
    if (!f || written > kMaxLogFileBytes) Open(stamp);
    if (!f) return;
    written += static_cast<long>(std::fwrite(line, 1, n, f));
    std::fflush(f);
  }
  void Open(const char* stamp) {
    if (f) std::fclose(f), f = nullptr;
    const char* root = std::getenv("ASCEND_PROCESS_LOG_PATH");
    const char* home = std::getenv("HOME");
    std::string dir = (root && *root ? std::string(root) : std::string(home ? home : ".") + "/ascend/log") + "/debug/plog";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string path = dir + "/plog-" + std::to_string(getpid()) + "_" + stamp + ".log";
    f = ec ? nullptr : std::fopen(path.c_str(), "a");
    failed = f == nullptr;
    written = 0;
  }
};
LogFile g_file;
}  // namespace

std::optional<Level> ParseLevel(std::string_view s) {
  static constexpr std::string_view names[] = {"debug", "info", "warning", "error", "null"};
  for (int i = 0; i < 5; ++i) {
    if (s == names[i] || (s.size() == 1 && s[0] == '0' + i)) return static_cast<Level>(i);
  }
  return std::nullopt;
}

void SetLevel(Level level) {
  g_level = level;
  g_chosen = true;
}
bool LevelChosen() { return g_chosen; }
bool ShowInfo() { return !g_chosen || Enabled(Level::kInfo); }
Level GetLevel() { return g_level; }
bool Enabled(Level level) { return level != Level::kNull && level >= g_level.load(std::memory_order_relaxed); }

void InitFromEnv() {
  if (const char* v = std::getenv("ASCEND_GLOBAL_LOG_LEVEL"))
    if (auto l = ParseLevel(v)) SetLevel(*l);
  if (const char* v = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT")) g_stdout = std::string_view(v) == "1";
}

namespace {

// "[ERROR] ATC(123):2026-01-02-03:04:05.678 text\n" and the file name's stamp, for one line at `now`.
std::pair<std::string, std::string> FormatLine(Level level, std::string_view module, const std::string& text) {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H:%M:%S", &tm);
  char line_head[128];
  int head = std::snprintf(line_head, sizeof line_head, "[%s] %.*s(%d):%s.%03d ", kNames[static_cast<int>(level)],
                           static_cast<int>(std::min<size_t>(module.size(), 32)), module.data(), static_cast<int>(getpid()), stamp,
                           static_cast<int>(ms));
  std::string line = std::string(line_head, static_cast<size_t>(std::max(head, 0))) + text + "\n";
  char file_stamp[32];
  std::strftime(file_stamp, sizeof file_stamp, "%Y%m%d%H%M%S", &tm);
  return {std::move(line), file_stamp};
}

}  // namespace

void Write(Level level, std::string_view module, const std::string& text) {
  auto [line, file_stamp] = FormatLine(level, module, text);
  std::lock_guard lock(g_mu);
  std::fputs(line.c_str(), g_stdout ? stdout : stderr);
  g_file.Append(line.data(), line.size(), file_stamp.c_str());
}

void RecordError(std::string_view module, const std::string& text) {
  if (g_chosen && g_level.load() == Level::kNull) return;
  auto [line, file_stamp] = FormatLine(Level::kError, module, text);
  std::lock_guard lock(g_mu);
  g_file.Append(line.data(), line.size(), file_stamp.c_str());
}

}  // namespace npu::log
