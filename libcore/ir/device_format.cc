#include "ir/device_format.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

namespace npu {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
constexpr int64_t kSmallC0 = 4;  // the C0 of the _C04 formats

Status Unfit(const DeviceLayout& l, const std::string& why) {
  return Status::Error("E19999", "format", std::string(FormatName(l.format)),
                       "a tensor of shape " + ShapeToString(l.origin) + " " + why);
}

// The geometry of one layout, resolved once; Visit() walks every origin element in order (but ungrouped
// FRACTAL_Z: CopyFractalZ).
struct Geometry {
  Format format;
  int64_t c0 = 16;
  // NC1HWC0 / FRACTAL_Z: origin (n, c, h, w). FRACTAL_NZ: batch x rows x cols.
  int64_t n = 1, c = 1, hw = 1;
  int64_t c1 = 1;                      // channel (or column) blocks
  int64_t cout_g = 1, cin_g = 1, e = 1, cout_opt = 16;  // FRACTAL_Z with groups
  int64_t batch = 1, rows = 1, cols = 1, r1 = 1;        // FRACTAL_NZ
  Shape device;

  int64_t groups = 1;

  // f(origin_index, device_index) for every origin element, in device order: writes (or reads) of the
  // device tensor stream, and the origin side stays within a few cache lines (16 channels of one pixel,
  // 16 columns of one row).
  template <class F>
  void Visit(F&& f) const {
    switch (format) {
      case Format::kNC1HWC0:
      case Format::kNC1HWC0_C04:
        for (int64_t in = 0, d = 0; in < n; ++in)
          for (int64_t cb = 0; cb < c1; ++cb) {
            int64_t width = std::min(c0, c - cb * c0);
            for (int64_t k = 0; k < hw; ++k, d += c0)
              for (int64_t cc = 0; cc < width; ++cc) f(((in * c + cb * c0 + cc) * hw + k), d + cc);
          }
        return;
      case Format::kFractalZ: {
        if (groups == 1) {  // the common case, without the block-diagonal bookkeeping
          for (int64_t cb = 0; cb < c1; ++cb) {
            int64_t width = std::min(c0, c - cb * c0);
            for (int64_t k = 0; k < hw; ++k)
              for (int64_t on = 0; on < n; ++on) {
                int64_t d = ((cb * hw + k) * cout_opt + on) * c0, o = (on * c + cb * c0) * hw + k;
                for (int64_t cc = 0; cc < width; ++cc) f(o + cc * hw, d + cc);
              }
          }
          return;
        }
        int64_t blocks = device[0] / hw;  // (groups / e) * c1
        for (int64_t b = 0, d = 0; b < blocks; ++b)
          for (int64_t k = 0; k < hw; ++k)
            for (int64_t co = 0; co < cout_opt; ++co, d += c0) {
              int64_t ev = co / cout_g, g = (b / c1) * e + ev;
              if (ev >= e || g >= groups) continue;  // padding output channels
              int64_t on = g * cout_g + co % cout_g;
              for (int64_t cc = 0; cc < c0; ++cc) {
                int64_t ci = (b % c1) * c0 + cc;
                if (ci / cin_g != ev) continue;  // off the block diagonal (or padding)
                f((on * c + ci % cin_g) * hw + k, d + cc);
              }
            }
        return;
      }
      case Format::kFractalZ_C04:  // tap (k, cc) of output channel `on` is element z = k·4 + cc of its K row
        for (int64_t on = 0; on < n; ++on)
          for (int64_t k = 0; k < hw; ++k)
            for (int64_t cc = 0; cc < c; ++cc) {
              int64_t z = k * kSmallC0 + cc;
              f((on * c + cc) * hw + k, (((z / c0) * cout_opt / kFractalRows + on / kFractalRows) * kFractalRows + on % kFractalRows) * c0 + z % c0);
            }
        return;
      case Format::kFractalNZ:
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t cb = 0; cb < c1; ++cb) {
            int64_t width = std::min(c0, cols - cb * c0);
            for (int64_t r = 0; r < rows; ++r) {
              int64_t d = ((b * c1 + cb) * r1 * kFractalRows + r) * c0, o = (b * rows + r) * cols + cb * c0;
              for (int64_t cc = 0; cc < width; ++cc) f(o + cc, d + cc);
            }
          }
        return;
      default:
        return;
    }
  }
};

}  // namespace

GroupBlocks GroupedWeightBlocks(int64_t groups, int64_t cin_per_group, int64_t cout_per_group, int64_t c0) {
  groups = std::max<int64_t>(groups, 1), cin_per_group = std::max<int64_t>(cin_per_group, 1), cout_per_group = std::max<int64_t>(cout_per_group, 1);
  const int64_t fill_in = std::lcm(cin_per_group, c0) / cin_per_group, fill_out = std::lcm(cout_per_group, kFractalRows) / cout_per_group;
  GroupBlocks b;
  b.enlarge = std::min(std::lcm(fill_in, fill_out), groups);
  b.blocks = CeilDiv(groups, b.enlarge);
  b.cin = CeilDiv(b.enlarge * cin_per_group, c0) * c0;
  b.cout = CeilDiv(b.enlarge * cout_per_group, kFractalRows) * kFractalRows;
  return b;
}

