// Channels-last feature maps: the conversions, the oneDNN convolution against a direct sum, and the readers
// that take channels-last tensors giving exactly the channels-first results.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "kernels/registry.h"
#include "test_util.h"

namespace npu {
namespace {

ThreadPool& Pool() { return ThreadPool::Global(); }

Tensor RunNode(const Node& n, std::vector<Tensor> ins, bool channels_last_out = false) {
  RegisterBuiltinOps();
  std::vector<Tensor> out;
  FloatStatus st;
  static const ExecContext reference;
  Status s = RunKernel(n, std::move(ins), out, Pool(), reference, &st, {nullptr, channels_last_out});
  EXPECT_TRUE(s.ok()) << s.message();
  return out.empty() ? Tensor() : out[0];
}

// Every value of a one-input graph, its nodes run one by one on (N, C, H, W) tensors (RunKernel, as listed).
std::vector<Tensor> OpByOp(const Graph& g, int x, const Tensor& in) {
  std::vector<Tensor> vals(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i)
    if (g.values[i].constant) vals[i] = *g.values[i].constant;
  vals[x] = in;
  for (const Node& n : g.nodes) {
    std::vector<Tensor> ins, outs;
    for (int i : n.inputs) ins.push_back(vals[i]);
    const Status s = RunKernel(n, ins, outs, Pool());
    EXPECT_TRUE(s.ok()) << n.name << ": " << s.message();
    if (!s.ok()) break;
    vals[n.outputs[0]] = outs[0];
  }
  return vals;
}

// A graph whose runtime reads some task's result in place of running it (PlanConcatPairs, PlanStridedViews): run on
// `in` unobserved, `read_in_place` counts `expected` such reads, and none with an observer attached (which sees every
// task run); every output is the bits of the op-by-op run and of the observed run. Returns the op-by-op values.
std::vector<Tensor> ExpectReadsInPlaceKeepTheBits(const Graph& g, int x, const Tensor& in, int (Session::*read_in_place)() const, int expected) {
  const std::vector<Tensor> vals = OpByOp(g, x, in);
  auto session = Session::FromGraph(g);
  EXPECT_TRUE(session.ok());
  if (!session.ok()) return vals;
  std::vector<Tensor> unobserved, observed;
  EXPECT_TRUE(session.value().Run({in}, unobserved).ok());
  EXPECT_EQ((session.value().*read_in_place)(), expected);
  TaskObserver watcher;
  session.value().AddObserver(&watcher);
  EXPECT_TRUE(session.value().Run({in}, observed).ok());
  EXPECT_EQ((session.value().*read_in_place)(), 0);
  EXPECT_EQ(unobserved.size(), g.outputs.size());
  EXPECT_EQ(observed.size(), g.outputs.size());
  for (size_t o = 0; o < g.outputs.size() && o < unobserved.size() && o < observed.size(); ++o) {
    SCOPED_TRACE("output " + std::to_string(o));
    ExpectSameBits(unobserved[o], vals[g.outputs[o]]);
    ExpectSameBits(unobserved[o], observed[o]);
  }
  return vals;
}

TEST(ChannelsLast, ConversionsRoundTripAndMapIndices) {
  // Small, ragged in both row tiles and column blocks of the transpose, and image-like inputs of 2 to 4 channels
  // (interleaved, over more than one block of pixels and more than one image).
  for (const Shape& shape : std::vector<Shape>{{2, 5, 3, 4}, {2, 19, 17, 31}, {1, 3, 50, 60}, {2, 2, 70, 70}, {2, 4, 9, 500}}) {
    Tensor x = Random(shape, 1);
    Tensor cl = ToChannelsLast(x, Pool());
    ASSERT_TRUE(cl.channels_last);
    const int64_t N = shape[0], C = shape[1], HW = shape[2] * shape[3];
    const float* f = x.data<float>();
    const float* l = cl.data<float>();
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t p = 0; p < HW; ++p) {
          int64_t mem = (n * HW + p) * C + c;
          ASSERT_EQ(l[mem], f[(n * C + c) * HW + p]);
          ASSERT_EQ(ChannelsFirstIndex(x.shape(), mem), (n * C + c) * HW + p);
        }
    ExpectSameBits(ToChannelsFirst(cl, Pool()), x);
  }
  // Where the two orders hold the same bytes (one pixel or one channel), nothing is copied or marked.
  Tensor se = Random({1, 8, 1, 1}, 2);
  EXPECT_EQ(ToChannelsLast(se, Pool()).raw(), se.raw());
  EXPECT_FALSE(ToChannelsLast(se, Pool()).channels_last);
}

struct ConvCase {
  int64_t C, M, G, H, W, K, stride, dil;
  std::vector<int64_t> pads;  // top, left, bottom, right
};

// y[n][m][oh][ow] = bias[m] + sum over the group's channels and taps, in double.
std::vector<double> DirectConv(const Tensor& x, const Tensor& w, const Tensor& b, const ConvCase& k, int64_t OH, int64_t OW) {
  const int64_t N = x.shape()[0], Cg = k.C / k.G, Mg = k.M / k.G;
  std::vector<double> y(static_cast<size_t>(N * k.M * OH * OW));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < k.M; ++m)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double s = b.data<float>()[m];
          for (int64_t cg = 0; cg < Cg; ++cg)
            for (int64_t kh = 0; kh < k.K; ++kh)
              for (int64_t kw = 0; kw < k.K; ++kw) {
                int64_t ih = oh * k.stride - k.pads[0] + kh * k.dil, iw = ow * k.stride - k.pads[1] + kw * k.dil;
                if (ih < 0 || ih >= k.H || iw < 0 || iw >= k.W) continue;
                int64_t c = m / Mg * Cg + cg;
                s += double(x.data<float>()[((n * k.C + c) * k.H + ih) * k.W + iw]) * w.data<float>()[((m * Cg + cg) * k.K + kh) * k.K + kw];
              }
          y[static_cast<size_t>(((n * k.M + m) * OH + oh) * OW + ow)] = s;
        }
  return y;
}

