// Device formats: the layouts themselves (checked element by element against the definitions), the pass that
// assigns them and inserts TransData, ConfusionTransposeD, and the .om round trip of device-format weights.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "ir/ascend_types.h"
#include "ir/device_format.h"
#include "lower/lower.h"
#include "om/om_model.h"
#include "passes/formats.h"
#include "passes/fusion.h"
#include "passes/precision.h"
#include "test_util.h"

namespace npu {
namespace {

// 0, 1, 2, ... as fp32 (every element distinct, none zero but the first).
Tensor Iota(Shape s) {
  Tensor t = Tensor::Empty(DType::kF32, std::move(s));
  for (int64_t i = 0; i < t.numel(); ++i) t.mutable_data<float>()[i] = static_cast<float>(i);
  return t;
}

Tensor Laid(const Tensor& t, Format f, int64_t groups = 1) {
  auto d = ToDevice(t, f, groups);
  EXPECT_TRUE(d.ok()) << d.status().message();
  return d.value();
}

void ExpectRoundTrip(const Tensor& t, Format f, int64_t groups = 1) {
  Tensor d = Laid(t, f, groups);
  auto back = FromDevice(d, f, t.shape(), groups);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(std::equal(t.span<float>().begin(), t.span<float>().end(), back.value().span<float>().begin()));
  // Exactly the origin elements are non-zero in the device tensor (Iota's 0 aside): padding is zero.
  int64_t nonzero = 0;
  for (float v : d.span<float>()) nonzero += v != 0;
  EXPECT_EQ(nonzero, t.numel() - 1);
}

TEST(DeviceFormat, Nc1hwc0PutsChannelsInBlocksOfC0) {
  Tensor t = Iota({2, 20, 2, 3});  // C = 20: two blocks, the second 12 channels of padding
  Tensor d = Laid(t, Format::kNC1HWC0);
  EXPECT_EQ(d.shape(), (Shape{2, 2, 2, 3, 16}));
  const float* x = t.data<float>();
  const float* y = d.data<float>();
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 20; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 3; ++w)
          EXPECT_EQ(y[(((n * 2 + c / 16) * 2 + h) * 3 + w) * 16 + c % 16], x[((n * 20 + c) * 2 + h) * 3 + w]);
  ExpectRoundTrip(t, Format::kNC1HWC0);
}

TEST(DeviceFormat, FractalZTilesWeightsOutputChannelMajor) {
  Tensor t = Iota({20, 3, 2, 2});  // N = 20 -> two fractal columns; C = 3 -> one C0 block
  Tensor d = Laid(t, Format::kFractalZ);
  EXPECT_EQ(d.shape(), (Shape{4, 2, 16, 16}));
  for (int n = 0; n < 20; ++n)
    for (int c = 0; c < 3; ++c)
      for (int hw = 0; hw < 4; ++hw)
        EXPECT_EQ(d.data<float>()[(hw * 2 + n / 16) * 256 + (n % 16) * 16 + c], t.data<float>()[(n * 3 + c) * 4 + hw]);
  ExpectRoundTrip(t, Format::kFractalZ);
}

// --enable_small_channel: NC1HWC0 with C0 = 4, and weights whose (h, w, c) taps (c padded to 4) run along K
// before K is cut into 16 x C0 fractals (GE's NCHW -> FRACTAL_Z_C04: pad N to 16 and C to 4, transpose to
// (N, H, W, 4), pad H·W·4 to C0, then (K1, N1, 16, C0)).
TEST(DeviceFormat, C04LayoutsPackFourChannelsPerPixel) {
  Tensor x = Iota({2, 3, 2, 3});
  Tensor dx = Laid(x, Format::kNC1HWC0_C04);
  EXPECT_EQ(dx.shape(), (Shape{2, 1, 2, 3, 4}));
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int hw = 0; hw < 6; ++hw) EXPECT_EQ(dx.data<float>()[(n * 6 + hw) * 4 + c], x.data<float>()[(n * 3 + c) * 6 + hw]);
  ExpectRoundTrip(x, Format::kNC1HWC0_C04);
  Tensor w = Iota({17, 3, 3, 3});  // K = 4 * 9 = 36 -> 3 blocks of 16; N = 17 -> 2 fractal columns
  Tensor dw = Laid(w, Format::kFractalZ_C04);
  EXPECT_EQ(dw.shape(), (Shape{3, 2, 16, 16}));
  for (int n = 0; n < 17; ++n)
    for (int c = 0; c < 3; ++c)
      for (int k = 0; k < 9; ++k) {
        const int z = k * 4 + c;
        EXPECT_EQ(dw.data<float>()[((z / 16) * 2 + n / 16) * 256 + (n % 16) * 16 + z % 16], w.data<float>()[(n * 3 + c) * 9 + k]);
      }
  ExpectRoundTrip(w, Format::kFractalZ_C04);
  EXPECT_FALSE(ToDevice(Iota({4, 5, 3, 3}), Format::kFractalZ_C04).ok());  // more than 4 channels
}

