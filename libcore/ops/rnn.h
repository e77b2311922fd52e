// The recurrent ops LSTM, GRU and RNN (ONNX opsets 7-14): their gate counts and the shapes their attributes
// and inputs describe, shared by shape inference, the kernel and the cost model.
#pragma once
#include <cstdint>
#include <string>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct RnnDims {
  int64_t gates = 1;       // LSTM 4 (i, o, f, c), GRU 3 (z, r, h), RNN 1
  int64_t directions = 1;  // 2 when bidirectional
  int64_t seq = 0, batch = 0, input = 0, hidden = 0;
  bool batch_first = false;  // opset 14's layout = 1: X is (batch, seq, input), Y (batch, seq, dirs, hidden)
};

// Whether op_type is LSTM, GRU or RNN.
bool IsRnn(std::string_view op_type);
// The dims of node `n` given the shapes of X and W (negative dims when unknown).
Result<RnnDims> RnnDimsOf(const Node& n, const Shape& x, const Shape& w);
// Output shapes: Y, Y_h (and Y_c, the same as Y_h).
Shape RnnYShape(const RnnDims& d);
Shape RnnStateShape(const RnnDims& d);

}  // namespace npu