TEST(ChannelsLast, ConvMatchesADirectSumInEitherOrder) {
  const std::vector<ConvCase> cases = {
      {16, 32, 1, 9, 9, 1, 1, 1, {0, 0, 0, 0}},    // pointwise
      {16, 24, 1, 9, 9, 1, 2, 1, {0, 0, 0, 0}},    // strided 1x1: the last input row is in no window
      {8, 16, 1, 10, 7, 3, 1, 1, {1, 1, 1, 1}},    // 3x3 "same"
      {8, 16, 1, 10, 7, 3, 2, 1, {0, 1, 1, 0}},    // strided, asymmetric pads
      {24, 24, 24, 11, 11, 3, 2, 1, {1, 1, 1, 1}},  // depthwise
      {12, 18, 3, 8, 8, 3, 1, 1, {1, 1, 1, 1}},     // grouped
      {8, 8, 1, 12, 12, 5, 1, 2, {4, 4, 4, 4}},     // dilated
      {3, 16, 1, 17, 17, 7, 2, 1, {3, 3, 3, 3}},    // a stem conv on RGB
  };
  for (const ConvCase& k : cases) {
    SCOPED_TRACE("C" + std::to_string(k.C) + " M" + std::to_string(k.M) + " G" + std::to_string(k.G) + " K" + std::to_string(k.K) +
                 " s" + std::to_string(k.stride));
    Tensor x = Random({2, k.C, k.H, k.W}, 3), w = Random({k.M, k.C / k.G, k.K, k.K}, 4), b = Random({k.M}, 5);
    Node n = MakeNode("Conv", 3, {{"group", k.G}, {"strides", std::vector<int64_t>{k.stride, k.stride}},
                                  {"dilations", std::vector<int64_t>{k.dil, k.dil}}, {"pads", k.pads}});
    Tensor first = RunNode(n, {x, w, b});
    const int64_t OH = first.shape()[2], OW = first.shape()[3];
    EXPECT_FALSE(first.channels_last);  // not asked for: handed back in (N, C, H, W)
    std::vector<double> want = DirectConv(x, w, b, k, OH, OW);
    for (bool x_last : {false, true})
      for (bool out_last : {false, true}) {
        Tensor y = RunNode(n, {x_last ? ToChannelsLast(x, Pool()) : x, w, b}, out_last);
        EXPECT_EQ(y.channels_last, out_last && OrdersDiffer(y.shape()));
        Tensor yf = ToChannelsFirst(y, Pool());
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(yf.data<float>()[i], want[i], 1e-4 * (1 + std::abs(want[i]))) << "element " << i;
      }
  }
}

TEST(ChannelsLast, FusedResidualAndActivationComeInThatOrder) {
  Tensor x = Random({1, 16, 6, 6}, 6), w = Random({16, 16, 3, 3}, 7), b = Random({16}, 8), r = Random({1, 16, 6, 6}, 9, -4, 4);
  x.mutable_data<float>()[5 * 36 + 7] = std::nanf("");  // NaN into a few outputs of every channel
  r.mutable_data<float>()[3] = INFINITY, r.mutable_data<float>()[4] = -INFINITY, r.mutable_data<float>()[40] = std::nanf("");
  Node conv = MakeNode("Conv", 2, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Tensor plain = RunNode(conv, {x, w});
  Node fused = MakeNode("Conv", 3, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueOp, std::string("Relu")},
                                    {kEpilogueResidualInput, int64_t{3}}});
  for (bool r_last : {false, true}) {
    Tensor y = ToChannelsFirst(RunNode(fused, {x, w, Tensor(), r_last ? ToChannelsLast(r, Pool()) : r}, true), Pool());
    for (int64_t i = 0; i < y.numel(); ++i)
      ASSERT_EQ(y.data<float>()[i], std::max(0.f, plain.data<float>()[i] + r.data<float>()[i])) << "element " << i;  // NaN -> 0
  }
}

// A fused Swish is computed by the oneDNN primitive (its eltwise_swish post-op), after a fused residual:
// within a few ulp of the unfused Swish op, with or without a residual, and for another alpha.
TEST(ChannelsLast, FusedSwishInsideTheConvMatchesTheSwishOp) {
  Tensor x = Random({1, 16, 12, 12}, 6), w = Random({32, 16, 3, 3}, 7), b = Random({32}, 8), r = Random({1, 32, 12, 12}, 9, -4, 4);
  AttrMap pads = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Tensor plain = RunNode(MakeNode("Conv", 3, pads), {x, w, b});
  Tensor summed = RunNode(MakeNode("Add", 2), {plain, r});
  for (float alpha : {1.0f, 1.702f})
    for (bool with_residual : {false, true}) {
      SCOPED_TRACE("alpha " + std::to_string(alpha) + (with_residual ? ", residual" : ""));
      AttrMap attrs = pads;
      attrs[kEpilogueOp] = std::string("Swish");
      attrs[std::string(kEpilogueAttrPrefix) + "alpha"] = alpha;
      if (with_residual) attrs[kEpilogueResidualInput] = int64_t{3};
      Node fused = MakeNode("Conv", with_residual ? 4 : 3, attrs);
      Tensor y = ToChannelsFirst(RunNode(fused, with_residual ? std::vector<Tensor>{x, w, b, r} : std::vector<Tensor>{x, w, b}, true), Pool());
      Tensor want = RunNode(MakeNode("Swish", 1, {{"alpha", alpha}}), {with_residual ? summed : plain});
      for (int64_t i = 0; i < y.numel(); ++i) {
        float v = want.data<float>()[i];
        ASSERT_NEAR(y.data<float>()[i], v, 4e-7f * std::max(1.0f, std::fabs(v))) << "element " << i;
      }
    }
}

