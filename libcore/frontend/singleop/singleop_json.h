// CANN's single-op JSON (atc --singleop, aoe --singleop) as graphs of Ascend IR ops, each checked against its
// op's schema; every error is E10023..E10027 naming the op and the field.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct SingleOp {
  Graph graph;       // the op, its inputs x0, x1, ... and outputs y0, ..., shapes inferred and checked
  std::string name;  // "0_Add_float16_ND_8x16_...": the .om's file name, as CANN names it
};

// One graph per op description, in the file's order; nothing is returned unless every description is sound.
Result<std::vector<SingleOp>> ImportSingleOps(const std::string& path);
// Every op of the file in one graph of independent ops (what aoe --singleop tunes).
Result<Graph> ImportSingleOpsAsOneGraph(const std::string& path);

}  // namespace npu
