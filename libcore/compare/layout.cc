#include "compare/layout.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "ir/device_format.h"
#include "ir/tensor.h"

namespace npu {
namespace {

// A tensor whose layout cannot be undone: the message names the tensor, its format and why.
Status Bad(const DumpTensor& t, const std::string& why) {
  return Status::Error("EC0015", "dump tensor", std::string(t.kind_name()) + " " + std::to_string(t.index) + " (" +
                       std::string(FormatName(t.format)) + ")", why,
                       "The dump's shape and original shape disagree with its format; give -s with the original shape, or dump the op again.");
}

// out[i] = in[src(i)] for every output element, for any element size.
template <class Src>
std::vector<std::byte> Gather(const std::byte* in, size_t elem, int64_t count, Src&& src) {
  std::vector<std::byte> out(static_cast<size_t>(count) * elem);
  std::byte* o = out.data();
  for (int64_t i = 0; i < count; ++i, o += elem) std::memcpy(o, in + static_cast<size_t>(src(i)) * elem, elem);
  return out;
}


// The origin shape a blocked dump tensor holds when the dump does not say: every padded element counts.
Shape DefaultOrigin(const DumpTensor& t) {
  const auto& s = t.shape;
  const bool five_hd = t.format == static_cast<int>(Format::kNC1HWC0) || t.format == static_cast<int>(Format::kNC1HWC0_C04);
  if (five_hd && s.size() == 5) return {s[0], s[1] * s[4], s[2], s[3]};
  if (t.format == static_cast<int>(Format::kFractalNZ) && s.size() >= 4) {
    Shape o(s.begin(), s.end() - 4);
    o.push_back(s[s.size() - 3] * s[s.size() - 2]);
    o.push_back(s[s.size() - 4] * s.back());
    return o;
  }
  return {};
}

// NC1HWC0 (and its C04 form), FRACTAL_Z (grouped by sub_format; and C04) and FRACTAL_NZ, through libcore's one
// conversion.
Result<LaidOut> FromBlocked(const DumpTensor& t, size_t elem, std::span<const int64_t> original) {
  auto f = static_cast<Format>(t.format);
  if (!IsBlockedFormat(f)) return Bad(t, "no conversion from this format");
  Shape origin(original.begin(), original.end());
  bool fits = f == Format::kFractalNZ ? !origin.empty() : origin.size() == 4;  // the others hold an NCHW origin
  if (!fits) origin = DefaultOrigin(t);
  if (origin.empty()) return Bad(t, std::string(FormatName(t.format)) + " needs the 4-D original (NCHW) shape");
  DeviceLayout l{f, origin, elem, std::max(t.sub_format, 1)};
  auto device = DeviceShape(l);
  if (!device.ok() || device.value() != Shape(t.shape.begin(), t.shape.end()))
    return Bad(t, "shape " + ShapeToString(t.shape) + " does not hold the original shape " + ShapeToString(origin));
  LaidOut r;
  r.shape = origin;
  r.bytes.resize(static_cast<size_t>(NumElements(origin)) * elem);
  if (Status s = FromDeviceBytes(l, t.data, r.bytes); !s.ok()) return Bad(t, s.message());
  return r;
}

// Whether a 4-D original shape is NHWC: the dump says so (an output's original_op.format), or, for an input
// (a dump records no original format for those), only the NHWC reading of it fits the NC1HWC0 shape.
bool HoldsNhwcOrigin(const DumpTensor& t, size_t elem, std::span<const int64_t> original) {
  if (original.size() != 4) return false;
  if (t.original_format >= 0) return t.original_format == static_cast<int>(Format::kNHWC);
  if (t.format != static_cast<int>(Format::kNC1HWC0)) return false;
  auto fits = [&](Shape nchw) {
    auto device = DeviceShape({Format::kNC1HWC0, std::move(nchw), elem, 1});
    return device.ok() && device.value() == Shape(t.shape.begin(), t.shape.end());
  };
  return !fits(Shape(original.begin(), original.end())) && fits({original[0], original[3], original[1], original[2]});
}

}  // namespace

bool NeedsLayoutConversion(int f) {
  auto format = static_cast<Format>(f);
  return IsBlockedFormat(format) || format == Format::kNHWC || format == Format::kHWCN;
}

std::string_view NaturalLayout(int format) { return format == static_cast<int>(Format::kFractalNZ) ? "ND" : "NCHW"; }

Result<LaidOut> ConvertLayout(const DumpTensor& t, size_t elem, std::string_view target,
                              std::span<const int64_t> original) {
  if (original.empty()) original = t.original_shape;
  std::string_view natural = NaturalLayout(t.format);
  if (!target.empty() && target != natural)
    return Status::Error("EC0015", "-f", std::string(target),
                         std::string(t.kind_name()) + " " + std::to_string(t.index) + " is " + std::string(FormatName(t.format)) +
                             ", which converts to " + std::string(natural) + ", not " + std::string(target),
                         "Use -f NCHW for NC1HWC0, FRACTAL_Z, NHWC and HWCN tensors, -f ND for FRACTAL_NZ, or leave -f out to keep the dump's layout.");
  const auto& s = t.shape;
  const std::byte* in = t.data.data();
  LaidOut r;
  // A framework tensor in NHWC (a TensorFlow op's output; original_op.format says so) comes back in NHWC
  // unless the caller asks for NCHW: that is the layout its golden data has.
  const bool nhwc_origin = HoldsNhwcOrigin(t, elem, original);
  const bool framework_nhwc = target.empty() && nhwc_origin;
  if (framework_nhwc && t.format == static_cast<int>(Format::kNHWC)) {
    r.shape = s;
    r.bytes.assign(in, in + t.data.size());
    return r;
  }
  if (framework_nhwc) {
    const Shape nchw{original[0], original[3], original[1], original[2]};
    NPU_ASSIGN_OR_RETURN(LaidOut c, FromBlocked(t, elem, nchw));
    const int64_t N = nchw[0], C = nchw[1], H = nchw[2], W = nchw[3];
    r.shape = {N, H, W, C};
    r.bytes = Gather(c.bytes.data(), elem, N * H * W * C, [&](int64_t i) {
      int64_t ch = i % C, w = i / C % W, h = i / (C * W) % H, n = i / (C * W * H);
      return ((n * C + ch) * H + h) * W + w;
    });
    return r;
  }
  switch (t.format) {
    case static_cast<int>(Format::kNHWC):
    case static_cast<int>(Format::kHWCN): {  // NHWC (N,H,W,C) or HWCN (H,W,C,N)
      if (s.size() != 4) return Bad(t, std::string(FormatName(t.format)) + " needs a 4-D shape");
      bool nhwc = t.format == static_cast<int>(Format::kNHWC);
      int64_t N = nhwc ? s[0] : s[3], H = nhwc ? s[1] : s[0], W = nhwc ? s[2] : s[1], C = nhwc ? s[3] : s[2];
      r.shape = {N, C, H, W};
      r.bytes = Gather(in, elem, N * C * H * W, [&](int64_t i) {
        int64_t w = i % W, h = i / W % H, c = i / (W * H) % C, n = i / (W * H * C);
        return nhwc ? ((n * H + h) * W + w) * C + c : ((h * W + w) * C + c) * N + n;
      });
      break;
    }
    default:
      if (nhwc_origin) return FromBlocked(t, elem, Shape{original[0], original[3], original[1], original[2]});
      return FromBlocked(t, elem, original);
  }
  return r;
}

}  // namespace npu
