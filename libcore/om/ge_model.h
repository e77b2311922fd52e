// The .om files CANN's ATC writes: MODEL_DEF is a ge.proto.ModelDef (npukit's schema: ge_ir.proto). Loads one
// into an OmModel — its ops with their CANN types, attributes and framework names, descs, Const weights located
// in WEIGHTS_DATA — for atc --mode=1/--mode=6 and msaccucmp's fusion rule. It has no npukit tasks: the kernels
// CANN compiled are in TBE_KERNELS, which npukit does not run.
#pragma once
#include <string>

#include "base/status.h"
#include "om/om_file.h"
#include "om/om_model.h"

namespace npu {

Result<OmModel> LoadCannOm(const om::OmFile& f, const std::string& path, size_t profile);

}  // namespace npu