// A fused HardSwish is oneDNN's eltwise_hardswish post-op: within an ulp of the HardSwish op over values
// that cross both kinks (-3 and 3), and the same NaN and infinities (channels whose bias is one).
TEST(ChannelsLast, FusedHardSwishInsideTheConvMatchesTheHardSwishOp) {
  Tensor x = Random({1, 16, 12, 12}, 16), w = Random({32, 16, 3, 3}, 17), b = Random({32}, 18, -4, 4), r = Random({1, 32, 12, 12}, 19, -4, 4);
  float* bias = b.mutable_data<float>();
  bias[3] = std::nanf(""), bias[5] = INFINITY, bias[7] = -INFINITY;
  AttrMap pads = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Tensor plain = RunNode(MakeNode("Conv", 3, pads), {x, w, b});
  Tensor summed = RunNode(MakeNode("Add", 2), {plain, r});
  for (bool with_residual : {false, true}) {
    SCOPED_TRACE(with_residual ? "residual" : "no residual");
    AttrMap attrs = pads;
    attrs[kEpilogueOp] = std::string("HardSwish");
    if (with_residual) attrs[kEpilogueResidualInput] = int64_t{3};
    Node fused = MakeNode("Conv", with_residual ? 4 : 3, attrs);
    Tensor y = ToChannelsFirst(RunNode(fused, with_residual ? std::vector<Tensor>{x, w, b, r} : std::vector<Tensor>{x, w, b}, true), Pool());
    Tensor want = RunNode(MakeNode("HardSwish", 1), {with_residual ? summed : plain});
    int64_t kinks_crossed = 0;
    for (int64_t i = 0; i < y.numel(); ++i) {
      float v = want.data<float>()[i], got = y.data<float>()[i];
      if (!std::isfinite(v)) {
        ASSERT_TRUE(std::isnan(v) ? std::isnan(got) : got == v) << "element " << i << ": " << got << " for " << v;
        continue;
      }
      kinks_crossed += std::fabs(v) > 0 && std::fabs(v) < 3;
      ASSERT_NEAR(got, v, 2.4e-7f * std::max(1.0f, std::fabs(v))) << "element " << i;
    }
    EXPECT_GT(kinks_crossed, 100);
  }
}

TEST(ChannelsLast, ElementwiseBroadcastAndGlobalPoolGiveTheChannelsFirstBits) {
  Tensor x = Random({2, 8, 5, 3}, 10), y = Random({2, 8, 5, 3}, 11);
  Tensor xl = ToChannelsLast(x, Pool()), yl = ToChannelsLast(y, Pool());
  const std::vector<Tensor> others = {y, yl, Random({2, 8, 1, 1}, 12), Random({8, 1, 1}, 13), Random({1, 1, 5, 3}, 14),
                                      Random({3}, 15), Random({1}, 16)};
  for (const char* op : {"Add", "Mul", "Sub", "Div"})
    for (const Tensor& o : others) {
      SCOPED_TRACE(std::string(op) + " with " + ShapeToString(o.shape()) + (o.channels_last ? " channels-last" : ""));
      Tensor want = RunNode(MakeNode(op, 2), {x, ToChannelsFirst(o, Pool())});
      Tensor got = RunNode(MakeNode(op, 2), {xl, o});
      ExpectSameBits(ToChannelsFirst(got, Pool()), want);
    }
  for (const char* op : {"Sigmoid", "Relu", "HardSwish"}) {
    Tensor got = RunNode(MakeNode(op, 1), {xl});
    EXPECT_TRUE(got.channels_last) << op;
    ExpectSameBits(ToChannelsFirst(got, Pool()), RunNode(MakeNode(op, 1), {x}));
  }
  // Global pools: channels in blocks of 16, here two full ones and a ragged one, as well as one short block.
  const Tensor wide = Random({2, 37, 6, 5}, 19);
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    ExpectSameBits(RunNode(MakeNode(op, 1), {xl}), RunNode(MakeNode(op, 1), {x}));
    ExpectSameBits(RunNode(MakeNode(op, 1), {ToChannelsLast(wide, Pool())}), RunNode(MakeNode(op, 1), {wide}));
  }
  // ReduceMean over the pixels (torch's x.mean([2, 3])) is the global average pool; over other axes the map is
  // converted first. Both give the channels-first bits, with and without keepdims, in fp32 and fp64.
  const Tensor wide64 = CastTensor(Random({2, 37, 6, 5}, 20), DType::kF64);
  for (const std::vector<int64_t>& axes : std::vector<std::vector<int64_t>>{{2, 3}, {-1, -2}, {1}, {1, 2, 3}, {0, 2, 3}, {3}})
    for (int64_t keep : {0, 1})
      for (const Tensor& t : {x, wide, wide64}) {
        SCOPED_TRACE("ReduceMean over " + std::to_string(axes.size()) + " axes, from " + std::to_string(axes[0]) + ", keepdims " +
                     std::to_string(keep) + " of " + ShapeToString(t.shape()));
        const Node mean = MakeNode("ReduceMean", 1, {{"axes", axes}, {"keepdims", keep}});
        Tensor got = RunNode(mean, {ToChannelsLast(t, Pool())});
        EXPECT_FALSE(got.channels_last);
        ExpectSameBits(got, RunNode(mean, {t}));
      }
  const AttrMap window = {{"kernel_shape", std::vector<int64_t>{3, 2}}, {"strides", std::vector<int64_t>{2, 2}},
                          {"pads", std::vector<int64_t>{1, 0, 1, 1}}, {"ceil_mode", int64_t{1}}};
  for (const char* op : {"MaxPool", "AveragePool"}) {
    Tensor got = RunNode(MakeNode(op, 1, window), {xl});
    ExpectSameBits(ToChannelsFirst(got, Pool()), RunNode(MakeNode(op, 1, window), {x}));
  }
}

