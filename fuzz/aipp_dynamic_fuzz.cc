// Dynamic AIPP's parameter block (ir/aipp_config.h), as the Aipp kernel reads it from a model input: every image
// of a batch of 2 into a 3x8x8 model input, from image slots of 400 bytes.
#include "ir/aipp_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> block(reinterpret_cast<const std::byte*>(data), size);
  for (int64_t n = 0; n <= 2; ++n) (void)npu::AippFromDynamic(block, n, {2, 3, 8, 8}, 400);
  return 0;
}