namespace {

Result<Geometry> Resolve(const DeviceLayout& l) {
  Geometry g;
  g.format = l.format;
  g.c0 = CubeC0(l.elem_size);
  for (int64_t d : l.origin)
    if (d < 0) return Unfit(l, "has unknown dims");
  const Shape& s = l.origin;
  switch (l.format) {
    case Format::kNC1HWC0:
      if (s.size() != 4) return Unfit(l, "is not 4-D (NCHW)");
      g.n = s[0], g.c = s[1], g.hw = s[2] * s[3], g.c1 = CeilDiv(s[1], g.c0);
      g.device = {s[0], g.c1, s[2], s[3], g.c0};
      return g;
    case Format::kNC1HWC0_C04:
      if (s.size() != 4) return Unfit(l, "is not 4-D (NCHW)");
      g.c0 = kSmallC0;
      g.n = s[0], g.c = s[1], g.hw = s[2] * s[3], g.c1 = CeilDiv(s[1], g.c0);
      g.device = {s[0], g.c1, s[2], s[3], g.c0};
      return g;
    case Format::kFractalZ_C04:
      if (s.size() != 4) return Unfit(l, "is not a 4-D (NCHW) weight");
      if (s[1] > kSmallC0) return Unfit(l, "has more than 4 input channels");
      g.n = s[0], g.c = s[1], g.hw = s[2] * s[3];
      g.cout_opt = CeilDiv(g.n, kFractalRows) * kFractalRows;
      g.device = {CeilDiv(kSmallC0 * g.hw, g.c0), g.cout_opt / kFractalRows, kFractalRows, g.c0};
      return g;
    case Format::kFractalZ: {
      if (s.size() != 4) return Unfit(l, "is not a 4-D (NCHW) weight");
      int64_t groups = std::max<int64_t>(l.groups, 1);
      if (s[0] % groups) return Unfit(l, "has " + std::to_string(s[0]) + " output channels, not a multiple of " + std::to_string(groups) + " groups");
      g.n = s[0], g.c = s[1], g.hw = s[2] * s[3], g.groups = groups;
      g.cin_g = std::max<int64_t>(s[1], 1), g.cout_g = std::max<int64_t>(s[0] / groups, 1);
      const GroupBlocks blocks = GroupedWeightBlocks(groups, g.cin_g, g.cout_g, g.c0);
      g.e = blocks.enlarge;
      g.c1 = blocks.cin / g.c0;
      g.cout_opt = blocks.cout;
      g.device = {blocks.blocks * g.c1 * g.hw, g.cout_opt / kFractalRows, kFractalRows, g.c0};
      return g;
    }
    case Format::kFractalNZ: {
      if (s.empty()) return Unfit(l, "is a scalar");
      g.cols = s.back();
      g.rows = s.size() >= 2 ? s[s.size() - 2] : 1;
      g.batch = s.size() > 2 ? NumElements(Shape(s.begin(), s.end() - 2)) : 1;
      g.c1 = CeilDiv(g.cols, g.c0), g.r1 = CeilDiv(g.rows, kFractalRows);
      g.device.assign(s.begin(), s.size() > 2 ? s.end() - 2 : s.begin());
      for (int64_t d : {g.c1, g.r1, kFractalRows, g.c0}) g.device.push_back(d);
      return g;
    }
    default:
      return Unfit(l, "cannot be laid out in it (not a blocked device format)");
  }
}

// FRACTAL_Z without groups, the bulk of the weights atc writes and msame loads, walked in device order: each
// row of c0 lanes is one pixel of c0 input channels of a weight (n, c, h, w), one copy for 1x1 kernels and a
// lane gather (or scatter) for larger ones. Visit's element walk computes every index from scratch: 1.6 ->
// 13 GB/s for a 1x1 fp16 weight.
template <class T>
void CopyFractalZ(const Geometry& g, const std::byte* from, std::byte* to, bool to_device) {
  constexpr int64_t kSize = sizeof(T);
  auto move = [&](int64_t origin, int64_t device, int64_t bytes) {  // byte offsets on each side
    if (to_device) std::memcpy(to + device, from + origin, static_cast<size_t>(bytes));
    else std::memcpy(to + origin, from + device, static_cast<size_t>(bytes));
  };
  int64_t d = 0;
  for (int64_t cb = 0; cb < g.c1; ++cb) {
    const int64_t width = std::min(g.c0, g.c - cb * g.c0);
    for (int64_t k = 0; k < g.hw; ++k, d += (g.cout_opt - g.n) * g.c0 * kSize)  // padding rows: zero on the device
      for (int64_t on = 0; on < g.n; ++on, d += g.c0 * kSize) {
        const int64_t o = ((on * g.c + cb * g.c0) * g.hw + k) * kSize;
        if (g.hw == 1) move(o, d, width * kSize);
        else
          for (int64_t cc = 0; cc < width; ++cc) move(o + cc * g.hw * kSize, d + cc * kSize, kSize);
      }
  }
}

// Element moves by memcpy: buffers inside dump files and .om weights need not be aligned for T (the
// fixed-size memcpy compiles to one load and one store).
template <class T>
void Copy(const Geometry& g, const std::byte* from, std::byte* to, bool to_device) {
  if (g.format == Format::kFractalZ && g.groups == 1) return CopyFractalZ<T>(g, from, to, to_device);
  if (to_device) g.Visit([&](int64_t o, int64_t d) { std::memcpy(to + d * sizeof(T), from + o * sizeof(T), sizeof(T)); });
  else g.Visit([&](int64_t o, int64_t d) { std::memcpy(to + o * sizeof(T), from + d * sizeof(T), sizeof(T)); });
}

Status Transfer(const DeviceLayout& l, std::span<const std::byte> from, std::span<std::byte> to, bool to_device) {
  NPU_ASSIGN_OR_RETURN(Geometry g, Resolve(l));
  size_t origin_bytes = static_cast<size_t>(NumElements(l.origin)) * l.elem_size;
  size_t device_bytes = static_cast<size_t>(NumElements(g.device)) * l.elem_size;
  if ((to_device ? from.size() : to.size()) != origin_bytes || (to_device ? to.size() : from.size()) != device_bytes)
    return Unfit(l, "does not match the buffer sizes given (" + std::to_string(from.size()) + " -> " + std::to_string(to.size()) + " bytes)");
  if (to_device && device_bytes != origin_bytes) std::memset(to.data(), 0, to.size());  // padding is zero
  switch (l.elem_size) {
    case 1: Copy<uint8_t>(g, from.data(), to.data(), to_device); break;
    case 2: Copy<uint16_t>(g, from.data(), to.data(), to_device); break;
    case 4: Copy<uint32_t>(g, from.data(), to.data(), to_device); break;
    case 8: Copy<uint64_t>(g, from.data(), to.data(), to_device); break;
    default: return Unfit(l, "has " + std::to_string(l.elem_size) + "-byte elements");
  }
  return Status::Ok();
}

}  // namespace

