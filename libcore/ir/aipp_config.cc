#include "ir/aipp_config.h"

#include <algorithm>

namespace npu {

int64_t AippConfig::ImageChannels() const {
  if (input_format == "XRGB8888_U8") return 4;
  if (input_format == "RGB888_U8") return 3;
  return 1;  // YUV400; YUV420SP is planar (Y plane, then interleaved UV)
}

Shape AippConfig::InputShape() const {
  if (input_format == "YUV420SP_U8") return {output[0], src_h * 3 / 2, src_w, 1};
  return {output[0], src_h, src_w, ImageChannels()};
}

void AippToAttrs(const AippConfig& c, DType output_dtype, AttrMap& a) {
  a["input_format"] = c.input_format;
  a["src_image_size"] = std::vector<int64_t>{c.src_h, c.src_w};
  a["crop"] = std::vector<int64_t>{c.crop_y, c.crop_x, c.crop_h, c.crop_w};
  a["padding"] = std::vector<int64_t>{c.pad_top, c.pad_bottom, c.pad_left, c.pad_right};
  a["padding_value"] = c.padding_value;
  a["switches"] = std::vector<int64_t>{c.csc, c.rbuv_swap, c.ax_swap};
  a["matrix"] = std::vector<int64_t>(c.matrix.begin(), c.matrix.end());
  a["input_bias"] = std::vector<int64_t>(c.input_bias.begin(), c.input_bias.end());
  a["output_bias"] = std::vector<int64_t>(c.output_bias.begin(), c.output_bias.end());
  a["mean_chn"] = std::vector<int64_t>(c.mean.begin(), c.mean.end());
  a["min_chn"] = std::vector<float>(c.min.begin(), c.min.end());
  a["var_reci_chn"] = std::vector<float>(c.var_reci.begin(), c.var_reci.end());
  a["output_shape"] = c.output;
  a["output_dtype"] = static_cast<int64_t>(output_dtype);
}

AippConfig AippFromAttrs(const Node& n) {
  AippConfig c;
  c.input_format = n.attr_string("input_format");
  auto ints = [&](const char* k, size_t size) {
    auto v = n.attr_ints(k);
    v.resize(size, 0);
    return v;
  };
  auto src = ints("src_image_size", 2), crop = ints("crop", 4), pad = ints("padding", 4), sw = ints("switches", 3);
  c.src_h = src[0], c.src_w = src[1];
  c.crop_y = crop[0], c.crop_x = crop[1], c.crop_h = crop[2], c.crop_w = crop[3];
  c.pad_top = pad[0], c.pad_bottom = pad[1], c.pad_left = pad[2], c.pad_right = pad[3];
  c.padding_value = n.attr_float("padding_value", 0);
  c.csc = sw[0], c.rbuv_swap = sw[1], c.ax_swap = sw[2];
  auto m = ints("matrix", 9), ib = ints("input_bias", 3), ob = ints("output_bias", 3), mean = ints("mean_chn", 4);
  std::copy(m.begin(), m.end(), c.matrix.begin());
  std::copy(ib.begin(), ib.end(), c.input_bias.begin());
  std::copy(ob.begin(), ob.end(), c.output_bias.begin());
  std::copy(mean.begin(), mean.end(), c.mean.begin());
  auto mn = n.attr_floats("min_chn"), vr = n.attr_floats("var_reci_chn");
  for (size_t i = 0; i < 4; ++i) c.min[i] = i < mn.size() ? mn[i] : 0, c.var_reci[i] = i < vr.size() ? vr[i] : 1;
  c.output = n.attr_ints("output_shape");
  return c;
}

}  // namespace npu
