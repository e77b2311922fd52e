// Channels-last front ends (TensorFlow's NHWC) reach npukit's channels-first ops through transposes around
// each spatial op. This pass removes the transposes that cancel: it sinks each transpose below the
// elementwise ops that follow it (they compute the same in any layout; a constant operand is permuted to
// match) until it meets its inverse, so a chain of NHWC convolutions runs in NCHW between one transpose at
// the input and one where the layout matters again (a Reshape, a reduction over named axes, an output).
#pragma once
#include "base/status.h"
#include "ir/graph.h"

namespace npu {

Status CancelLayoutTransposes(Graph& g);

}  // namespace npu
