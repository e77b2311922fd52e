// Running work a third-party library does on untrusted input in a child process, so that a fault inside the
// library (which no check of ours sees first) ends the child, not the tool.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace npu {

// How a child that ran some work ended, and what it sent back.
struct ChildOutcome {
  bool ok = false;      // exited with 0
  int signal = 0;       // > 0: killed by this signal
  int exit_code = 0;    // otherwise its exit code (a sanitizer's report exits with 1)
  bool started = true;  // false: fork failed (the caller may run the work in-process)
  std::string output;   // what the work returned, when it ended normally
  std::string Describe() const;  // "killed by signal 11 (Segmentation fault)", "exited with 1"
};

// Pipe I/O to and from a child, retried on EINTR: false when the other end is gone (or `n` bytes never came).
bool WriteAll(int fd, std::string_view bytes);
bool ReadExact(int fd, void* to, size_t n);

// Waits for child `pid` to end and says how it did (`output` empty).
ChildOutcome WaitForChild(int pid);

// Ends a forked child with `code` the way _exit does (no atexit handlers, no second flush of the parent's
// buffers), after releasing the OpenMP runtime's hold outside the process (ThreadPool::ReleaseRuntimeInChild).
[[noreturn]] void EndChild(int code);

// Runs `work` in a forked child with stdout and stderr sent to /dev/null, and waits for it; the string `work`
// returns comes back in `output`. The child must not take a lock the parent holds (only the forking thread exists
// in it); it may end itself with EndChild(code) to say something other than success.
ChildOutcome RunInChild(const std::function<std::string()>& work);

}  // namespace npu
