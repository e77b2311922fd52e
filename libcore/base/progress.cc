#include "base/progress.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace npu {
namespace {

std::string Format(const char* with_ms) {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d%H%M%S", &tm);
  if (!with_ms) return buf;
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  char out[40];
  std::snprintf(out, sizeof out, "%s%03lld", buf, static_cast<long long>(ms));
  return out;
}

}  // namespace

std::string Timestamp14() { return Format(nullptr); }
std::string Timestamp17() { return Format("ms"); }

ProgressBar::ProgressBar(bool on, size_t total, std::string unit)
    : on_(on && ::isatty(STDERR_FILENO)), total_(total), unit_(std::move(unit)), start_(std::chrono::steady_clock::now()) {}

void ProgressBar::Update(size_t done) {
  if (!on_ || total_ == 0) return;
  constexpr int kWidth = 30;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  double eta = done ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - done) : 0;
  int filled = static_cast<int>(kWidth * done / total_);
  std::fprintf(stderr, "\r[%s%s] %zu/%zu %s ETA %.0fs ", std::string(filled, '#').c_str(), std::string(kWidth - filled, ' ').c_str(),
               done, total_, unit_.c_str(), eta);
  if (done == total_) std::fprintf(stderr, "\n");
}

}  // namespace npu
