// GE op types (the TBE ops of an .om CANN's ATC built, the ops of a MindSpore AIR) as npukit's kernels: one row
// per type (ge_ops.cc), each with the function that turns its GE attributes into the kernel's.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "frontend/importer.h"
#include "ir/graph.h"

namespace npu {

// Ops a real .om holds that compute nothing (atomic clean, stream and event bookkeeping): the runtime honours
// them by ordering, which a one-stream simulation already gives, so they are left out of the graph.
bool IsGeBookkeepingOp(std::string_view type);

// Maps every node from its GE type and attributes to npukit's. A node it cannot map keeps its GE type and is
// listed in `unrunnable` with the reason.
void MapGeOps(Graph& g, std::vector<UnsupportedNode>& unrunnable);

struct Window {
  int64_t stride, pad_begin, pad_end;
};
// One spatial dim of a conv whose attributes the .om does not keep (CANN 20.x drops strides and pads once the
// TBE kernel is built; the shapes stay): the smallest stride for which VALID, then SAME (TF's two paddings; SAME
// puts the odd pixel at the end, as TF does) makes `out` from `in` with a `k`-wide window. A model whose
// attributes are kept (newer CANN, AIR) never comes here.
std::optional<Window> InferWindow(int64_t in, int64_t out, int64_t k);

}  // namespace npu
