#include "ops/schemas.h"

#include <mutex>

#include "ops/families.h"

namespace npu {

void RegisterBuiltinSchemas() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterElementwiseSchemas();
    RegisterConvSchemas();
    RegisterMatMulSchemas();
    RegisterNormSchemas();
    RegisterPoolSchemas();
    RegisterShapeSchemas();
    RegisterReduceSchemas();
    RegisterResizeSchemas();
    RegisterAippSchemas();
    RegisterQuantSchemas();
    RegisterRnnSchemas();
    RegisterDetectionSchemas();
  });
}

}  // namespace npu
