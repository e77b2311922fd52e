// Conv and ConvTranspose: their geometry from the node and the input and weight shapes, shared by the schema's
// inference (ops/conv.cc) and the kernels (kernels/conv.cc).
#pragma once
#include <array>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

using Dims3 = std::array<int64_t, 3>;  // depth, height, width

// A convolution's geometry, every spatial rank as 3-D with leading extents of 1.
struct ConvGeom {
  int64_t C = 0, M = 0, G = 1;
  Dims3 in{1, 1, 1}, k{1, 1, 1}, out{1, 1, 1}, stride{1, 1, 1}, dil{1, 1, 1}, pad{0, 0, 0};  // pad: at the start
  size_t rank = 2;  // spatial rank of the model's tensors (1, 2 or 3)
  int64_t Cg() const { return C / G; }
  int64_t Mg() const { return M / G; }
  int64_t InSize() const { return in[0] * in[1] * in[2]; }
  int64_t OutSize() const { return out[0] * out[1] * out[2]; }
  int64_t KSize() const { return k[0] * k[1] * k[2]; }
  int64_t K() const { return Cg() * KSize(); }
  bool pointwise() const { return KSize() == 1 && stride == Dims3{1, 1, 1} && pad == Dims3{0, 0, 0} && out == in; }
  Shape OutShape(int64_t n) const {
    Shape s = {n, M};
    s.insert(s.end(), out.end() - static_cast<long>(rank), out.end());
    return s;
  }
};

Result<ConvGeom> MakeConv(const Node& node, const Shape& x, const Shape& w, bool transpose);
Result<ConvGeom> MakeConvTranspose(const Node& n, const Shape& x, const Shape& w);

}  // namespace npu
