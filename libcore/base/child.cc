#include "base/child.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace npu {

std::string ChildOutcome::Describe() const {
  if (!started) return "could not be started";
  if (signal > 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with " + std::to_string(exit_code);
}

ChildOutcome RunInChild(const std::function<void()>& work) {
  ChildOutcome out;
  pid_t pid = ::fork();
  if (pid < 0) {
    out.started = false;
    return out;
  }
  if (pid == 0) {
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDOUT_FILENO), ::dup2(null, STDERR_FILENO);
    work();
    ::_exit(0);  // no atexit handlers, no flushing of the parent's buffers a second time
  }
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
