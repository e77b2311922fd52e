// Caffe (.prototxt text + .caffemodel binary) -> ir::Graph, for atc --framework=0 and msame's reference path.
// Both files are read with npukit's own schema (caffe_net.proto). Old nets (the V1 `layers` form) are upgraded
// as Caffe's upgrade_proto does; weights are matched to layers by name; in-place layers (top == bottom) get
// values of their own; each layer becomes npukit's internal ops with CANN's Ascend IR type and the layer name
// kept for dumps.
#pragma once
#include <string>

#include "base/status.h"
#include "frontend/importer.h"

namespace npu {

Result<Graph> ImportCaffe(const std::string& prototxt, const ImportOptions& opts, ModelInfo* info = nullptr);
const Importer& CaffeImporter();

}  // namespace npu
