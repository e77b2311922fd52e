#include "ops/rnn.h"

#include "ops/families.h"

namespace npu {

bool IsRnn(std::string_view op_type) { return op_type == "LSTM" || op_type == "GRU" || op_type == "RNN"; }

Result<RnnDims> RnnDimsOf(const Node& n, const Shape& x, const Shape& w) {
  auto bad = [&](const std::string& why) { return Status::Error("E10001", n.op_type + " node", n.name, why); };
  RnnDims d;
  d.gates = n.op_type == "LSTM" ? 4 : n.op_type == "GRU" ? 3 : 1;
  const std::string direction = n.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return bad("direction '" + direction + "' is not forward, reverse or bidirectional");
  d.directions = direction == "bidirectional" ? 2 : 1;
  d.batch_first = n.attr_int("layout", 0) != 0;
  if (x.size() != 3) return bad("X must be 3-D (seq, batch, input), or (batch, seq, input) with layout 1");
  if (w.size() != 3) return bad("W must be 3-D (directions, gates x hidden, input)");
  d.seq = d.batch_first ? x[1] : x[0];
  d.batch = d.batch_first ? x[0] : x[1];
  d.input = x[2];
  d.hidden = n.attr_int("hidden_size", w[1] >= 0 ? w[1] / d.gates : -1);
  if (w[0] >= 0 && w[0] != d.directions) return bad("W has " + std::to_string(w[0]) + " directions, the direction attribute says " + std::to_string(d.directions));
  if (w[1] >= 0 && d.hidden >= 0 && w[1] != d.gates * d.hidden)
    return bad("W's second dim must be " + std::to_string(d.gates) + " x hidden_size (" + std::to_string(d.hidden) + ")");
  if (w[2] >= 0 && d.input >= 0 && w[2] != d.input) return bad("W's last dim must be the input size " + std::to_string(d.input));
  return d;
}

Shape RnnYShape(const RnnDims& d) {
  return d.batch_first ? Shape{d.batch, d.seq, d.directions, d.hidden} : Shape{d.seq, d.directions, d.batch, d.hidden};
}
Shape RnnStateShape(const RnnDims& d) {
  return d.batch_first ? Shape{d.batch, d.directions, d.hidden} : Shape{d.directions, d.batch, d.hidden};
}

namespace {

// X, W, R, [B, sequence_lens, initial_h] (and LSTM's initial_c, P); outputs Y, Y_h (and LSTM's Y_c), each optional.
Status InferRnn(InferContext& c) {
  const Value &x = *c.in[0], &w = *c.in[1];
  const DType t = x.dtype;
  if (!x.has_shape || !w.has_shape) {
    for (size_t i = 0; i < c.out.size(); ++i) c.set_output(i, t, {}, false);
    return Status::Ok();
  }
  auto d = RnnDimsOf(c.node, x.shape, w.shape);
  if (!d.ok()) return d.status();
  if (c.has_input(2) && c.in[2]->has_shape && c.in[2]->shape.size() != 3) return c.Fail("R must be 3-D (directions, gates x hidden, hidden)");
  for (size_t i = 0; i < c.out.size(); ++i) c.set_output(i, t, i == 0 ? RnnYShape(*d) : RnnStateShape(*d));
  return Status::Ok();
}

}  // namespace

void RegisterRnnSchemas() {
  RegisterSchema({"LSTM", 3, 8, 0, 3, Engine::kCube, InferRnn});
  RegisterSchema({"GRU", 3, 6, 0, 2, Engine::kCube, InferRnn});
  RegisterSchema({"RNN", 3, 6, 0, 2, Engine::kCube, InferRnn});
}

}  // namespace npu
