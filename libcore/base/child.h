// Running work a third-party library does on untrusted input in a child process, so that a fault inside the
// library (which no check of ours sees first) ends the child, not the tool.
#pragma once
#include <functional>
#include <string>

namespace npu {

// How a child that ran some work ended.
struct ChildOutcome {
  bool ok = false;      // exited with 0
  int signal = 0;       // > 0: killed by this signal
  int exit_code = 0;    // otherwise its exit code (a sanitizer's report exits with 1)
  bool started = true;  // false: fork failed (the caller may run the work in-process)
  std::string Describe() const;  // "killed by signal 11 (Segmentation fault)", "exited with 1"
};

// Runs `work` in a forked child with stdout and stderr sent to /dev/null and waits for it. The child shares
// nothing back: this only says whether the work can be done without a fault. The child must not take a lock
// the parent holds (only the forking thread exists in it).
ChildOutcome RunInChild(const std::function<void()>& work);

}  // namespace npu
