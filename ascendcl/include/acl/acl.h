/* npukit's AscendCL: what `#include "acl/acl.h"` gives a program written for an Ascend device (CANN's acl.h
 * interface): initialisation and the runtime and model headers. */
#ifndef NPUKIT_ACL_ACL_H_
#define NPUKIT_ACL_ACL_H_

#include "acl_base.h"
#include "acl_mdl.h"
#include "acl_prof.h"
#include "acl_rt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version this interface follows (CANN 8.0's AscendCL). */
#define ACL_MAJOR_VERSION 1
#define ACL_MINOR_VERSION 0
#define ACL_PATCH_VERSION 0

/* Once per process. configPath: NULL, "" or a JSON file (msame's acl.json: "dump" and "profiler" sections). */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);
ACL_FUNC_VISIBILITY aclError aclrtGetVersion(int32_t *majorVersion, int32_t *minorVersion, int32_t *patchVersion);

#ifdef __cplusplus
}
#endif

#endif /* NPUKIT_ACL_ACL_H_ */
