#include "base/child.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/thread_pool.h"

namespace npu {
namespace {

std::string ReadAll(int fd) {
  std::string out;
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buf, static_cast<size_t>(n));
  }
}

}  // namespace

bool WriteAll(int fd, std::string_view s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool ReadExact(int fd, void* to, size_t n) {
  auto* p = static_cast<char*>(to);
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::read(fd, p + done, n - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    done += static_cast<size_t>(got);
  }
  return true;
}

std::string ChildOutcome::Describe() const {
  if (!started) return "could not be started";
  if (signal > 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with " + std::to_string(exit_code);
}

void EndChild(int code) {
  ThreadPool::ReleaseRuntimeInChild();
  ::_exit(code);
}

ChildOutcome RunInChild(const std::function<std::string()>& work) {
  ChildOutcome out;
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    out.started = false;
    return out;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipe_fds[0]), ::close(pipe_fds[1]);
    out.started = false;
    return out;
  }
  if (pid == 0) {
    ::close(pipe_fds[0]);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO), ::dup2(null, STDERR_FILENO);
    bool sent = WriteAll(pipe_fds[1], work());
    EndChild(sent ? 0 : 126);
  }
  ::close(pipe_fds[1]);
  std::string output = ReadAll(pipe_fds[0]);  // until the child's end closes the pipe
  ::close(pipe_fds[0]);
  out = WaitForChild(pid);
  if (out.ok) out.output = std::move(output);
  return out;
}

ChildOutcome WaitForChild(int pid) {
  ChildOutcome out;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      out.started = false;
      return out;
    }
  if (WIFSIGNALED(status)) out.signal = WTERMSIG(status);
  else out.exit_code = WEXITSTATUS(status);
  out.ok = out.signal == 0 && out.exit_code == 0;
  return out;
}

}  // namespace npu
