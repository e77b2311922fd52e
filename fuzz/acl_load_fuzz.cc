// aclmdlLoadFromMem on .om bytes, then the model's description: what a program does with a model it was given.
#include "acl/acl.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool ready = aclInit(nullptr) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS;
  if (!ready) return 0;
  uint32_t id = 0;
  if (aclmdlLoadFromMem(data, size, &id) != ACL_SUCCESS) return 0;
  aclmdlDesc* desc = aclmdlCreateDesc();
  if (aclmdlGetDesc(desc, id) == ACL_SUCCESS) {
    aclmdlIODims dims;
    for (size_t i = 0; i < aclmdlGetNumInputs(desc); ++i) {
      (void)aclmdlGetInputSizeByIndex(desc, i);
      (void)aclmdlGetInputDims(desc, i, &dims);
    }
    for (size_t i = 0; i < aclmdlGetNumOutputs(desc); ++i) (void)aclmdlGetOutputDims(desc, i, &dims);
  }
  (void)aclmdlDestroyDesc(desc);
  (void)aclmdlUnload(id);
  return 0;
}
