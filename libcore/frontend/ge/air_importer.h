// MindSpore AIR (atc --framework=1): a bare serialized ge.proto.ModelDef, each Const's bytes inline in its
// TensorDef. Read by frontend/ge/ge_graph.h, the reader the .om of CANN's ATC goes through, so an op type
// either front end takes runs the same way. Ops with no npukit kernel are all reported in one E13010 error.
#pragma once
#include <string>

#include "base/status.h"
#include "frontend/importer.h"

namespace npu {

Result<Graph> ImportAir(const std::string& path, const ImportOptions& opts, ModelInfo* info = nullptr);
const Importer& AirImporter();

}  // namespace npu
