#include "subscribe.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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
  const char* p = reinterpret_cast<const char*>(pending_.data());
  size_t left = pending_.size() * sizeof(OpRecord);
  SigpipeHeld held;
  while (left > 0 && error_.empty()) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = std::string("writing op records to fd ") + std::to_string(fd_) + ": " + std::strerror(errno);
      break;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  pending_.clear();
}

}  // namespace npu::acl