TEST(ChannelsLast, ConcatAndBatchNormGiveTheChannelsFirstBits) {
  // Concat on every axis, of channels-last maps, of mixed orders, and of maps whose orders coincide (1 x 1).
  const Tensor a = Random({2, 5, 4, 3}, 20), b = Random({2, 7, 4, 3}, 21);
  for (int64_t axis : {1, -3}) {
    const Node cat = MakeNode("Concat", 2, {{"axis", axis}});
    const Tensor want = RunNode(cat, {a, b});
    for (const auto& ins : std::vector<std::vector<Tensor>>{{ToChannelsLast(a, Pool()), ToChannelsLast(b, Pool())},
                                                            {ToChannelsLast(a, Pool()), b}, {a, ToChannelsLast(b, Pool())}}) {
      Tensor got = RunNode(cat, ins);
      EXPECT_TRUE(got.channels_last);
      ExpectSameBits(ToChannelsFirst(got, Pool()), want);
    }
  }
  for (int64_t axis : {0, 2, 3}) {
    const Tensor x = Random({2, 6, 4, 3}, 22);
    const Node cat = MakeNode("Concat", 2, {{"axis", axis}});
    ExpectSameBits(ToChannelsFirst(RunNode(cat, {ToChannelsLast(x, Pool()), ToChannelsLast(x, Pool())}), Pool()), RunNode(cat, {x, x}));
  }
  const Tensor p = Random({1, 4, 1, 1}, 23), q = Random({1, 2, 1, 1}, 24);
  ExpectSameBits(RunNode(MakeNode("Concat", 2, {{"axis", int64_t{1}}}), {ToChannelsLast(p, Pool()), q}),
                 RunNode(MakeNode("Concat", 2, {{"axis", int64_t{1}}}), {p, q}));
  // BatchNormalization in inference: a per-channel affine on the channels-last rows.
  const Tensor x = Random({2, 6, 5, 3}, 25);
  std::vector<Tensor> params;
  for (unsigned k = 0; k < 4; ++k) params.push_back(Random({6}, 26 + k, k == 3 ? 0.5f : -1.0f, 1.0f));
  std::vector<Tensor> first = {x}, last = {ToChannelsLast(x, Pool())};
  first.insert(first.end(), params.begin(), params.end());
  last.insert(last.end(), params.begin(), params.end());
  Tensor got = RunNode(MakeNode("BatchNormalization", 5), last);
  EXPECT_TRUE(got.channels_last);
  ExpectSameBits(ToChannelsFirst(got, Pool()), RunNode(MakeNode("BatchNormalization", 5), first));
  // With a fused Relu, applied on each task's rows inside the kernel: the bits of the two ops, in either order,
  // over enough rows for several tasks.
  const Tensor wide = Random({2, 6, 40, 40}, 30, -1.0f, 1.0f);
  first[0] = wide;
  last[0] = ToChannelsLast(wide, Pool());
  const Tensor want = RunNode(MakeNode("Relu", 1), {RunNode(MakeNode("BatchNormalization", 5), first)});
  const Node fused = MakeNode("BatchNormalization", 5, {{kEpilogueOp, std::string("Relu")}});
  ExpectSameBits(RunNode(fused, first), want);
  ExpectSameBits(ToChannelsFirst(RunNode(fused, last), Pool()), want);
}

// ShuffleChannel on a channels-last map transposes each pixel's channels as a group x C/group matrix: groups
// that interleave (up to 4) and that take the tiled transpose, 4- and 2-byte elements, the channels-first bits.
TEST(ChannelsLast, ShuffleChannelOfEveryGroupGivesTheChannelsFirstBits) {
  for (int64_t group : {2, 3, 5, 8}) {
    const Tensor x = Random({2, group * 7, 5, 9}, 40 + static_cast<unsigned>(group));
    const Node shuffle = MakeNode("ShuffleChannel", 1, {{"group", group}});
    for (const Tensor& t : {x, FromF32(x, DType::kF16)}) {
      const Tensor got = RunNode(shuffle, {ToChannelsLast(t, Pool())});
      EXPECT_TRUE(got.channels_last);
      ExpectSameBits(ToChannelsFirst(got, Pool()), RunNode(shuffle, {t}));
    }
  }
}

// Transpose, Slice and AveragePool of channels-last maps give the channels-first results; the two transposes
// between (N, C, H, W) and (N, H, W, C) are the input's own bytes (no copy).
TEST(ChannelsLast, TransposeSliceAndAveragePoolGiveTheChannelsFirstBits) {
  const Tensor x = Random({2, 6, 5, 3}, 30);
  const Tensor x_last = ToChannelsLast(x, Pool());
  for (const auto& perm : std::vector<std::vector<int64_t>>{{0, 2, 3, 1}, {0, 3, 1, 2}, {3, 1, 0, 2}, {0, 1, 2, 3}}) {
    const Node t = MakeNode("Transpose", 1, {{"perm", perm}});
    ExpectSameBits(ToChannelsFirst(RunNode(t, {x_last}), Pool()), RunNode(t, {x}));
  }
  const Tensor to_nhwc = RunNode(MakeNode("Transpose", 1, {{"perm", std::vector<int64_t>{0, 2, 3, 1}}}), {x_last});
  EXPECT_EQ(to_nhwc.raw(), x_last.raw());
  EXPECT_FALSE(to_nhwc.channels_last);
  const Tensor back = RunNode(MakeNode("Transpose", 1, {{"perm", std::vector<int64_t>{0, 3, 1, 2}}}), {to_nhwc}, true);
  EXPECT_EQ(back.raw(), x_last.raw());
  ExpectSameBits(back, x_last);

  const Node slice = MakeNode("Slice", 5);
  const std::vector<Tensor> params = {I64({1, 4, 0}), I64({6, 0, 3}), I64({1, 2, 3}), I64({2, -1, 2})};
  std::vector<Tensor> first = {x}, last = {x_last};
  first.insert(first.end(), params.begin(), params.end());
  last.insert(last.end(), params.begin(), params.end());
  ExpectSameBits(ToChannelsFirst(RunNode(slice, last), Pool()), RunNode(slice, first));

  const Node avg = MakeNode("AveragePool", 1, {{"kernel_shape", std::vector<int64_t>{3, 2}}, {"pads", std::vector<int64_t>{1, 0, 1, 1}},
                                               {"strides", std::vector<int64_t>{2, 1}}, {"count_include_pad", int64_t{1}}});
  const Tensor pooled = RunNode(avg, {x_last});
  EXPECT_TRUE(pooled.channels_last);
  ExpectSameBits(ToChannelsFirst(pooled, Pool()), RunNode(avg, {x}));
}

// Pools of more channels than one block of the channels-last loop (32) and a remainder, over clipped windows
// (pads, ceil mode, dilation), NaN included, give the channels-first bits.
TEST(ChannelsLast, MaxAndAveragePoolsOfWideMapsGiveTheChannelsFirstBits) {
  Tensor x = Random({2, 40, 7, 6}, 31);
  x.mutable_data<float>()[5 * 42 + 8] = std::numeric_limits<float>::quiet_NaN();
  const Tensor x_last = ToChannelsLast(x, Pool());
  for (const char* op : {"MaxPool", "AveragePool"}) {
    for (int64_t include_pad : {0, 1}) {
      AttrMap attrs = {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 0}},
                       {"strides", std::vector<int64_t>{2, 2}}, {"ceil_mode", int64_t{1}}};
      if (std::string(op) == "AveragePool") attrs["count_include_pad"] = include_pad;
      else attrs["dilations"] = std::vector<int64_t>{1, 2};
      const Node pool = MakeNode(op, 1, attrs);
      const Tensor pooled = RunNode(pool, {x_last});
      EXPECT_TRUE(pooled.channels_last);
      ExpectSameBits(ToChannelsFirst(pooled, Pool()), RunNode(pool, {x}));
    }
  }
}

