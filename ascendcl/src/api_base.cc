// The C interface of acl_base.h and acl.h: initialisation, data buffers, fp16 helpers, error messages.
#include "acl/acl.h"
#include "base/half.h"
#include "errors.h"
#include "handles.h"
#include "ir/dtype.h"
#include "models.h"
#include "runtime.h"

using npu::acl::Fail;
using npu::acl::Runtime;

namespace npu::acl {
Handles<aclDataBuffer>& DataBuffers() {
  static auto* h = new Handles<aclDataBuffer>();
  return *h;
}
}  // namespace npu::acl
using npu::acl::DataBuffers;

extern "C" {

aclError aclInit(const char* configPath) {
  std::lock_guard lock(Runtime::Get().mu);
  return Runtime::Get().Init(configPath);
}

aclError aclFinalize(void) {
  std::lock_guard lock(Runtime::Get().mu);
  return Runtime::Get().Finalize();
}

aclError aclrtGetVersion(int32_t* majorVersion, int32_t* minorVersion, int32_t* patchVersion) {
  if (!majorVersion || !minorVersion || !patchVersion) return Fail(ACL_ERROR_INVALID_PARAM, "aclrtGetVersion", "a version pointer is null");
  *majorVersion = ACL_MAJOR_VERSION, *minorVersion = ACL_MINOR_VERSION, *patchVersion = ACL_PATCH_VERSION;
  return ACL_SUCCESS;
}

const char* aclGetRecentErrMsg(void) { return npu::acl::RecentError(); }

float aclFloat16ToFloat(aclFloat16 value) { return npu::HalfToFloat(value); }
aclFloat16 aclFloatToFloat16(float value) { return npu::FloatToHalf(value); }

aclDataBuffer* aclCreateDataBuffer(void* data, size_t size) { return DataBuffers().Make(aclDataBuffer{data, size}); }

aclError aclDestroyDataBuffer(const aclDataBuffer* dataBuffer) {
  if (!DataBuffers().Destroy(dataBuffer))
    return Fail(ACL_ERROR_INVALID_PARAM, "aclDestroyDataBuffer", "dataBuffer " + npu::acl::PointerText(dataBuffer) + " is not a live buffer (aclCreateDataBuffer)");
  return ACL_SUCCESS;
}

aclError aclUpdateDataBuffer(aclDataBuffer* dataBuffer, void* data, size_t size) {
  if (!DataBuffers().Live(dataBuffer))
    return Fail(ACL_ERROR_INVALID_PARAM, "aclUpdateDataBuffer", "dataBuffer " + npu::acl::PointerText(dataBuffer) + " is not a live buffer (aclCreateDataBuffer)");
  dataBuffer->data = data;
  dataBuffer->size = size;
  return ACL_SUCCESS;
}

void* aclGetDataBufferAddr(const aclDataBuffer* dataBuffer) { return DataBuffers().Live(dataBuffer) ? dataBuffer->data : nullptr; }
uint32_t aclGetDataBufferSize(const aclDataBuffer* dataBuffer) { return DataBuffers().Live(dataBuffer) ? static_cast<uint32_t>(dataBuffer->size) : 0; }
size_t aclGetDataBufferSizeV2(const aclDataBuffer* dataBuffer) { return DataBuffers().Live(dataBuffer) ? dataBuffer->size : 0; }

size_t aclDataTypeSize(aclDataType dataType) {
  switch (dataType) {
    case ACL_FLOAT: case ACL_INT32: case ACL_UINT32: return 4;
    case ACL_FLOAT16: case ACL_BF16: case ACL_INT16: case ACL_UINT16: return 2;
    case ACL_INT8: case ACL_UINT8: case ACL_BOOL: return 1;
    case ACL_INT64: case ACL_UINT64: case ACL_DOUBLE: case ACL_COMPLEX64: return 8;
    case ACL_COMPLEX128: return 16;
    default: return 0;
  }
}

}  // extern "C"
