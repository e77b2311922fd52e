// What the quantization ops' schemas and kernels share: attribute checks, the channel a scale runs along, and
// the rounding modes AscendQuant takes.
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/op_schema.h"

namespace npu {

enum class QuantRound { kHalfEven, kFloor, kCeil, kTrunc };
// AscendQuant's round_mode names (ops-nn's prototype): Round is C rint, ties to even.
std::optional<QuantRound> RoundModeOf(std::string_view s);

// Why AscendQuant's or AscendAntiQuant's attributes cannot be used (scale 0 or not finite, offset not finite,
// a dst_type or round_mode npukit does not take); empty when fine.
std::string QuantAttrProblem(const Node& n);

// The output dtype of a cube op (Conv, Gemm) from its operands: a float op's x dtype, or int32 for a quantized
// one (int8 x and weights, an int32 bias at `bias_input` when given: AMCT's deploy form); an error for a mix.
Result<DType> CubeOutputDtype(InferContext& c, size_t bias_input);

// The values a per-channel scale runs along: C of an NCHW tensor, else the last dim (a matmul's N).
int64_t QuantChannels(const Shape& x);

}  // namespace npu
