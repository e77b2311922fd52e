// The fusions that belong to importing a framework model, not to compiling it for a SoC: a framework op that a
// neighbour takes in as its parameter (TF's BiasAdd into the Conv2D or MatMul before it, a zero Pad into the conv
// it feeds, Caffe's Scale into the BatchNorm before it), then TF's layout transposes cancelled (frontend/layout.h).
//
// Translators emit each framework op on its own; these passes run once after every importer, on the reference
// path too, so a golden dump and an NPU dump name the same ops. A fused node keeps the names of the ops it took
// in (`original_names`, in graph order) and the name of the last one's node, which dumps and msaccucmp use.
#pragma once
#include <span>
#include <string_view>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct ImportPass {
  std::string_view name;  // for --dump_after and the pass timings
  Status (*run)(Graph&);
};

// In the order they run.
std::span<const ImportPass> ImportPasses();

}  // namespace npu
