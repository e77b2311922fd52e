// The Aipp op (frontend/aipp/aipp.h): raw uint8 image -> the model's float NCHW input, pixel by pixel in the
// order the AIPP unit works: crop, channel swaps, colour space conversion, normalisation, padding. Dynamic AIPP
// reads each image's parameters from its second input (ir/aipp_config.h).
#include <algorithm>

#include "ir/aipp_config.h"
#include "kernels/families.h"
#include "kernels/kernel_util.h"
#include "kernels/registry.h"

namespace npu {
namespace {

// The channel values of source pixel (y, x) of image n: up to 4, as stored.
std::array<int64_t, 4> Pixel(const AippConfig& c, const uint8_t* img, int64_t y, int64_t x) {
  std::array<int64_t, 4> p{};
  if (c.input_format == "YUV420SP_U8") {  // Y plane, then one interleaved U,V pair per 2x2 block
    const uint8_t* uv = img + c.src_h * c.src_w + (y / 2) * c.src_w + (x / 2) * 2;
    p = {img[y * c.src_w + x], uv[0], uv[1], 0};
    return p;
  }
  int64_t ch = c.ImageChannels();
  const uint8_t* px = img + (y * c.src_w + x) * ch;
  for (int64_t k = 0; k < ch; ++k) p[k] = px[k];
  return p;
}

std::array<float, 4> Convert(const AippConfig& c, std::array<int64_t, 4> p) {
  if (c.ax_swap && c.input_format == "XRGB8888_U8") std::rotate(p.begin(), p.begin() + 1, p.end());  // XRGB -> RGBX
  if (c.rbuv_swap) {
    if (c.IsYuv()) std::swap(p[1], p[2]);  // U <-> V
    else std::swap(p[0], p[2]);            // R <-> B
  }
  if (c.csc) {
    std::array<int64_t, 3> in = {p[0], p[1], p[2]}, out{};
    for (int r = 0; r < 3; ++r) {
      int64_t acc = 0;
      for (int k = 0; k < 3; ++k) acc += c.matrix[r * 3 + k] * (c.IsYuv() ? in[k] - c.input_bias[k] : in[k]);
      acc >>= 8;  // arithmetic shift, as the hardware does
      if (!c.IsYuv()) acc += c.output_bias[r];
      out[r] = std::clamp<int64_t>(acc, 0, 255);
    }
    p = {out[0], out[1], out[2], p[3]};
  }
  std::array<float, 4> f{};
  for (int k = 0; k < 4; ++k) f[k] = (static_cast<float>(p[k] - c.mean[k]) - c.min[k]) * c.var_reci[k];
  return f;
}

// Image n of the batch (its source pixels at `img`) into the C x H x W planes at `y`.
void RenderImage(const AippConfig& c, const uint8_t* img, float* y) {
  const int64_t C = c.output[1], H = c.output[2], W = c.output[3];
  for (int64_t h = 0; h < H; ++h)
    for (int64_t w = 0; w < W; ++w) {
      int64_t sy = h - c.pad_top, sx = w - c.pad_left;
      bool inside = sy >= 0 && sy < c.crop_h && sx >= 0 && sx < c.crop_w;
      std::array<float, 4> v{c.padding_value, c.padding_value, c.padding_value, c.padding_value};
      if (inside) v = Convert(c, Pixel(c, img, c.crop_y + sy, c.crop_x + sx));
      for (int64_t ch = 0; ch < C; ++ch) y[(ch * H + h) * W + w] = v[ch];
    }
}

Status AippKernel(KernelContext& ctx) {
  const AippConfig c = AippFromAttrs(ctx.node);
  const Tensor& raw = ctx.in(0);
  if (raw.dtype() != DType::kU8 || c.output.size() != 4) return ctx.Fail("expects a uint8 image and a 4-D output");
  const int64_t N = c.output[0], plane = c.output[1] * c.output[2] * c.output[3];
  const int64_t image_bytes = NumElements(raw.shape()) / std::max<int64_t>(N, 1);
  if (c.dynamic && (!ctx.has(1) || image_bytes != c.max_src_image_size)) return ctx.Fail("expects the image slots and the dynamic AIPP parameters");
  Tensor out = Tensor::Empty(DType::kF32, c.output);
  for (int64_t n = 0; n < N; ++n) {
    AippConfig image = c;
    if (c.dynamic) {  // this image's parameters, checked against the block, the slot and the model input
      auto d = AippFromDynamic(ctx.in(1).bytes(), n, c.output, image_bytes);
      if (!d.ok()) return d.status();
      image = std::move(d).value();
    }
    RenderImage(image, raw.data<uint8_t>() + n * image_bytes, out.mutable_data<float>() + n * plane);
  }
  ctx.outputs[0] = std::move(out);
  return Status::Ok();
}

}  // namespace

void RegisterAippKernels() { RegisterKernel("Aipp", AippKernel); }

}  // namespace npu
