// The aclprofGetOp* readers on the bytes a program hands them (what it read from its subscription pipe): every
// getter on every index, one past the end included, through libascendcl's C interface.
#include "acl/acl.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint32_t count = 0;
  if (aclprofGetOpNum(data, size, &count) != ACL_SUCCESS) count = 0;
  char text[ACL_PROF_MAX_OP_NAME_LEN];
  for (uint32_t i = 0; i <= count; ++i) {
    size_t len = 0;
    (void)aclprofGetOpTypeLen(data, size, i, &len);
    (void)aclprofGetOpType(data, size, i, text, sizeof text);
    (void)aclprofGetOpNameLen(data, size, i, &len);
    (void)aclprofGetOpName(data, size, i, text, sizeof text);
    (void)aclprofGetOpStart(data, size, i);
    (void)aclprofGetOpEnd(data, size, i);
    (void)aclprofGetOpDuration(data, size, i);
    (void)aclprofGetModelId(data, size, i);
  }
  return 0;
}
