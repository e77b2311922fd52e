#include "compare/layout.h"

#include <cstring>
#include <string>

#include "ir/tensor.h"

namespace npu {
namespace {

Status Bad(const DumpTensor& t, const std::string& why) {
  return Status::Error("EC0015", "-f", DumpFormatName(t.format), std::string(t.kind_name()) + " " +
                       std::to_string(t.index) + ": " + why);
}

// out[i] = in[src(i)] for every output element, for any element size.
template <class Src>
std::vector<std::byte> Gather(const std::byte* in, size_t elem, int64_t count, Src&& src) {
  std::vector<std::byte> out(static_cast<size_t>(count) * elem);
  std::byte* o = out.data();
  for (int64_t i = 0; i < count; ++i, o += elem) std::memcpy(o, in + static_cast<size_t>(src(i)) * elem, elem);
  return out;
}

int64_t Product(std::span<const int64_t> s) {
  int64_t p = 1;
  for (int64_t v : s) p *= v;
  return p;
}

}  // namespace

bool NeedsLayoutConversion(int f) { return f == 1 || f == 3 || f == 4 || f == 16 || f == 29; }

Result<LaidOut> ConvertLayout(const DumpTensor& t, size_t elem, std::string_view target,
                              std::span<const int64_t> original) {
  if (original.empty()) original = t.original_shape;
  std::string_view natural = t.format == 29 ? "ND" : "NCHW";
  if (!target.empty() && target != natural)
    return Bad(t, "converts to " + std::string(natural) + ", not " + std::string(target));
  const auto& s = t.shape;
  const std::byte* in = t.data.data();
  LaidOut r;
  switch (t.format) {
    case 3: {  // NC1HWC0 (N, C1, H, W, C0)
      if (s.size() != 5) return Bad(t, "NC1HWC0 needs a 5-D shape, got " + ShapeToString(s));
      int64_t N = s[0], C1 = s[1], H = s[2], W = s[3], C0 = s[4];
      int64_t C = original.size() == 4 ? original[1] : C1 * C0;
      if (C > C1 * C0) return Bad(t, "original C " + std::to_string(C) + " exceeds C1*C0");
      r.shape = {N, C, H, W};
      r.bytes = Gather(in, elem, N * C * H * W, [&](int64_t i) {
        int64_t w = i % W, h = i / W % H, c = i / (W * H) % C, n = i / (W * H * C);
        return (((n * C1 + c / C0) * H + h) * W + w) * C0 + c % C0;
      });
      break;
    }
    case 1: case 16: {  // NHWC (N,H,W,C) or HWCN (H,W,C,N)
      if (s.size() != 4) return Bad(t, std::string(DumpFormatName(t.format)) + " needs a 4-D shape");
      bool nhwc = t.format == 1;
      int64_t N = nhwc ? s[0] : s[3], H = nhwc ? s[1] : s[0], W = nhwc ? s[2] : s[1], C = nhwc ? s[3] : s[2];
      r.shape = {N, C, H, W};
      r.bytes = Gather(in, elem, N * C * H * W, [&](int64_t i) {
        int64_t w = i % W, h = i / W % H, c = i / (W * H) % C, n = i / (W * H * C);
        return nhwc ? ((n * H + h) * W + w) * C + c : ((h * W + w) * C + c) * N + n;
      });
      break;
    }
    case 4: {  // FRACTAL_Z (C1*H*W, N1, N0, C0) of an NCHW weight
      if (original.size() != 4) return Bad(t, "FRACTAL_Z needs the 4-D original (NCHW) shape");
      if (s.size() != 4) return Bad(t, "FRACTAL_Z needs a 4-D shape");
      int64_t N = original[0], C = original[1], H = original[2], W = original[3];
      int64_t N1 = s[1], N0 = s[2], C0 = s[3], C1 = (C + C0 - 1) / C0;
      if (s[0] != C1 * H * W || N > N1 * N0) return Bad(t, "shape " + ShapeToString(s) + " does not hold " + ShapeToString({original.begin(), original.end()}));
      r.shape = {N, C, H, W};
      r.bytes = Gather(in, elem, N * C * H * W, [&](int64_t i) {
        int64_t w = i % W, h = i / W % H, c = i / (W * H) % C, n = i / (W * H * C);
        return ((((c / C0) * H + h) * W + w) * N1 + n / N0) * N0 * C0 + (n % N0) * C0 + c % C0;
      });
      break;
    }
    case 29: {  // FRACTAL_NZ (..., C1, No, Ni, C0) of an (..., rows, cols) matrix
      if (s.size() < 4) return Bad(t, "FRACTAL_NZ needs at least 4 dims");
      size_t b = s.size() - 4;
      int64_t C1 = s[b], No = s[b + 1], Ni = s[b + 2], C0 = s[b + 3];
      int64_t batch = Product(std::span(s).first(b));
      int64_t rows = No * Ni, cols = C1 * C0;
      if (original.size() >= 2) rows = original[original.size() - 2], cols = original.back();
      if (rows > No * Ni || cols > C1 * C0) return Bad(t, "the original shape is larger than the padded one");
      r.shape.assign(s.begin(), s.begin() + b);
      if (original.size() >= 2) r.shape.assign(original.begin(), original.end() - 2);
      r.shape.push_back(rows);
      r.shape.push_back(cols);
      if (Product(r.shape) != batch * rows * cols) return Bad(t, "the original batch dims do not match");
      r.bytes = Gather(in, elem, batch * rows * cols, [&](int64_t i) {
        int64_t c = i % cols, row = i / cols % rows, bb = i / (cols * rows);
        return (((bb * C1 + c / C0) * No + row / Ni) * Ni + row % Ni) * C0 + c % C0;
      });
      break;
    }
    default:
      return Bad(t, "no conversion from this format");
  }
  return r;
}

}  // namespace npu