// Max pools whose windows overlap down the map run by rows (each input row's maxima made once): over padded,
// clipped, dilated and strided windows, on maps whose maxima are ties of -0 and +0, and with a NaN in one image
// (its rows are done tap by tap), they give the channels-first bits, on one thread and on several.
TEST(ChannelsLast, MaxPoolsByRowsGiveTheChannelsFirstBits) {
  for (int64_t channels : {48, 21}) {  // whole 16-lane vectors, and a tail of 5 lanes
    Tensor noise = Random({2, channels, 20, 13}, 33);
    Tensor zeros = Random({2, channels, 20, 13}, 34);
    for (float& v : std::span(zeros.mutable_data<float>(), static_cast<size_t>(zeros.numel())))
      v = v < -0.3f ? -1.f : v < 0.3f ? -0.f : 0.f;  // every window's maximum a tie of zeros of either sign
    Tensor with_nan = noise.Clone();
    with_nan.mutable_data<float>()[channels * 20 * 13 + 7 * 13 + 4] = std::numeric_limits<float>::quiet_NaN();  // image 1
    // In the last channel (past the whole vectors where there is a tail), a NaN that starts a window's middle row,
    // beside that window's maximum: taken row by row, the row's maximum would be the NaN and hide the 100.
    Tensor with_tail_nan = noise.Clone();
    float* last_channel = with_tail_nan.mutable_data<float>() + (channels - 1) * 20 * 13;
    last_channel[12 * 13 + 6] = std::numeric_limits<float>::quiet_NaN();
    last_channel[12 * 13 + 7] = 100.f;
    struct Case {
      std::vector<int64_t> kernel, pads, strides, dilations;
      int64_t ceil;
    };
    const Case cases[] = {{{3, 3}, {1, 1, 1, 1}, {1, 1}, {1, 1}, 1},   // GoogLeNet's pool branch
                          {{3, 2}, {0, 1, 2, 0}, {1, 2}, {1, 1}, 1},   // asymmetric pads, strided across
                          {{2, 3}, {1, 0, 0, 1}, {1, 1}, {3, 2}, 0},   // dilated
                          {{3, 3}, {1, 1, 1, 1}, {2, 2}, {1, 1}, 1}};  // stride 2 down the map (rows shared by two)
    for (const Tensor* x : {&noise, &zeros, &with_nan, &with_tail_nan}) {
      const Tensor x_last = ToChannelsLast(*x, Pool());
      for (const Case& c : cases) {
        const Node pool = MakeNode("MaxPool", 1, {{"kernel_shape", c.kernel}, {"pads", c.pads}, {"strides", c.strides}, {"dilations", c.dilations},
                                                   {"ceil_mode", c.ceil}});
        const Tensor want = RunNode(pool, {*x});
        for (int threads : {1, 3}) {
          ThreadPool pool_of(threads);
          std::vector<Tensor> out;
          ASSERT_TRUE(RunKernel(pool, {x_last}, out, pool_of).ok());
          ASSERT_TRUE(out[0].channels_last);
          ExpectSameBits(ToChannelsFirst(out[0], Pool()), want);
        }
      }
    }
  }
}

// Global pools over maps large enough to be shared by the threads (parts of the pixels, MeanParts): the same bits
// in either memory order, from ReduceMean over the pixels, and on 1, 2 and 3 threads; each mean that of a double
// sum in pixel order, rounded once. Pixel counts that split into parts unevenly, fewer pixels than parts, channels
// that fill no block of 16.
TEST(ChannelsLast, GlobalPoolsOfLargeMapsGiveTheSameBitsOnAnyThreadCount) {
  const Node mean = MakeNode("ReduceMean", 1, {{"axes", std::vector<int64_t>{2, 3}}, {"keepdims", int64_t{1}}});
  for (const Shape& shape : std::vector<Shape>{{1, 144, 56, 56}, {2, 37, 23, 29}, {1, 1280, 7, 7}, {1, 40, 3, 5}}) {
    SCOPED_TRACE(ShapeToString(shape));
    const Tensor x = Random(shape, 23);
    const Tensor x_last = ToChannelsLast(x, Pool());
    for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
      const Tensor want = RunNode(MakeNode(op, 1), {x});
      for (int threads : {1, 2, 3}) {
        ThreadPool pool_of(threads);
        std::vector<Tensor> out;
        ASSERT_TRUE(RunKernel(MakeNode(op, 1), {x_last}, out, pool_of).ok());
        ExpectSameBits(out[0], want);
        if (std::string_view(op) == "GlobalAveragePool") {
          out.clear();
          ASSERT_TRUE(RunKernel(mean, {x_last}, out, pool_of).ok());
          ExpectSameBits(out[0], want);
        }
      }
    }
    const Tensor avg = RunNode(MakeNode("GlobalAveragePool", 1), {x});
    const int64_t hw = shape[2] * shape[3];
    for (int64_t nc = 0; nc < shape[0] * shape[1]; ++nc) {
      double sum = 0;
      for (int64_t i = 0; i < hw; ++i) sum += x.data<float>()[nc * hw + i];
      EXPECT_EQ(avg.data<float>()[nc], static_cast<float>(sum / static_cast<double>(hw))) << "channel " << nc;
    }
  }
}

