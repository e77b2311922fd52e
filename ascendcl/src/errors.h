// What every AscendCL call repeats: recording a failure for aclGetRecentErrMsg (per thread, as CANN keeps it)
// and returning its code. Messages follow npukit's form: the call, the parameter and its value, why, what to do.
#pragma once
#include <string>
#include <string_view>

#include "acl/acl_base.h"
#include "base/status.h"

namespace npu::acl {

// Records "<call>: <message>" as the thread's recent error and returns `code`.
aclError Fail(aclError code, const char* call, const std::string& message);
// The same for a failure libcore explained: `cause` (its code, parameter and value) is kept for npukit's own
// tools (RecentStatus); `note` is added to its reason.
aclError Fail(aclError code, const char* call, const Status& cause, std::string_view note = {});
// The thread's recent error message, then cleared ("" when there was none), as aclGetRecentErrMsg returns it.
const char* RecentError();

}  // namespace npu::acl
