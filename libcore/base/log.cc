#include "base/log.h"

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <string>

namespace npu::log {
namespace {
std::atomic<Level> g_level{Level::kNull};
std::atomic<bool> g_stdout{false};
std::mutex g_mu;
constexpr const char* kNames[] = {"DEBUG", "INFO", "WARNING", "ERROR", "NULL"};
}  // namespace

std::optional<Level> ParseLevel(std::string_view s) {
  static constexpr std::string_view names[] = {"debug", "info", "warning", "error", "null"};
  for (int i = 0; i < 5; ++i) {
    if (s == names[i] || (s.size() == 1 && s[0] == '0' + i)) return static_cast<Level>(i);
  }
  return std::nullopt;
}

void SetLevel(Level level) { g_level = level; }
Level GetLevel() { return g_level; }
bool Enabled(Level level) { return level != Level::kNull && level >= g_level.load(std::memory_order_relaxed); }

void InitFromEnv() {
  if (const char* v = std::getenv("ASCEND_GLOBAL_LOG_LEVEL"))
    if (auto l = ParseLevel(v)) SetLevel(*l);
  if (const char* v = std::getenv("ASCEND_SLOG_PRINT_TO_STDOUT")) g_stdout = std::string_view(v) == "1";
}

void Write(Level level, std::string_view module, const std::string& text) {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%d-%H:%M:%S", &tm);
  std::lock_guard lock(g_mu);
  std::fprintf(g_stdout ? stdout : stderr, "[%s] %.*s(%d):%s.%03d %s\n", kNames[static_cast<int>(level)],
               static_cast<int>(module.size()), module.data(), static_cast<int>(getpid()), stamp,
               static_cast<int>(ms), text.c_str());
}

}  // namespace npu::log
