// Static AIPP, the AI Core's image pre-processing in front of a model input (atc --insert_op_conf). The
// input becomes raw uint8 image bytes; an Aipp node crops, swaps channels, converts the colour space,
// normalises and pads them into the NCHW tensor the model was trained on. Facts: reference/atc.md §2.6 and
// CANN's CSC formulas: YUV->RGB  out = (M·(in - input_bias)) >> 8;  RGB->YUV  out = (M·in) >> 8 + output_bias;
// then  (pixel - mean_chn - min_chn) · var_reci_chn.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/aipp_config.h"
#include "ir/graph.h"

namespace npu {

// Every aipp_op of an --insert_op_conf file. Syntax errors, unknown fields and unsupported values are
// E10052 naming the line and field.
Result<std::vector<AippConfig>> LoadAippConfig(const std::string& path);
// Checks `c` against the model input it names and puts an Aipp node in front of it (E10052 on a mismatch).
Status InsertAipp(Graph& g, AippConfig c);

}  // namespace npu