int64_t CubeC0(size_t elem_size) { return elem_size == 1 ? 32 : 16; }

bool IsBlockedFormat(Format f) {
  return f == Format::kNC1HWC0 || f == Format::kFractalZ || f == Format::kFractalNZ || f == Format::kNC1HWC0_C04 ||
         f == Format::kFractalZ_C04;
}

Result<Shape> DeviceShape(const DeviceLayout& l) {
  if (!IsBlockedFormat(l.format)) return l.origin;
  const Shape& s = l.origin;
  bool unknown = std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
  if (!unknown || l.format == Format::kFractalZ || l.format == Format::kFractalZ_C04) {
    NPU_ASSIGN_OR_RETURN(Geometry g, Resolve(l));
    return g.device;
  }
  // A dynamic shape: dims that depend on an unknown one are unknown (-1) too.
  int64_t c0 = CubeC0(l.elem_size);
  auto blocks = [](int64_t d, int64_t b) { return d < 0 ? -1 : CeilDiv(d, b); };
  if (l.format == Format::kNC1HWC0 || l.format == Format::kNC1HWC0_C04) {
    if (s.size() != 4) return Unfit(l, "is not 4-D (NCHW)");
    if (l.format == Format::kNC1HWC0_C04) c0 = kSmallC0;
    return Shape{s[0], blocks(s[1], c0), s[2], s[3], c0};
  }
  if (s.empty()) return Unfit(l, "is a scalar");
  Shape d(s.begin(), s.size() > 2 ? s.end() - 2 : s.begin());
  for (int64_t x : {blocks(s.back(), c0), s.size() >= 2 ? blocks(s[s.size() - 2], kFractalRows) : 1, kFractalRows, c0}) d.push_back(x);
  return d;
}

Status ToDeviceBytes(const DeviceLayout& l, std::span<const std::byte> origin, std::span<std::byte> device) {
  return Transfer(l, origin, device, true);
}

Status FromDeviceBytes(const DeviceLayout& l, std::span<const std::byte> device, std::span<std::byte> origin) {
  return Transfer(l, device, origin, false);
}

Result<Tensor> ToDevice(const Tensor& t, Format f, int64_t groups) {
  DeviceLayout l{f, t.shape(), DTypeSize(t.dtype()), groups};
  NPU_ASSIGN_OR_RETURN(Shape shape, DeviceShape(l));
  Tensor out = Tensor::Empty(t.dtype(), shape);
  NPU_RETURN_IF_ERROR(ToDeviceBytes(l, t.stored_bytes(), {out.mutable_raw(), out.nbytes()}));
  out.format = f;
  return out;
}

Result<Tensor> FromDevice(const Tensor& device, Format f, const Shape& origin, int64_t groups) {
  DeviceLayout l{f, origin, DTypeSize(device.dtype()), groups};
  Tensor out = Tensor::Empty(device.dtype(), origin);
  NPU_RETURN_IF_ERROR(FromDeviceBytes(l, device.bytes(), {out.mutable_raw(), out.nbytes()}));
  return out;
}

}  // namespace npu