TEST(DeviceFormat, FractalZSpansInputChannelBlocksForEveryKernelSize) {
  for (int64_t hw : {1, 9}) {  // 1x1 weights are copied a block row at a time, larger ones lane by lane
    Tensor t = Iota({18, 20, hw == 1 ? 1 : 3, hw == 1 ? 1 : 3});  // C = 20: two C0 blocks; N = 18: 32 rows
    Tensor d = Laid(t, Format::kFractalZ);
    EXPECT_EQ(d.shape(), (Shape{2 * hw, 2, 16, 16}));
    for (int64_t n = 0; n < 18; ++n)
      for (int64_t c = 0; c < 20; ++c)
        for (int64_t k = 0; k < hw; ++k)
          EXPECT_EQ(d.data<float>()[(((c / 16) * hw + k) * 32 + n) * 16 + c % 16], t.data<float>()[(n * 20 + c) * hw + k]) << hw;
    ExpectRoundTrip(t, Format::kFractalZ);
  }
}

TEST(DeviceFormat, GroupedFractalZPacksGroupsBlockDiagonally) {
  Tensor t = Iota({8, 1, 3, 3});  // depthwise, 8 groups of one channel: all in one 16 x 16 fractal column
  Tensor d = Laid(t, Format::kFractalZ, 8);
  EXPECT_EQ(d.shape(), (Shape{9, 1, 16, 16}));
  for (int n = 0; n < 8; ++n)
    for (int hw = 0; hw < 9; ++hw) EXPECT_EQ(d.data<float>()[hw * 256 + n * 16 + n], t.data<float>()[n * 9 + hw]);
  ExpectRoundTrip(t, Format::kFractalZ, 8);
  ExpectRoundTrip(Iota({96, 3, 3, 3}), Format::kFractalZ, 32);  // 3 in, 3 out per group
}

TEST(DeviceFormat, FractalNzStoresColumnBlocksOfPaddedRows) {
  Tensor t = Iota({2, 3, 20});  // batch 2; rows 3 -> 16; cols 20 -> two blocks
  Tensor d = Laid(t, Format::kFractalNZ);
  EXPECT_EQ(d.shape(), (Shape{2, 2, 1, 16, 16}));
  for (int b = 0; b < 2; ++b)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 20; ++c)
        EXPECT_EQ(d.data<float>()[((b * 2 + c / 16) * 16 + r) * 16 + c % 16], t.data<float>()[(b * 3 + r) * 20 + c]);
  ExpectRoundTrip(t, Format::kFractalNZ);
  ExpectRoundTrip(Iota({37}), Format::kFractalNZ);  // a vector is one row
  EXPECT_EQ(Laid(Iota({37}), Format::kFractalNZ).shape(), (Shape{3, 1, 16, 16}));
}

TEST(DeviceFormat, ShapesOfByteTypesDynamicDimsAndMisfits) {
  EXPECT_EQ(DeviceShape({Format::kNC1HWC0, {1, 40, 7, 7}, 1}).value(), (Shape{1, 2, 7, 7, 32})) << "int8: C0 = 32";
  EXPECT_EQ(DeviceShape({Format::kFractalNZ, {-1, 128, 768}, 2}).value(), (Shape{-1, 48, 8, 16, 16}));
  EXPECT_EQ(DeviceShape({Format::kNC1HWC0, {-1, 3, 224, 224}, 2}).value(), (Shape{-1, 1, 224, 224, 16}));
  EXPECT_FALSE(DeviceShape({Format::kNC1HWC0, {3, 224, 224}, 2}).ok());
  EXPECT_FALSE(DeviceShape({Format::kFractalZ, {10, 3, 3, 3}, 2, 4}).ok()) << "10 output channels in 4 groups";
  Tensor t = Iota({1, 2, 2, 2});
  std::vector<std::byte> small(8);
  EXPECT_FALSE(ToDeviceBytes({Format::kNC1HWC0, t.shape(), 4}, t.bytes(), small).ok()) << "buffer sizes are checked";
}

