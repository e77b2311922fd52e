#include "subscribe.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "ir/node_attrs.h"

namespace npu::acl {

std::optional<OpRecord> RecordAt(const void* info, size_t len, uint32_t index, std::string* why) {
  if (!info) return *why = "opInfo is null", std::nullopt;
  if (len == 0 || len % sizeof(OpRecord) != 0)
    return *why = "opInfoLen " + std::to_string(len) + " is not a whole number of op records (aclprofGetOpDescSize: " + std::to_string(sizeof(OpRecord)) + " bytes)",
           std::nullopt;
  if (index >= len / sizeof(OpRecord))
    return *why = "index " + std::to_string(index) + " is past the " + std::to_string(len / sizeof(OpRecord)) + " op record(s) (aclprofGetOpNum)", std::nullopt;
  OpRecord r;
  std::memcpy(&r, static_cast<const char*>(info) + index * sizeof(OpRecord), sizeof r);  // the buffer need not be aligned
  const bool terminated = std::memchr(r.type, 0, sizeof r.type) && std::memchr(r.name, 0, sizeof r.name);
  if (r.tag != kOpRecordTag || !terminated) return *why = "the bytes at index " + std::to_string(index) + " are not an op record that a subscription wrote", std::nullopt;
  return r;
}

namespace {

void CopyCut(char* dst, size_t cap, const std::string& s) {
  const size_t n = std::min(s.size(), cap - 1);
  std::memcpy(dst, s.data(), n);
  std::memset(dst + n, 0, cap - n);
}


// A pipe whose reader is gone answers EPIPE and raises SIGPIPE, whose default ends the process: the program's
// inference must go on, so the signal is held for the write and a raised one taken back.
class SigpipeHeld {
 public:
  SigpipeHeld() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &old_);
  }
  ~SigpipeHeld() {
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &now) > 0) {
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  SigpipeHeld(const SigpipeHeld&) = delete;
  SigpipeHeld& operator=(const SigpipeHeld&) = delete;

 private:
  sigset_t pipe_, old_;
};

}  // namespace

void OpSubscriber::AfterTask(const TaskEvent& e) {
  if (!e.timing || e.node.has_attr(kRemovedViewAttr)) return;  // no time on the device, or not an op of the .om
  OpRecord r{};
  r.tag = kOpRecordTag;
  r.model_id = model_id_;
  r.start_ns = static_cast<uint64_t>(e.sim_start_ns);
  r.end_ns = static_cast<uint64_t>(e.sim_start_ns + e.timing->duration_ns);
  CopyCut(r.type, sizeof r.type, e.node.ascend_type.empty() ? e.node.op_type : e.node.ascend_type);
  CopyCut(r.name, sizeof r.name, e.node.name);
  pending_.push_back(r);
}

void OpSubscriber::AfterIteration(uint64_t, double, double) {
  const auto* bytes = reinterpret_cast<const std::byte*>(pending_.data());
  {
    std::lock_guard lock(mu_);
    if (error_.empty()) queue_.insert(queue_.end(), bytes, bytes + pending_.size() * sizeof(OpRecord));
  }
  pending_.clear();
  wake_.notify_one();
}

OpSubscriber::OpSubscriber(uint32_t model_id, int fd) : model_id_(model_id), fd_(fd), writer_([this] { WriteLoop(); }) {}

OpSubscriber::~OpSubscriber() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

std::string OpSubscriber::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

// Writes only when poll says the pipe takes PIPE_BUF bytes, whole records of at most PIPE_BUF at a time: such a write
// never blocks (so the loop keeps seeing `stopping_`) and is atomic, so a reader never sees part of a record.
void OpSubscriber::WriteLoop() {
  constexpr int kPollMs = 50;
  constexpr auto kFlushTime = std::chrono::seconds(3);
  std::chrono::steady_clock::time_point give_up{};
  std::vector<std::byte> chunk(PIPE_BUF / sizeof(OpRecord) * sizeof(OpRecord));
  for (;;) {
    size_t n = 0;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_ && give_up == std::chrono::steady_clock::time_point{}) give_up = std::chrono::steady_clock::now() + kFlushTime;
      if (queue_.empty() || (stopping_ && std::chrono::steady_clock::now() > give_up)) return;
      n = std::min(queue_.size(), chunk.size());
      std::copy_n(queue_.begin(), n, chunk.begin());
    }
    pollfd p{fd_, POLLOUT, 0};
    if (::poll(&p, 1, kPollMs) <= 0) continue;  // the reader has not made room yet
    ssize_t written = -1;
    int err = 0;
    {
      SigpipeHeld held;
      if (p.revents & POLLOUT) written = ::write(fd_, chunk.data(), n);
      err = errno;  // before the guard's sigtimedwait sets it
    }
    if (written < 0 && err == EINTR) continue;
    std::lock_guard lock(mu_);
    if (written <= 0) {
      error_ = "writing op records to fd " + std::to_string(fd_) + ": " + ((p.revents & POLLOUT) ? std::strerror(err) : "the pipe's reader is gone");
      queue_.clear();
      return;
    }
    queue_.erase(queue_.begin(), queue_.begin() + written);
  }
}

}  // namespace npu::acl
