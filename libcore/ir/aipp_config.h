// What a static AIPP node does (atc --insert_op_conf): the config the frontend parses, the Aipp node's
// attributes and its kernel reads back. Kept below frontend/ and kernels/, which both need it.
#pragma once
#include <array>
#include <string>

#include "ir/graph.h"

namespace npu {

struct AippConfig {
  std::string input_format;  // RGB888_U8, XRGB8888_U8, YUV420SP_U8, YUV400_U8
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

}  // namespace npu
