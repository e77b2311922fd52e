// TensorFlow frozen GraphDef (.pb, or .pbtxt text) -> ir::Graph, for atc --framework=3 and msame's reference
// path. The GraphDef is parsed with npukit's own schema (tf_graph.proto) from a memory map with every Const's
// tensor_content cut out first (frontend/weight_cut.h), so the weights stay in the file. Placeholders are the
// inputs; Identity-like ops and control edges go; each TF op becomes npukit's internal ops with CANN's Ascend
// IR type and the TF node name kept for dumps. Unsupported ops (control flow, functions, string and resource
// ops, anything unknown) are all reported in one E13010 error.
#pragma once
#include <string>

#include "base/status.h"
#include "frontend/importer.h"

namespace npu {

Result<Graph> ImportTensorFlow(const std::string& path, const ImportOptions& opts, ModelInfo* info = nullptr);
const Importer& TensorFlowImporter();

}  // namespace npu
