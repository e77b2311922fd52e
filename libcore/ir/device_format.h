// Device formats: how the AI Core lays a tensor out in global memory. atc assigns them (passes/formats.cc),
// the .om records them, dumps hold them; kernels compute on the origin layout and the runtime converts when
// it writes a dump. Facts from reference/atc.md §5:
//   NC1HWC0     (N, C1, H, W, C0): channels in blocks of C0, the last block zero-padded.
//   FRACTAL_Z   (C1·H·W, N1, 16, C0) conv weights: 16 x C0 fractals, output channel-major inside each;
//               grouped convs pack e groups block-diagonally into one fractal column (sub_format = groups).
//   FRACTAL_NZ  (..., C1, R1, 16, C0) matrices: column blocks of C0, rows padded to 16; 1-D is one row.
//   NC1HWC0_C04 (N, C1, H, W, 4): NC1HWC0 with C0 = 4, for a conv of at most 4 input channels
//               (atc --enable_small_channel=1 after static AIPP).
//   FRACTAL_Z_C04 (K1, N1, 16, C0) that conv's weights: each output channel's (h, w, c) taps, c padded to 4,
//               run along K (K1 = ceil(4·H·W / C0)) and are cut into 16 x C0 fractals, output channel-major.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>

#include "base/status.h"
#include "ir/dtype.h"
#include "ir/tensor.h"

namespace npu {

// Fractal rows (N0 of FRACTAL_Z, the row block of FRACTAL_NZ).
inline constexpr int64_t kFractalRows = 16;
// C0: 32 for 1-byte dtypes, 16 for every other (CANN's GetCubeSizeByDataType).
int64_t CubeC0(size_t elem_size);
bool IsBlockedFormat(Format f);  // NC1HWC0, FRACTAL_Z, FRACTAL_NZ

// How CANN lays out a grouped conv's weight (FRACTAL_Z with groups), and so how the cube runs the conv:
// `enlarge` groups share one block, enough to fill C0 input and 16 output channels (at most all groups); the
// conv is one GEMM per block, of `cin` (C0-aligned) input and `cout` (16-aligned) output channels, mostly zeros
// off the block diagonal. groups = 1 is one block of the whole weight.
struct GroupBlocks {
  int64_t enlarge = 1, blocks = 1, cin = 0, cout = 0;
};
GroupBlocks GroupedWeightBlocks(int64_t groups, int64_t cin_per_group, int64_t cout_per_group, int64_t c0);

// A device layout of a tensor whose origin (framework) shape is `origin`: NCHW for NC1HWC0 and FRACTAL_Z,
// (..., rows, cols) for FRACTAL_NZ. `groups` > 1 selects grouped FRACTAL_Z.
struct DeviceLayout {
  Format format = Format::kND;
  Shape origin;
  size_t elem_size = 4;
  int64_t groups = 1;
};

// The device shape; an error if the origin shape cannot take the format (wrong rank, unknown dims).
Result<Shape> DeviceShape(const DeviceLayout& l);
// Origin-ordered bytes -> device bytes (padding zero), and back. `device` holds NumElements(DeviceShape).
Status ToDeviceBytes(const DeviceLayout& l, std::span<const std::byte> origin, std::span<std::byte> device);
Status FromDeviceBytes(const DeviceLayout& l, std::span<const std::byte> device, std::span<std::byte> origin);
// Whole tensors: `t` in its origin layout -> a new tensor of the device shape, and back.
Result<Tensor> ToDevice(const Tensor& t, Format f, int64_t groups = 1);
Result<Tensor> FromDevice(const Tensor& device, Format f, const Shape& origin, int64_t groups = 1);

}  // namespace npu
