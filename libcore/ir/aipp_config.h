// What a static AIPP node does (atc --insert_op_conf): the config the frontend parses, the Aipp node's
// attributes and its kernel reads back. Kept below frontend/ and kernels/, which both need it.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "base/status.h"
#include "ir/graph.h"

namespace npu {

struct AippConfig {
  std::string input_format;  // RGB888_U8, XRGB8888_U8, YUV420SP_U8, YUV400_U8 (empty: dynamic AIPP's, set at run time)
  bool dynamic = false;      // aipp_mode: dynamic: the parameters come with each execution (AippDynamic* below)
  int64_t max_src_image_size = 0;  // dynamic: the bytes each image's slot of the input holds
  int64_t related_input_rank = 0;
  int64_t src_h = 0, src_w = 0;  // 0: the model input's size
  bool crop = false;
  int64_t crop_y = 0, crop_x = 0, crop_h = 0, crop_w = 0;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  float padding_value = 0;
  bool csc = false, rbuv_swap = false, ax_swap = false;
  std::array<int64_t, 9> matrix{};
  std::array<int64_t, 3> input_bias{}, output_bias{};
  std::array<int64_t, 4> mean{};
  std::array<float, 4> min{}, var_reci{1, 1, 1, 1};
  Shape output;  // the model input it feeds: N, C, H, W
  std::string source;  // the config file (for messages)

  int64_t ImageChannels() const;  // bytes per pixel of the input format (YUV420SP: 1.5, counted per plane)
  bool IsYuv() const { return input_format == "YUV420SP_U8" || input_format == "YUV400_U8"; }
  // The uint8 input the model takes instead: NHWC (YUV420SP: N, H·3/2, W, 1).
  Shape InputShape() const;
};

// The config as an Aipp node's attributes (InsertAipp), and back (the kernel).
void AippToAttrs(const AippConfig& c, DType output_dtype, AttrMap& a);
AippConfig AippFromAttrs(const Node& n);

// The input formats by AscendCL's numbering (aclAippInputFormat, the same as insert_op.cfg's enum); "" for a
// number npukit's AIPP does not take.
std::string AippInputFormatName(int32_t number);

// ---- dynamic AIPP ----------------------------------------------------------------------------------------------
// A model converted with aipp_mode: dynamic takes its AIPP parameters at run time in one more uint8 input,
// kDynamicAippInput, which aclmdlSetInputAIPP fills. The block's layout is npukit's own (CANN's is internal to its
// runtime, and programs only reach it through the setters): a tag and the batch, the parameters the batch shares,
// then one set per image. Fields hold the setters' values as given.
inline constexpr const char* kDynamicAippInput = "ascend_dynamic_aipp_data";  // ACL_DYNAMIC_AIPP_NAME
inline constexpr uint32_t kDynamicAippTag = 0x50504941;  // "AIPP"
struct AippDynamicCommon {
  uint32_t tag = kDynamicAippTag;
  uint32_t batch = 0;
  int32_t input_format = 0;  // aclAippInputFormat; 0: not set
  int32_t src_w = 0, src_h = 0;
  int8_t csc = 0, rbuv_swap = 0, ax_swap = 0, reserved = 0;
  int32_t matrix[9] = {};
  int32_t output_bias[3] = {}, input_bias[3] = {};
};
struct AippDynamicImage {
  int8_t crop = 0, padding = 0, reserved[2] = {};
  int32_t crop_x = 0, crop_y = 0, crop_w = 0, crop_h = 0;
  int32_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int32_t mean[4] = {};
  float min[4] = {}, var_reci[4] = {1, 1, 1, 1};
};
static_assert(sizeof(AippDynamicCommon) == 84 && sizeof(AippDynamicImage) == 84, "the block's layout (fuzz/make_seeds.py packs it too)");
// The bytes of the block for `batch` images.
size_t AippDynamicSize(uint64_t batch);
// Image n's parameters from the block, as a static config of that image (output: the model input, N C H W), with
// every value checked against the block's size, the image slot's bytes and the model input: a reason when not.
Result<AippConfig> AippFromDynamic(std::span<const std::byte> block, int64_t n, const Shape& output, int64_t slot_bytes);

}  // namespace npu