// conv -> relu -> maxpool -> flatten -> gemm, converted as atc does for Ascend310P3 (force_fp16).
Graph SmallCnn() {
  Builder b;
  int x = b.In("x", {1, 3, 8, 8});
  int c = b.Op("Conv", {x, b.Const("w", Random({20, 3, 3, 3}, 1)), b.Const("b", Random({20}, 2))},
               {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int p = b.Op("MaxPool", {b.Op("Relu", {c})}, {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}});
  int y = b.Op("Gemm", {b.Op("Flatten", {p}), b.Const("fc", Random({10, 320}, 3))}, {{"transB", int64_t{1}}});
  Graph g = b.Done(y);
  MapAscendOpTypes(g);
  std::vector<Status> errors;
  PrecisionConfig cfg = LoadPrecisionConfig({}, *FindSoc("Ascend310P3"), errors);
  std::vector<std::string> warnings;
  EXPECT_TRUE(AssignPrecision(g, cfg, warnings).ok());
  return g;
}

TEST(DeviceFormats, CubeOpsGetBlockedFormatsAndTransDataSitsWhereTheyChange) {
  Graph g = SmallCnn();
  Tensor in = Random({1, 3, 8, 8}, 4);
  auto want = Execute(g, {in});
  ASSERT_TRUE(AssignDeviceFormats(g, *FindSoc("Ascend310P3")).ok());
  ASSERT_TRUE(g.Verify().ok());
  std::vector<std::string> types;
  for (const Node& n : g.nodes) types.push_back(ShownType(n));
  EXPECT_EQ(types, (std::vector<std::string>{"Cast", "TransData", "Conv2D", "Relu", "MaxPoolV3", "TransData", "Flatten",
                                             "TransData", "MatMulV2", "TransData", "Cast"}));
  auto format_of = [&](const Node& n, size_t i) { return DeviceFormat(g.values[n.inputs[i]]); };
  const Node& conv = g.nodes[2];
  EXPECT_EQ(format_of(conv, 0), Format::kNC1HWC0);
  EXPECT_EQ(format_of(conv, 1), Format::kFractalZ);
  EXPECT_TRUE(g.values[conv.inputs[1]].constant) << "weights are relaid at build time, not by a TransData";
  EXPECT_EQ(format_of(conv, 2), Format::kND);
  EXPECT_EQ(DeviceFormat(g.values[g.nodes[4].outputs[0]]), Format::kNC1HWC0) << "Relu and MaxPool stay in 5HD";
  EXPECT_EQ(format_of(g.nodes[8], 0), Format::kFractalNZ);
  EXPECT_EQ(format_of(g.nodes[8], 1), Format::kFractalNZ);
  EXPECT_EQ(g.nodes[1].attr_string("src_format"), "NCHW");
  EXPECT_EQ(g.nodes[1].attr_string("dst_format"), "NC1HWC0");
  const Value& out = g.values[g.outputs[0]];
  EXPECT_EQ(out.name, "Gemm_4_out") << "the net output keeps its name";
  EXPECT_FALSE(out.device_format) << "and its origin format";
  ExpectClose(Execute(g, {in}), want, 0);  // layouts change nothing a kernel computes
}

TEST(DeviceFormats, OmStoresDeviceBytesAndLoadsOriginTensors) {
  Graph g = SmallCnn();
  ASSERT_TRUE(AssignDeviceFormats(g, *FindSoc("Ascend310P3")).ok());
  OmModel m;
  m.graph = g;
  m.tasks = LowerToTasks(m.graph, &*FindSoc("Ascend310P3"));
  std::string path = ::testing::TempDir() + "/formats.om";
  ASSERT_TRUE(SaveOm(path, m).ok());
  auto loaded = LoadOm(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Graph& l = loaded.value().graph;
  int w = l.nodes[2].inputs[1];
  const Value& before = g.values[g.nodes[2].inputs[1]];
  EXPECT_EQ(l.values[w].device_format, Format::kFractalZ);
  EXPECT_EQ(l.values[w].shape, before.shape) << "the graph keeps origin shapes";
  const Tensor &a = *l.values[w].constant, &b = *before.constant;
  ASSERT_EQ(a.nbytes(), b.nbytes());
  EXPECT_EQ(0, std::memcmp(a.raw(), b.raw(), a.nbytes()));
  EXPECT_EQ(loaded.value().weight_size % 64, 0u);
  EXPECT_GE(loaded.value().weight_size, static_cast<uint64_t>(NumElements(DeviceShapeOf(before)) * 2)) << "FRACTAL_Z bytes, padding included";
  EXPECT_EQ(DeviceFormat(l.values[l.nodes[8].outputs[0]]), Format::kFractalNZ);
  std::filesystem::remove(path);
}

TEST(DeviceFormats, ConfusionTransposeKeepsAttentionHeadsInNz) {
  Builder b;
  int x = b.In("x", {1, 32, 64});
  auto shape = [](std::vector<int64_t> v) {
    Tensor t = Tensor::Empty(DType::kI64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
    return t;
  };
  int q = b.Op("MatMul", {x, b.Const("wq", Random({64, 64}, 1))});
  int heads = b.Op("Transpose", {b.Op("Reshape", {q, b.Const("s", shape({1, 32, 4, 16}))})}, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  int y = b.Op("MatMul", {heads, b.Const("wh", Random({16, 16}, 2))});
  Graph g = b.Done(y);
  Tensor in = Random({1, 32, 64}, 3);
  auto want = Execute(g, {in});
  MapAscendOpTypes(g);
  ASSERT_TRUE(ConfusionTransposeFusionPass(g).ok());
  ASSERT_EQ(g.nodes[1].ascend_type, "ConfusionTransposeD");
  EXPECT_EQ(g.nodes[1].original_names, (std::vector<std::string>{"Reshape_1", "Transpose_2"}));
  ExpectClose(Execute(g, {in}), want, 0);
  ASSERT_TRUE(AssignDeviceFormats(g, *FindSoc("Ascend910B1")).ok());
  int transdata = 0;
  for (const Node& n : g.nodes) transdata += n.op_type == "TransData";
  EXPECT_EQ(transdata, 2) << "into NZ once and out once: the heads move as whole fractals";
  EXPECT_EQ(DeviceFormat(g.values[g.nodes[2].outputs[0]]), Format::kFractalNZ);
}

}  // namespace
}  // namespace npu