// A session hands channels-last tensors only to readers that take them, and its outputs leave in (N, C, H, W).
TEST(ChannelsLast, SessionResultsEqualOpByOpOnes) {
  Builder b;
  int x = b.In("x", {1, 8, 7, 7});
  int conv = b.Op("Conv", {x, b.Const("w", Random({16, 8, 3, 3}, 17)), b.Const("b", Random({16}, 18))},
                  {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int silu = b.Op("Mul", {conv, b.Op("Sigmoid", {conv})});
  int se = b.Op("Mul", {silu, b.Op("Sigmoid", {b.Op("GlobalAveragePool", {silu})})});
  int out = b.Op("Add", {se, b.Op("Transpose", {se}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})});
  Graph g = b.Done(out);
  Tensor in = Random({1, 8, 7, 7}, 19);
  const std::vector<Tensor> vals = OpByOp(g, x, in);  // no kernel is offered channels-last output
  std::vector<float> got = Execute(g, {in});
  auto want = vals[out].span<float>();
  ExpectClose(got, {want.begin(), want.end()}, 0);
}

// DenseNet's Concat -> BatchNormalization: unobserved, the BatchNormalization reads the Concat's pieces where they
// lie (Session::PlanConcatPairs). The results are the bits of the two ops run one by one, and of a run with an
// observer attached (which sees every task run); a piece in channels-first order (the graph input) and a Concat
// with a second reader keep their Concat.
TEST(ChannelsLast, ConcatReadAsPiecesGivesTheBitsOfTheConcat) {
  Builder b;
  int x = b.In("x", {1, 8, 7, 7});
  auto conv = [&](int in, int64_t c_in, int64_t c_out, unsigned seed) {
    return b.Op("Conv", {in, b.Const("w" + std::to_string(seed), Random({c_out, c_in, 3, 3}, seed)), b.Const("b" + std::to_string(seed), Random({c_out}, seed + 1))},
                {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  };
  auto batch_norm = [&](int in, int64_t c, unsigned seed) {
    return b.Op("BatchNormalization", {in, b.Const("s" + std::to_string(seed), Random({c}, seed, 0.5f, 2)), b.Const("t" + std::to_string(seed), Random({c}, seed + 1)),
                                       b.Const("m" + std::to_string(seed), Random({c}, seed + 2)), b.Const("v" + std::to_string(seed), Random({c}, seed + 3, 0.1f, 2))});
  };
  int a = conv(x, 8, 16, 30), one = conv(a, 16, 1, 32), c = conv(a, 16, 8, 34);
  int dense = conv(batch_norm(b.Op("Concat", {a, one, c}, {{"axis", int64_t{1}}}), 25, 40), 25, 8, 44);  // paired
  int with_input = batch_norm(b.Op("Concat", {dense, x}, {{"axis", int64_t{1}}}), 16, 50);          // x is channels-first
  int shared = b.Op("Concat", {with_input, a}, {{"axis", int64_t{1}}});                               // also a graph output
  Graph g = b.Done(batch_norm(shared, 32, 60));
  g.outputs.push_back(shared);
  ExpectReadsInPlaceKeepTheBits(g, x, Random({1, 8, 7, 7}, 70), &Session::concats_read_in_place, 1);
}

// GoogLeNet's and SqueezeNet's blocks end in a channel Concat that a MaxPool reads: unobserved, the pool reads the
// pieces where they lie, by rows (3x3 stride 2, windows overlapping down the map), by rows with NaNs in a piece
// (their bands done tap by tap) and tap by tap (2x2 stride 2), with pieces of 40, 1 and 8 channels (whole and
// partial lane blocks). The results are the bits of the ops run one by one and of an observed run.
TEST(ChannelsLast, MaxPoolsOfConcatPiecesGiveTheBitsOfThePoolOfTheConcat) {
  Builder b;
  const int x = b.In("x", {1, 8, 9, 9});
  auto conv = [&](int in, int64_t c_in, int64_t c_out, unsigned seed) {
    return b.Op("Conv", {in, b.Const("w" + std::to_string(seed), Random({c_out, c_in, 1, 1}, seed)), b.Const("b" + std::to_string(seed), Random({c_out}, seed + 1))});
  };
  auto block = [&](unsigned seed, const char* one_channel_op) {
    return b.Op("Concat", {conv(x, 8, 40, seed), b.Op(one_channel_op, {conv(x, 8, 1, seed + 2)}), conv(x, 8, 8, seed + 4)}, {{"axis", int64_t{1}}});
  };
  auto max_pool = [&](int in, int64_t k, int64_t stride) {
    return b.Op("MaxPool", {in}, {{"kernel_shape", std::vector<int64_t>{k, k}}, {"strides", std::vector<int64_t>{stride, stride}}});
  };
  const int by_rows = max_pool(block(80, "Relu"), 3, 2), with_nan = max_pool(block(85, "Sqrt"), 3, 2), by_taps = max_pool(block(90, "Sqrt"), 2, 2);
  Graph g = b.Done(by_rows);
  g.outputs.push_back(with_nan);
  g.outputs.push_back(by_taps);
  const Tensor in = Random({1, 8, 9, 9}, 72, -1, 1);  // Sqrt of a negative sum: NaNs in its one-channel pieces
  const std::vector<Tensor> vals = ExpectReadsInPlaceKeepTheBits(g, x, in, &Session::concats_read_in_place, 3);
  int nans = 0;
  for (int o : g.outputs)
    for (float v : vals[o].span<float>()) nans += std::isnan(v);
  EXPECT_GT(nans, 0) << "the NaN case must be exercised";
}

// A transformer's q, k and v: Slices of the in-projection's columns, each split into heads by a (Confusion)Transpose.
// Unobserved, the Slice is not copied out and its reader copies from the Slice's source (Session::PlanStridedViews).
// The results are the bits of the ops run one by one and of an observed run; a Slice with a second reader and one
// that is a view already (rows) keep their copy or view, and a selection that cannot be reshaped without a copy
// (columns of rows merged into one dim) is copied once more by its reader.
TEST(ChannelsLast, SlicesReadInPlaceGiveTheBitsOfTheCopies) {
  Builder b;
  const int x = b.In("x", {6, 1, 48});
  const int qkv = b.Op("Relu", {x});  // a task's result, as an in-projection's is
  auto slice = [&](int in, int64_t start, int64_t end, int64_t axis) {
    return b.Op("Slice", {in, b.Const("s" + std::to_string(start) + "_" + std::to_string(axis), I64({start})), b.Const("e" + std::to_string(end) + "_" + std::to_string(axis), I64({end})),
                          b.Const("a" + std::to_string(axis), I64({axis}))});
  };
  auto heads = [&](int in, std::vector<int64_t> perm, int64_t transpose_first = 0, std::vector<int64_t> shape = {6, 4, 4}) {
    return b.Op("ConfusionTranspose", {in}, {{"perm", perm}, {"shape", shape}, {"transpose_first", transpose_first}});
  };
  const int q = heads(slice(qkv, 0, 16, 2), {1, 0, 2});
  const int k = heads(slice(qkv, 16, 32, 2), {1, 2, 0});
  const int v = b.Op("Transpose", {slice(qkv, 32, 48, 2)}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  const int first = heads(slice(qkv, 8, 24, 2), {2, 0, 1}, 1, {16, 6});       // transposed, then reshaped
  const int merged = heads(slice(qkv, 4, 20, 2), {0}, 0, {96});               // rows of columns as one dim
  const int shared = slice(qkv, 24, 40, 2);                                   // also a graph output
  const int shared_heads = heads(shared, {1, 0, 2});
  const int rows = b.Op("Transpose", {slice(qkv, 1, 4, 0)}, {{"perm", std::vector<int64_t>{1, 0, 2}}});  // a view
  const int of_input = heads(slice(x, 0, 16, 2), {1, 0, 2});                  // never a task's result
  Graph g = b.Done(q);
  for (int o : {k, v, first, merged, shared, shared_heads, rows, of_input}) g.outputs.push_back(o);
  // q, k, v, first, merged and of_input are read in place
  ExpectReadsInPlaceKeepTheBits(g, x, Random({6, 1, 48}, 71, -1, 1), &Session::views_read_in_place, 6);
}

// Unobserved, a task gets the last reference to each intermediate that nothing after it reads, and a kernel may write
// its result over it (ResultOver): here the Add over y, the Div, the Softmax and a SiLU pair over their inputs, but not
// over a value read again later (y, by the Add after the Sigmoid), one that is also a graph output (s, which the
// LayerNorm reads) or the caller's input. The outputs are the bits of the ops run one by one and of an observed run,
// and the caller's input keeps its values.
TEST(ChannelsLast, ResultsOverLastReadIntermediatesKeepEveryOtherValue) {
  Builder b;
  const int x = b.In("x", {4, 197});
  const int y = b.Op("Relu", {x});  // not over x: the caller holds it
  const int s = b.Op("Add", {y, b.Op("Sigmoid", {y})});  // the Sigmoid not over y, read again; the Add over y
  const int scaled = b.Op("Div", {b.Op("LayerNormalization", {s}, {{"axis", int64_t{-1}}}), b.Const("c", F32({}, {8.0f}))});
  const int p = b.Op("Softmax", {scaled}, {{"axis", int64_t{-1}}});
  Graph g = b.Done(b.Op("Mul", {p, b.Op("Sigmoid", {p})}));  // a SiLU pair (SigmoidTimesInput), over p
  g.outputs.push_back(s);  // also read by the LayerNorm: not over s
  const Tensor in = Random({4, 197}, 95, -4, 4), kept = in.Clone();
  ExpectReadsInPlaceKeepTheBits(g, x, in, &Session::results_over_inputs, 4);  // the Add, the Div, the Softmax, the pair
  ExpectSameBits(in, kept);
}

// A squeeze-excitation block and a residual sum on conv results, which the runtime holds channels-last: the scale
// (the map times a per-channel vector, either operand order) and the sum go over the map they read last through
// BinaryKernel's (N, H, W, C) views. A map read again later and a map that is a graph output keep their values.
TEST(ChannelsLast, ScalesAndSumsOfChannelsLastMapsGoOverTheMapTheyReadLast) {
  Builder b;
  const int x = b.In("x", {1, 8, 9, 9});
  auto conv = [&](int in, int64_t c_in, int64_t c_out, unsigned seed) {
    return b.Op("Conv", {in, b.Const("w" + std::to_string(seed), Random({c_out, c_in, 1, 1}, seed)), b.Const("b" + std::to_string(seed), Random({c_out}, seed + 1))});
  };
  const int y = conv(x, 8, 24, 100);
  const int gate = b.Op("Sigmoid", {b.Op("GlobalAveragePool", {y})});  // (1, 24, 1, 1): the Sigmoid over the pool's result
  const int scaled = b.Op("Mul", {y, gate});                            // over y
  const int again = b.Op("Mul", {gate, conv(scaled, 24, 24, 102)});     // over the conv's result (the second operand)
  const int kept = conv(x, 8, 24, 104);                                 // a graph output too
  const int sum = b.Op("Add", {again, kept});                           // over `again`
  Graph g = b.Done(b.Op("Add", {sum, scaled}));                         // over `sum`; `scaled` was read again
  g.outputs.push_back(kept);
  ExpectReadsInPlaceKeepTheBits(g, x, Random({1, 8, 9, 9}, 106), &Session::results_over_inputs, 5);
}

// The graph with every computed value fp16: run unobserved, `expected` tasks run in the task before them
// (activations_in_producers), none with an observer attached, and the two runs give the same fp16 bits; on the
// reference path and on an Inf/NaN SoC.
void ExpectHalfRunsInProducersKeepTheBits(Graph g, int x, const Tensor& in, int expected) {
  for (Value& v : g.values)
    if (!v.constant && v.dtype == DType::kF32 && &v != &g.values[x]) v.dtype = DType::kF16;
  for (const char* soc : {"", "Ascend910B1"}) {
    SCOPED_TRACE(*soc ? soc : "reference path");
    auto session = Session::FromGraph(g);
    ASSERT_TRUE(session.ok());
    if (*soc) session.value().SetSoc(std::shared_ptr<const SocSpec>(FindSoc(soc), [](const SocSpec*) {}));
    std::vector<Tensor> unobserved, observed;
    ASSERT_TRUE(session.value().Run({in}, unobserved).ok());
    EXPECT_EQ(session.value().activations_in_producers(), expected);
    TaskObserver watcher;
    session.value().AddObserver(&watcher);
    ASSERT_TRUE(session.value().Run({in}, observed).ok());
    EXPECT_EQ(session.value().activations_in_producers(), 0);
    ASSERT_EQ(unobserved.size(), 1u);
    ASSERT_EQ(observed.size(), 1u);
    EXPECT_EQ(unobserved[0].dtype(), DType::kF16);
    ExpectSameBits(unobserved[0], observed[0]);
  }
}

// CANN runs a depthwise conv's HardSwish or ReLU6 as a task of its own (passes/fusion.cc); on the host, unobserved,
// an activation task whose input is the task before it's only result runs in that task's finish
// (PlanActivationsInProducers): a HardSwish after a depthwise conv (oneDNN's kernel), a Clip with constant bounds
// (opset 13) after a 1x1 conv, and a LeakyRelu after a 3x3 conv (npukit's Winograd kernel on AVX2 hosts). The
// results are the bits of the ops run one by one and of an observed run, in fp32 and with 16-bit results (each
// rounded after the conv and again after the activation), on the reference path and on an Inf/NaN SoC.
TEST(ChannelsLast, ActivationsRunInTheTaskBeforeThemGiveTheirBits) {
  Builder b;
  const int x = b.In("x", {1, 16, 14, 14});
  const AttrMap pad1 = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  AttrMap depthwise = pad1;
  depthwise["group"] = int64_t{16};
  const int dw = b.Op("Conv", {x, b.Const("dw", Random({16, 1, 3, 3}, 80)), b.Const("db", Random({16}, 81))}, depthwise);
  const int pw = b.Op("Conv", {b.Op("HardSwish", {dw}), b.Const("pw", Random({32, 16, 1, 1}, 82))});
  const int r6 = b.Op("Clip", {pw, b.Const("lo", F32({}, {0.0f})), b.Const("hi", F32({}, {6.0f}))});
  const int c3 = b.Op("Conv", {r6, b.Const("w3", Random({32, 32, 3, 3}, 83)), b.Const("b3", Random({32}, 84))}, pad1);
  Graph g = b.Done(b.Op("LeakyRelu", {c3}, {{"alpha", 0.1f}}));
  const Tensor in = Random({1, 16, 14, 14}, 85, -8, 8);
  ExpectReadsInPlaceKeepTheBits(g, x, in, &Session::activations_in_producers, 3);

  ExpectHalfRunsInProducersKeepTheBits(g, x, in, 3);
}

// EfficientNet's SiLU pairs (Sigmoid -> Mul(x, Sigmoid(x)), which the runtime already runs as one task) run in the
// finish of the conv before them where the conv's result is read by the pair alone (PlanSiluPairsInProducers): after
// a depthwise conv (oneDNN's kernel), a 1x1 conv and a 3x3 conv (npukit's Winograd kernel on AVX2 hosts). A conv
// whose result another op reads too keeps its pair a task of its own. The results are the bits of the ops run one by
// one and of an observed run, in fp32 and with 16-bit results (the conv's result rounded, the Sigmoid's, then the
// product), on the reference path and on an Inf/NaN SoC; none where the logistic values depend on their chunk.
TEST(ChannelsLast, SiluPairsRunInTheTaskBeforeThemGiveTheirBits) {
  Builder b;
  const int x = b.In("x", {1, 16, 14, 14});
  const AttrMap pad1 = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  AttrMap depthwise = pad1;
  depthwise["group"] = int64_t{16};
  auto silu = [&](int v) { return b.Op("Mul", {v, b.Op("Sigmoid", {v})}); };
  const int dw = silu(b.Op("Conv", {x, b.Const("dw", Random({16, 1, 3, 3}, 90)), b.Const("db", Random({16}, 91))}, depthwise));
  const int pw = silu(b.Op("Conv", {dw, b.Const("pw", Random({32, 16, 1, 1}, 92))}));
  const int c3 = b.Op("Conv", {pw, b.Const("w3", Random({32, 32, 3, 3}, 93)), b.Const("b3", Random({32}, 94))}, pad1);
  const int shared = b.Op("Conv", {silu(c3), b.Const("w4", Random({32, 32, 1, 1}, 95))});
  Graph g = b.Done(b.Op("Add", {silu(shared), shared}));  // `shared` is read by its pair and the Add
  const Tensor in = Random({1, 16, 14, 14}, 96, -8, 8);
  const int taken = LogisticSameInAnyChunk() ? 3 : 0;
  ExpectReadsInPlaceKeepTheBits(g, x, in, &Session::activations_in_producers, taken);

  ExpectHalfRunsInProducersKeepTheBits(g, x, in, taken);
}

// The strides that walk a strided view as another shape without a copy, as numpy reshapes one.
TEST(ChannelsLast, ReshapedStridesSplitAndMergeOnlyEvenlyStridedDims) {
  using V = std::vector<int64_t>;
  EXPECT_EQ(ReshapedStrides({6, 1, 16}, {48, 48, 1}, {6, 4, 4}), V({48, 4, 1}));  // a head split of columns
  EXPECT_EQ(ReshapedStrides({6, 16}, {48, 1}, {6, 2, 8}), V({48, 8, 1}));
  EXPECT_EQ(ReshapedStrides({4, 6}, {6, 1}, {24}), V({1}));                       // contiguous dims merge
  EXPECT_EQ(ReshapedStrides({4, 6}, {12, 2}, {2, 12}), V({24, 2}));               // evenly strided ones too
  EXPECT_EQ(ReshapedStrides({6, 16}, {48, 1}, {96}), std::nullopt);               // rows of a slice do not
  EXPECT_EQ(ReshapedStrides({6, 16}, {48, 1}, {3, 32}), std::nullopt);
  EXPECT_EQ(ReshapedStrides({2, 3}, {3, 1}, {7}), std::nullopt);                  // another element count
  const auto unit = ReshapedStrides({1, 5, 1}, {99, 2, 7}, {5, 1});
  ASSERT_TRUE(unit.has_value());
  EXPECT_EQ((*unit)[0], 2);
}

// Weights that are a graph input (or computed) change between runs, possibly at a freed buffer's address: the
// conv must not reuse the weights it reordered for the previous run.
TEST(ChannelsLast, WeightsGivenPerRunAreReorderedEveryRun) {
  Builder b;
  int x = b.In("x", {1, 8, 6, 6}), w = b.In("w", {8, 8, 3, 3});
  Graph g = b.Done(b.Op("Conv", {x, w}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}}));
  auto session = Session::FromGraph(g);
  ASSERT_TRUE(session.ok());
  Tensor in = Random({1, 8, 6, 6}, 20);
  for (unsigned seed : {21u, 22u, 23u}) {
    std::vector<Tensor> outs;
    Tensor weights = Random({8, 8, 3, 3}, seed);
    ASSERT_TRUE(session.value().Run({in, weights}, outs).ok());
    ExpectSameBits(outs[0], RunNode(g.nodes[0], {in, weights}));
  }
}

}  // namespace
}  // namespace npu
