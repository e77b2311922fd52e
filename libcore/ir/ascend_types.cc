#include "ir/ascend_types.h"

#include <string_view>

namespace npu {
namespace {

// Source: CANN's ONNX plugins (*_onnx_plugin.cpp in hicann/ops-nn, ops-math, ops-cv and the 2022
// canndev snapshot). A row applies when the node's opset is >= min_opset, its first input has `rank` dims
// (0 = any) and, when attr is set, that string attribute equals attr_value. First matching row wins.
struct TypeRow {
  std::string_view onnx, ascend;
  int min_opset = 0;
  size_t rank = 0;
  std::string_view attr = {}, attr_value = {};
};

constexpr TypeRow kTypeTable[] = {
    {"Conv", "Conv3D", 0, 5},  // 1-D Conv runs as Unsqueeze -> Conv2D -> Squeeze in CANN
    {"Conv", "Conv2D"},
    {"ConvTranspose", "Conv3DTranspose", 0, 5},
    {"ConvTranspose", "Conv2DTranspose"},
    {"Gemm", "MatMulV2"},
    {"MatMul", "BatchMatMulV2"},
    {"Softmax", "SoftmaxV2"},
    {"LogSoftmax", "LogSoftmaxV2"},
    {"BatchNormalization", "BatchNorm"},  // BatchNormBnInferFusionPass retypes it BNInference
    {"InstanceNormalization", "InstanceNorm"},
    {"LayerNormalization", "LayerNorm"},
    {"Div", "RealDiv"},
    {"Where", "SelectV2"},
    {"GreaterOrEqual", "GreaterEqual"},
    {"LessOrEqual", "LessEqual"},
    {"Not", "LogicalNot"},
    {"And", "LogicalAnd"},
    {"Or", "LogicalOr"},
    {"Clip", "ClipByValue"},
    {"ReduceSumSquare", "SquareSumV1"},
    {"ReduceL1", "LpNormV2"},
    {"ReduceL2", "LpNormV2"},
    {"Squeeze", "SqueezeV3", 13},
    {"Unsqueeze", "UnsqueezeV3", 13},
    {"Concat", "ConcatD"},
    {"Split", "SplitV"},
    {"Slice", "StridedSliceV2", 10},
    {"Gather", "GatherV2"},
    {"GatherND", "GatherNd"},
    {"MaxPool", "MaxPool3D", 0, 5},
    {"MaxPool", "MaxPoolV3"},
    {"AveragePool", "AvgPool3D", 0, 5},
    {"AveragePool", "AvgPoolV2"},
    {"GlobalMaxPool", "ReduceMax"},
    {"Resize", "ResizeNearestNeighborV2", 0, 0, "mode", "nearest"},
    {"Resize", "Resize"},
    {"Pad", "PadV3", 11},
    {"ConstantOfShape", "Fill"},
    {"ArgMax", "ArgMaxV2"},
    {"Max", "Maximum"},
    {"Min", "Minimum"},
    {"Sum", "AccumulateNV2"},
    {"CumSum", "Cumsum"},
    {"ScatterND", "TensorScatterUpdate"},  // two CANN registrations conflict (UNCERTAIN in the notes)
    {"LSTM", "CommonLSTM"},
    {"GRU", "CommonGRU"},
    {"Constant", "Const"},
};

}  // namespace

std::string AscendOpType(const Node& n, size_t rank) {
  for (const TypeRow& r : kTypeTable) {
    if (r.onnx != n.op_type || n.opset < r.min_opset || (r.rank && r.rank != rank)) continue;
    if (!r.attr.empty() && n.attr_string(r.attr) != r.attr_value) continue;
    return std::string(r.ascend);
  }
  return n.op_type;
}

std::string FrameworkOpType(std::string_view ascend) {
  for (const TypeRow& r : kTypeTable)
    if (r.ascend == ascend && r.attr.empty()) return std::string(r.onnx);
  return std::string(ascend);
}

void MapAscendOpTypes(Graph& g) {
  for (Node& n : g.nodes) {
    if (!n.ascend_type.empty()) continue;
    size_t rank = !n.inputs.empty() && n.inputs[0] >= 0 ? g.values[n.inputs[0]].shape.size() : 0;
    n.ascend_type = AscendOpType(n, rank);
  }
}

}  // namespace npu
