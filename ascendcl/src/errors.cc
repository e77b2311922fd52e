#include "errors.h"

#include "base/log.h"
#include "tool_hooks.h"

namespace npu::acl {
namespace {
thread_local std::string recent, handed_out;
thread_local Status recent_status;
}  // namespace

aclError Fail(aclError code, const char* call, const std::string& message) {
  recent = "E" + std::to_string(code) + ": " + call + ": " + message;
  // A failure libcore did not explain is a misuse of the interface: in npukit's own tools, an internal error.
  recent_status = Status::Error("E19999", call, "ACL error " + std::to_string(code), message);
  log::RecordError("ACL", recent);  // the plog, where CANN writes its runtime errors
  return code;
}

aclError Fail(aclError code, const char* call, const Status& cause, std::string_view note) {
  Status kept = cause;
  if (!note.empty()) kept.with_note(note);
  Fail(code, call, kept.message());
  recent_status = std::move(kept);
  return code;
}

const char* RecentError() {
  handed_out = std::move(recent);  // the pointer stays valid until the thread's next call here
  recent.clear();
  return handed_out.c_str();
}

Status RecentStatus() { return recent_status; }

}  // namespace npu::acl
