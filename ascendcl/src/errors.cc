#include "errors.h"

#include "base/log.h"

namespace npu::acl {
namespace {
thread_local std::string recent, handed_out;
}  // namespace

aclError Fail(aclError code, const char* call, const std::string& message) {
  recent = "E" + std::to_string(code) + ": " + call + ": " + message;
  log::RecordError("ACL", recent);  // the plog, where CANN writes its runtime errors
  return code;
}

const char* RecentError() {
  handed_out = std::move(recent);  // the pointer stays valid until the thread's next call here
  recent.clear();
  return handed_out.c_str();
}

}  // namespace npu::acl
