// aclprofModelSubscribe: each execution of a subscribed model writes one op record per task to the user's pipe,
// which the aclprofGetOp* readers decode. The record is npukit's own (programs size their reads with
// aclprofGetOpDescSize and read fields through the getters only); each holds a tag so the readers refuse bytes
// that are not records.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
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

// Observes one model's sessions: collects each iteration's tasks and writes them to `fd` at its end.
class OpSubscriber : public TaskObserver {
 public:
  OpSubscriber(uint32_t model_id, int fd) : model_id_(model_id), fd_(fd) {}
  void AfterTask(const TaskEvent& e) override;
  void AfterIteration(uint64_t iteration, double start_ns, double end_ns) override;
  // The first write that failed (the reader closed the pipe), or "".
  const std::string& error() const { return error_; }

 private:
  uint32_t model_id_;
  int fd_;
  std::vector<OpRecord> pending_;
  std::string error_;
};

}  // namespace npu::acl
