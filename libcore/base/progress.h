// Shared console helpers every tool repeats: timestamps for output names and a progress bar (TTY only).
#pragma once
#include <chrono>
#include <cstddef>
#include <string>

namespace npu {

// Local time as YYYYmmddHHMMSS (CANN's result-file stamps), or with milliseconds (17 digits: PROF and aoe names).
std::string Timestamp14();
std::string Timestamp17();

// "[####      ] 3/10 <unit> ETA 5s" on stderr, redrawn in place; silent unless `on` and stderr is a terminal.
class ProgressBar {
 public:
  ProgressBar(bool on, size_t total, std::string unit);
  void Update(size_t done);

 private:
  bool on_;
  size_t total_;
  std::string unit_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace npu
