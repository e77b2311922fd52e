#include "ir/aipp_config.h"

#include <algorithm>
#include <cstring>

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
  if (c.dynamic) a["max_src_image_size"] = c.max_src_image_size;
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
  c.max_src_image_size = n.attr_int("max_src_image_size", 0);
  c.dynamic = c.max_src_image_size > 0;
  return c;
}

std::string AippInputFormatName(int32_t number) {
  switch (number) {  // aclAippInputFormat (acl_mdl.h) and insert_op.cfg's InputFormat
    case 1: return "YUV420SP_U8";
    case 2: return "XRGB8888_U8";
    case 3: return "RGB888_U8";
    case 4: return "YUV400_U8";
    default: return "";
  }
}

size_t AippDynamicSize(uint64_t batch) { return sizeof(AippDynamicCommon) + batch * sizeof(AippDynamicImage); }

namespace {

Status BadBlock(const std::string& why) {
  return Status::Error("EH0001", kDynamicAippInput, "", "dynamic AIPP parameters: " + why, "Set them with aclmdlSetInputAIPP before aclmdlExecute.");
}

}  // namespace

Result<AippConfig> AippFromDynamic(std::span<const std::byte> block, int64_t n, const Shape& output, int64_t slot_bytes) {
  AippDynamicCommon common;
  if (block.size() < sizeof common) return BadBlock("the input holds " + std::to_string(block.size()) + " bytes, fewer than the parameters");
  std::memcpy(&common, block.data(), sizeof common);
  if (common.tag != kDynamicAippTag) return BadBlock("the input holds no parameters (were they set?)");
  if (output.size() != 4 || n < 0 || n >= output[0]) return BadBlock("image " + std::to_string(n) + " is not in the model's batch");
  if (common.batch != static_cast<uint64_t>(output[0]) || block.size() < AippDynamicSize(common.batch))
    return BadBlock("they are for a batch of " + std::to_string(common.batch) + ", the model's is " + std::to_string(output[0]));
  AippDynamicImage image;
  std::memcpy(&image, block.data() + sizeof common + static_cast<size_t>(n) * sizeof image, sizeof image);
  AippConfig c;
  c.input_format = AippInputFormatName(common.input_format);
  if (c.input_format.empty()) return BadBlock("input format " + std::to_string(common.input_format) + " is not one npukit's AIPP takes");
  c.output = output;
  c.src_w = common.src_w, c.src_h = common.src_h;
  c.csc = common.csc, c.rbuv_swap = common.rbuv_swap, c.ax_swap = common.ax_swap;
  std::copy(std::begin(common.matrix), std::end(common.matrix), c.matrix.begin());
  std::copy(std::begin(common.output_bias), std::end(common.output_bias), c.output_bias.begin());
  std::copy(std::begin(common.input_bias), std::end(common.input_bias), c.input_bias.begin());
  std::copy(std::begin(image.mean), std::end(image.mean), c.mean.begin());
  std::copy(std::begin(image.min), std::end(image.min), c.min.begin());
  std::copy(std::begin(image.var_reci), std::end(image.var_reci), c.var_reci.begin());
  c.crop = image.crop;
  c.crop_x = image.crop ? image.crop_x : 0, c.crop_y = image.crop ? image.crop_y : 0;
  c.crop_w = image.crop ? image.crop_w : c.src_w, c.crop_h = image.crop ? image.crop_h : c.src_h;
  if (image.padding) c.pad_top = image.pad_top, c.pad_bottom = image.pad_bottom, c.pad_left = image.pad_left, c.pad_right = image.pad_right;
  const int64_t channels = c.input_format == "YUV400_U8" ? 1 : 3;
  if (output[1] != channels) return BadBlock(c.input_format + " gives " + std::to_string(channels) + " channel(s), the model input has " + std::to_string(output[1]));
  if (c.src_w <= 0 || c.src_h <= 0) return BadBlock("the source image size " + std::to_string(c.src_w) + "x" + std::to_string(c.src_h) + " is not set");
  if (c.input_format == "YUV420SP_U8" && (c.src_w % 2 || c.src_h % 2)) return BadBlock("YUV420SP_U8 needs an even width and height");
  const int64_t bytes = c.input_format == "YUV420SP_U8" ? c.src_w * c.src_h * 3 / 2 : c.src_w * c.src_h * c.ImageChannels();
  if (bytes > slot_bytes)
    return BadBlock("a " + std::to_string(c.src_w) + "x" + std::to_string(c.src_h) + " " + c.input_format + " image has " + std::to_string(bytes) +
                    " bytes, more than max_src_image_size " + std::to_string(slot_bytes));
  for (int64_t v : {c.crop_x, c.crop_y, c.crop_w, c.crop_h, c.pad_top, c.pad_bottom, c.pad_left, c.pad_right})
    if (v < 0) return BadBlock("sizes and positions must not be negative");
  if (c.crop_w <= 0 || c.crop_h <= 0 || c.crop_x + c.crop_w > c.src_w || c.crop_y + c.crop_h > c.src_h)
    return BadBlock("image " + std::to_string(n) + "'s crop leaves the " + std::to_string(c.src_w) + "x" + std::to_string(c.src_h) + " source image");
  if (c.crop_h + c.pad_top + c.pad_bottom != output[2] || c.crop_w + c.pad_left + c.pad_right != output[3])
    return BadBlock("image " + std::to_string(n) + ": the crop and padding make " + std::to_string(c.crop_w + c.pad_left + c.pad_right) + "x" +
                    std::to_string(c.crop_h + c.pad_top + c.pad_bottom) + ", the model input is " + std::to_string(output[3]) + "x" + std::to_string(output[2]) +
                    " (npukit's AIPP does not resize)");
  return c;
}

}  // namespace npu
