// aclprofModelSubscribe: each execution of a subscribed model writes one op record per task to the user's pipe,
// which the aclprofGetOp* readers decode. The record is npukit's own (programs size their reads with
// aclprofGetOpDescSize and read fields through the getters only); each holds a tag so the readers refuse bytes
// that are not records.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl_prof.h"
#include "runtime/runtime.h"

namespace npu::acl {

struct OpRecord {
  uint32_t tag;  // kOpRecordTag
  uint32_t model_id;
  uint64_t start_ns, end_ns;  // simulated device time since the model's session began
  char type[ACL_PROF_MAX_OP_TYPE_LEN];  // NUL-terminated, cut to fit
  char name[ACL_PROF_MAX_OP_NAME_LEN];
};
inline constexpr uint32_t kOpRecordTag = 0x504f504e;  // "NPOP"

// Record `index` of a reader's buffer, or nullopt (with the reason in `why`) when the buffer is null, not a whole
// number of records, the index is past them, or the bytes there are not a record.
std::optional<OpRecord> RecordAt(const void* info, size_t len, uint32_t index, std::string* why);

// Observes one model's sessions: collects each iteration's tasks and queues them at its end for a writer thread,
// which writes them to `fd` as the reader drains the pipe. An execution never waits for the reader, so a program
// that reads only after aclmdlExecute returns does not deadlock on a full pipe (64 KiB: about 190 records).
class OpSubscriber : public TaskObserver {
 public:
  OpSubscriber(uint32_t model_id, int fd);
  // Unsubscribing: what the reader takes within a few seconds is still written, then the rest is dropped.
  ~OpSubscriber() override;
  OpSubscriber(const OpSubscriber&) = delete;
  OpSubscriber& operator=(const OpSubscriber&) = delete;
  void AfterTask(const TaskEvent& e) override;
  void AfterIteration(uint64_t iteration, double start_ns, double end_ns) override;
  // The first write that failed (the reader closed the pipe), or "".
  std::string error() const;

 private:
  void WriteLoop();

  const uint32_t model_id_;
  const int fd_;
  std::vector<OpRecord> pending_;  // this iteration's, on the executing thread
  mutable std::mutex mu_;          // guards the rest
  std::condition_variable wake_;
  std::deque<std::byte> queue_;
  bool stopping_ = false;
  std::string error_;
  std::thread writer_;  // last: it starts once the members above exist
};

}  // namespace npu::acl
