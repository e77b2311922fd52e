// Levelled logging. The level comes from --log or ASCEND_GLOBAL_LOG_LEVEL (0 debug, 1 info,
// 2 warning, 3 error, 4 null); ASCEND_SLOG_PRINT_TO_STDOUT=1 sends log lines to stdout instead of stderr.
// Every line also goes to <ASCEND_PROCESS_LOG_PATH or ~/ascend/log>/debug/plog/plog-<pid>_<ts>.log (a new file
// every 20 MiB), as CANN's tools keep their logs.
#pragma once
#include <chrono>
#include <optional>
#include <sstream>
#include <string_view>

namespace npu::log {

enum class Level { kDebug = 0, kInfo, kWarning, kError, kNull };

std::optional<Level> ParseLevel(std::string_view name);  // "debug".."null" or "0".."4"
void SetLevel(Level level);
Level GetLevel();
// Whether --log or ASCEND_GLOBAL_LOG_LEVEL chose a level (tools print their own [INFO] lines unless one did
// and it is above info).
bool LevelChosen();
// A tool's own "[INFO] ..." progress lines: shown unless a level above info was chosen (--log=error silences
// them in every tool; results are printed regardless).
bool ShowInfo();
// Reads ASCEND_GLOBAL_LOG_LEVEL and ASCEND_SLOG_PRINT_TO_STDOUT; called once by each tool's main.
void InitFromEnv();
bool Enabled(Level level);
void Write(Level level, std::string_view module, const std::string& text);
// An error the tool has already printed to the user: written to the plog file only, as CANN's default level
// (error) keeps it there, unless --log / ASCEND_GLOBAL_LOG_LEVEL chose null.
void RecordError(std::string_view module, const std::string& text);
// Milliseconds since `start`, for "took N ms" lines.
inline double MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace npu::log

#define NPU_LOG(level, module, stream_expr)                                  \
  do {                                                                       \
    if (::npu::log::Enabled(::npu::log::Level::level)) {                     \
      std::ostringstream npu_os_;                                            \
      npu_os_ << stream_expr;                                                \
      ::npu::log::Write(::npu::log::Level::level, module, npu_os_.str());    \
    }                                                                        \
  } while (0)
