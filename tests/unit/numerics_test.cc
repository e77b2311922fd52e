// The NPU numerics and the graph passes that decide them: narrowing and saturation, the overflow predicate,
// fusion passes (each checked against the unfused graph's result), the switch file, precision assignment.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>

#include "base/half.h"
#include "ir/ascend_types.h"
#include "ir/graph_edit.h"
#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "kernels/numerics.h"
#include "kernels/registry.h"
#include "test_util.h"
#include "passes/fusion.h"
#include "passes/precision.h"
#include "runtime/runtime.h"

namespace npu {
namespace {


TEST(Numerics, NarrowingSaturatesOrOverflowsAsTheSocDoes) {
  Tensor x = F32({4}, {1.0f, 90000.0f, -1e30f, NAN});
  for (const char* soc : {"Ascend910A", "Ascend910B1"}) {
    ExecContext ctx = ExecContext::ForSoc(FindSoc(soc), false);
    FloatStatus st;
    Tensor h = NarrowFloat(x, DType::kF16, ctx, &st);
    float v[4];
    for (int i = 0; i < 4; ++i) v[i] = HalfToFloat(h.data<uint16_t>()[i]);
    EXPECT_EQ(v[0], 1.0f);
    EXPECT_EQ(st.out_of_range, 2u);
    EXPECT_EQ(st.non_finite, 1u);
    EXPECT_EQ(st.first_index, 1);
    EXPECT_EQ(st.first_value, 90000.0f);
    if (ctx.saturate()) {
      EXPECT_EQ(v[1], 65504.0f);
      EXPECT_EQ(v[2], -65504.0f);
      EXPECT_EQ(v[3], 0.0f) << "NaN saturates to 0";
    } else {
      EXPECT_TRUE(std::isinf(v[1]) && v[1] > 0);
      EXPECT_TRUE(std::isinf(v[2]) && v[2] < 0);
      EXPECT_TRUE(std::isnan(v[3]));
    }
  }
}

// The runtime holds 16-bit results in fp32 (RoundToDTypeValues): the same values, status and saturation as
// narrowing then widening, over several parallel chunks with exceptions in some, in place or not.
TEST(Numerics, RoundingInFp32GivesTheNarrowedValues) {
  const size_t n = 3 * kConvertGrain + 123;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-70000.0f, 70000.0f);
  Tensor x = Tensor::Empty(DType::kF32, {static_cast<int64_t>(n)});
  float* p = x.mutable_data<float>();
  for (size_t i = 0; i < n; ++i) p[i] = u(rng) / (i % 3 == 0 ? 1 : 1e4f);  // some past fp16's range, most within
  for (size_t i = 0; i < kConvertGrain; ++i) p[i] = std::clamp(p[i], -65519.0f, 65519.0f);  // a chunk without exceptions
  const float specials[] = {65504.0f, 65519.99f, 65520.0f, -65520.0f, 3.4e38f, -3.39e38f, INFINITY, -INFINITY, NAN, 1e-8f, -0.0f, 6e-5f};
  for (size_t k = 0; k < std::size(specials); ++k) p[2 * kConvertGrain + 5 + k] = specials[k];
  for (DType to : {DType::kF16, DType::kBF16})
    for (const char* soc : {"Ascend910A", "Ascend910B1"}) {
      ExecContext ctx = ExecContext::ForSoc(FindSoc(soc), true);
      FloatStatus want_st, got_st, in_place_st;
      Tensor want = ToF32(NarrowFloat(x, to, ctx, &want_st));
      Tensor got = RoundToDTypeValues(x, to, ctx, &got_st);  // x keeps a reference: rounds into a new tensor
      Tensor in_place = RoundToDTypeValues(x.Clone(), to, ctx, &in_place_st);
      EXPECT_NE(got.data<float>(), x.data<float>());
      for (const Tensor* t : {&got, &in_place})
        ASSERT_EQ(std::memcmp(t->data<float>(), want.data<float>(), n * sizeof(float)), 0) << DTypeName(to) << " " << soc;
      for (const FloatStatus* st : {&got_st, &in_place_st}) {
        EXPECT_EQ(st->out_of_range, want_st.out_of_range);
        EXPECT_EQ(st->non_finite, want_st.non_finite);
        EXPECT_EQ(st->first_index, want_st.first_index);
        EXPECT_EQ(st->first_value, want_st.first_value);
      }
      EXPECT_GT(want_st.out_of_range, 0u);
    }
}

// A fused 16-bit residual: the conv's fp32 result reaches the vector unit rounded to fp16, and the sum is one
// fp32 add per element (the runtime rounds it once more). Summed into the result in place, or by the Add
// kernel when the result is shared, the same bits.
TEST(Numerics, FusedHalfResidualAddsToTheRoundedResult) {
  RegisterBuiltinOps();
  ExecContext ctx = ExecContext::ForSoc(FindSoc("Ascend910B1"), true);
  Tensor x = Random({1, 8, 6, 6}, 1, -40, 40), w = Random({8, 8, 3, 3}, 2);
  Tensor r = RoundToDTypeValues(Random({1, 8, 6, 6}, 3, -4, 4), DType::kF16, ctx, nullptr);  // fp16 values held in fp32
  const AttrMap pads = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.opset = 13;
  conv.attrs = pads;
  conv.inputs = {0, 1};
  conv.outputs = {2};
  std::vector<Tensor> plain;
  ASSERT_TRUE(RunKernel(conv, {x, w}, plain, ThreadPool::Global()).ok());
  Tensor rounded = RoundToDTypeValues(plain[0], DType::kF16, ctx, nullptr);
  Node fused = conv;
  fused.attrs[kEpilogueResidualInput] = int64_t{3};
  fused.inputs = {0, 1, -1, 3};
  KernelRunOptions options;
  options.residual_dtype = DType::kF16;
  std::vector<Tensor> got;
  FloatStatus st;
  ASSERT_TRUE(RunKernel(fused, {x, w, Tensor(), r}, got, ThreadPool::Global(), ctx, &st, options).ok());
  ASSERT_EQ(got[0].shape(), plain[0].shape());
  Tensor sum = got[0].channels_last ? ToChannelsFirst(got[0], ThreadPool::Global()) : got[0];
  int64_t changed_by_rounding = 0;
  for (int64_t i = 0; i < sum.numel(); ++i) {
    ASSERT_EQ(sum.data<float>()[i], rounded.data<float>()[i] + r.data<float>()[i]) << "element " << i;
    changed_by_rounding += rounded.data<float>()[i] != plain[0].data<float>()[i];
  }
  EXPECT_GT(changed_by_rounding, sum.numel() / 2);  // the rounding is there to see
}

// The same with the residual in the conv's channels-last order and a fused Relu, over several rounding chunks:
// the rounding, the sum and the activation go in one pass per chunk and give the bits of the three in a row.
TEST(Numerics, FusedHalfResidualAndReluInOnePassGiveTheStepwiseBits) {
  RegisterBuiltinOps();
  ExecContext ctx = ExecContext::ForSoc(FindSoc("Ascend910B1"), true);
  Tensor x = Random({1, 8, 48, 48}, 11, -40, 40), w = Random({8, 8, 3, 3}, 12);
  Tensor r = RoundToDTypeValues(Random({1, 8, 48, 48}, 13, -4, 4), DType::kF16, ctx, nullptr);
  ASSERT_GT(r.numel(), static_cast<int64_t>(kRoundGrain));
  Node conv;
  conv.name = "conv";
  conv.op_type = "Conv";
  conv.opset = 13;
  conv.attrs = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  conv.inputs = {0, 1};
  conv.outputs = {2};
  std::vector<Tensor> plain;
  ASSERT_TRUE(RunKernel(conv, {x, w}, plain, ThreadPool::Global()).ok());
  const Tensor rounded = ToChannelsFirst(RoundToDTypeValues(plain[0], DType::kF16, ctx, nullptr), ThreadPool::Global());
  Node fused = conv;
  fused.attrs[kEpilogueResidualInput] = int64_t{3};
  fused.attrs[kEpilogueOp] = std::string("Relu");
  fused.inputs = {0, 1, -1, 3};
  KernelRunOptions options;
  options.residual_dtype = DType::kF16;
  options.channels_last_out = true;
  std::vector<Tensor> got;
  FloatStatus st;
  ASSERT_TRUE(RunKernel(fused, {x, w, Tensor(), ToChannelsLast(r, ThreadPool::Global())}, got, ThreadPool::Global(), ctx, &st, options).ok());
  const Tensor out = ToChannelsFirst(got[0], ThreadPool::Global());
  for (int64_t i = 0; i < out.numel(); ++i)
    ASSERT_EQ(out.data<float>()[i], std::max(rounded.data<float>()[i] + r.data<float>()[i], 0.0f)) << "element " << i;
}

// A conv with a fused 16-bit residual, offered the runtime's rounding of its result: the residual's pass rounds the sum
// as well (with and without a fused Relu), and the values and the exception record are those of the runtime's own
// pass after it; with an activation that has no in-place form left to run after the sum, the rounding is declined.
// Values past fp16's range, an infinity and a NaN among the inputs, over several rounding chunks, on the reference
// path, an Inf/NaN SoC and a saturating one.
TEST(Numerics, FusedHalfResidualRoundsTheSumAsTheRuntimeWould) {
  RegisterBuiltinOps();
  ThreadPool& pool = ThreadPool::Global();
  Tensor x = Random({1, 8, 48, 48}, 51, -40, 40);
  x.mutable_data<float>()[100] = 3e5f;  // sums past 65504 near it
  x.mutable_data<float>()[5000] = NAN;
  x.mutable_data<float>()[9000] = INFINITY;
  const Tensor w = Random({8, 8, 3, 3}, 52);
  for (const char* soc : {"", "Ascend910B1", "Ascend910A"}) {
    const ExecContext ctx = *soc ? ExecContext::ForSoc(FindSoc(soc), false) : ExecContext{};
    const Tensor r = ToChannelsLast(RoundToDTypeValues(Random({1, 8, 48, 48}, 53, -4, 4), DType::kF16, ctx, nullptr), pool);
    for (const char* act : {"", "Relu"}) {
      Node fused = MakeNode("Conv", 4, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueResidualInput, int64_t{3}}});
      if (*act) fused.attrs[kEpilogueOp] = std::string(act);
      KernelRunOptions plain;
      plain.residual_dtype = DType::kF16;
      plain.channels_last_out = true;
      std::vector<Tensor> want, got;
      FloatStatus want_status, got_status;
      ASSERT_TRUE(RunKernel(fused, {x, w, Tensor(), r}, want, pool, ctx, &want_status, plain).ok());
      want[0] = RoundToDTypeValues(want[0], DType::kF16, ctx, &want_status);
      bool rounded = false;
      KernelRunOptions offered = plain;
      offered.round_output_to = DType::kF16;
      offered.output_rounded = &rounded;
      ASSERT_TRUE(RunKernel(fused, {x, w, Tensor(), r}, got, pool, ctx, &got_status, offered).ok());
      const std::string what = std::string(*soc ? soc : "reference path") + (*act ? " +Relu" : "");
      EXPECT_TRUE(rounded) << what;
      ASSERT_EQ(got[0].shape(), want[0].shape()) << what;
      EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), want[0].nbytes()), 0) << what;
      EXPECT_EQ(got_status.out_of_range, want_status.out_of_range) << what;
      EXPECT_EQ(got_status.non_finite, want_status.non_finite) << what;
      EXPECT_EQ(got_status.first_index, want_status.first_index) << what;
      EXPECT_EQ(got_status.first_output, want_status.first_output) << what;
      if (*soc && !ctx.saturate()) {
        EXPECT_GT(want_status.out_of_range, 0u) << what << ": the values must exercise the record";
      }
    }
  }
}

// A Cast of fp32 values to fp16 offered the runtime's rounding (a net's input with force_fp16): the narrowed values
// held in fp32, with the bits of the 16-bit result the Cast gives unoffered and the same exception record. Values
// past fp16's range, infinities, a NaN, -0 and fp16 subnormals over several chunks, on the reference path, an
// Inf/NaN SoC and a saturating one.
TEST(Numerics, ACastToHalfOfferedTheRoundingHoldsTheNarrowedValuesInFp32) {
  RegisterBuiltinOps();
  ThreadPool& pool = ThreadPool::Global();
  Tensor x = Random({1, 3, 97, 131}, 61, -8, 8);  // 38,121 elements: three chunks
  ASSERT_GT(x.numel(), 2 * static_cast<int64_t>(kElementwiseGrain));
  float* p = x.mutable_data<float>();
  p[7] = 1e5f;
  p[20000] = -70000.0f;
  p[20001] = 65519.0f;  // rounds to 65504
  p[30000] = NAN;
  p[30001] = -INFINITY;
  p[30002] = -0.0f;
  p[30003] = 3e-6f;  // an fp16 subnormal
  Node cast = MakeNode("Cast", 1, {{"to", static_cast<int64_t>(DType::kF16)}});
  for (const char* soc : {"", "Ascend910B1", "Ascend910A"}) {
    const ExecContext ctx = *soc ? ExecContext::ForSoc(FindSoc(soc), false) : ExecContext{};
    const std::string what = *soc ? soc : "reference path";
    std::vector<Tensor> want, got;
    FloatStatus want_status, got_status;
    ASSERT_TRUE(RunKernel(cast, {x}, want, pool, ctx, &want_status).ok()) << what;
    ASSERT_EQ(want[0].dtype(), DType::kF16) << what;
    bool rounded = false;
    KernelRunOptions offered;
    offered.round_output_to = DType::kF16;
    offered.output_rounded = &rounded;
    ASSERT_TRUE(RunKernel(cast, {x}, got, pool, ctx, &got_status, offered).ok()) << what;
    EXPECT_TRUE(rounded) << what;
    ASSERT_EQ(got[0].dtype(), DType::kF32) << what;
    const Tensor stored = FromF32(got[0], DType::kF16);
    EXPECT_EQ(std::memcmp(stored.raw(), want[0].raw(), want[0].nbytes()), 0) << what;
    EXPECT_EQ(got_status.out_of_range, want_status.out_of_range) << what;
    EXPECT_EQ(got_status.non_finite, want_status.non_finite) << what;
    EXPECT_EQ(got_status.first_index, want_status.first_index) << what;
    if (*soc) {
      EXPECT_GT(want_status.out_of_range, 0u) << what << ": the values must exercise the record";
    }
    EXPECT_EQ(x.data<float>()[20001], 65519.0f) << what << ": the input is not written over";
  }
}

// A Clip picks its input or a bound, so on fp16 values between bounds that fp16 holds its results are fp16 values and
// the runtime does not round them again (SelectsHeldValues): the same bits as the Clip rounded, NaN, infinities and
// -0 included. Bounds fp16 does not hold (an opset-6 attribute of 0.1) or a bound left out (fp32's largest value
// clips +inf) leave the rounding in place. An op after the Clip reads its result (a net's output is stored as fp16
// whatever the runtime held): a Sub that tells 0.1 from its fp16 value, a Mul by 0 that tells fp32's largest value
// from +inf.
TEST(Numerics, AClipBetweenValuesOfItsDtypeIsNotRoundedAgain) {
  Tensor x32 = Random({1, 4, 9, 11}, 31, -9, 9);
  float* p = x32.mutable_data<float>();
  p[3] = NAN, p[4] = INFINITY, p[5] = -INFINITY, p[6] = -0.0f, p[7] = 6.0f, p[8] = 0.0999f;
  const Tensor x = CastTensor(x32, DType::kF16);
  const float tenth16 = HalfToFloat(FloatToHalf(0.1f));
  struct Then {
    const char* op;
    float operand;
  };
  auto run = [&](std::vector<std::optional<float>> bounds, int opset, Then then) {
    Builder b;
    const int in = b.In("x", {1, 4, 9, 11});
    std::vector<int> ins = {in};
    AttrMap attrs;
    for (size_t k = 0; k < bounds.size(); ++k) {
      if (opset < 11 && bounds[k]) attrs[k == 0 ? "min" : "max"] = *bounds[k];
      if (opset >= 11) ins.push_back(bounds[k] ? b.Const(k == 0 ? "lo" : "hi", CastTensor(F32({}, {*bounds[k]}), DType::kF16)) : -1);
    }
    const int clip = b.Op("Clip", ins, attrs);
    Graph g = b.Done(b.Op(then.op, {clip, b.Const("c", CastTensor(F32({}, {then.operand}), DType::kF16))}));
    g.nodes[0].opset = opset;
    for (Value& v : g.values) v.dtype = DType::kF16;
    auto session = Session::FromGraph(g);
    EXPECT_TRUE(session.ok());
    std::vector<Tensor> out;
    EXPECT_TRUE(session.value().Run({x}, out).ok());
    return out.empty() ? Tensor() : out[0];
  };
  // The Clip of the widened values rounded to fp16, then the op, rounded (the reference path: +-inf past the range).
  auto want = [&](float lo, float hi, Then then) {
    Tensor w = ToF32(x);
    for (float& v : std::span(w.mutable_data<float>(), static_cast<size_t>(w.numel()))) {
      v = HalfToFloat(FloatToHalf(v != v ? v : std::min(hi, std::max(lo, v))));
      v = std::string_view(then.op) == "Sub" ? v - then.operand : v * then.operand;
    }
    return CastTensor(w, DType::kF16);
  };
  const Then sub{"Sub", tenth16}, times0{"Mul", 0.0f};
  ExpectSameBits(run({0.0f, 6.0f}, 13, sub), want(0.0f, 6.0f, sub));
  ExpectSameBits(run({0.1f, 6.0f}, 6, sub), want(0.1f, 6.0f, sub));  // 0.1 - its fp16 value would be 2.4e-5
  ExpectSameBits(run({0.0f, std::nullopt}, 13, times0), want(0.0f, std::numeric_limits<float>::max(), times0));  // +inf: NaN, not 0
}

// force_fp16's SiLU pair after a conv in one pass (HalfSiluWhileFinite): the bits of the three passes it stands for
// (the conv result's rounding, the Sigmoid and its rounding, the product and its rounding) on every finite fp16 value
// and on fp32 values between them, ties included; it stops at the register holding a value the rounding would
// settle (65520 and past, NaN). In a chunk finish with such values the passes take the rest: the same bits and the
// same exception record as the passes alone, on an Inf/NaN and a saturating SoC.
TEST(Numerics, HalfSiluPassGivesTheBitsOfItsThreePasses) {
  const float limit = RoundsToInfinity(DType::kF16);
  std::vector<float> x;
  for (uint32_t h = 0; h < 0x7c00; ++h)  // the finite fp16 values of both signs, a tie above each, and a value past it
    for (float sign : {1.0f, -1.0f}) {
      const float v = HalfToFloat(static_cast<uint16_t>(h)) * sign;
      x.push_back(v);
      x.push_back(std::nextafter(v, 2 * v));
      x.push_back(v + (HalfToFloat(static_cast<uint16_t>(h + 1)) * sign - v) / 2);  // a tie: rounds to the even one
    }
  x.resize(x.size() - 5);  // a tail that fills no register
  std::vector<float> want(x.size()), sig(x.size()), got(x.size());
  want = x;
  RoundValuesInPlace(want, DType::kF16, ExecContext{});
  SigmoidValues(want, sig);
  RoundValuesInPlace(sig, DType::kF16, ExecContext{});
  for (size_t i = 0; i < x.size(); ++i) want[i] *= sig[i];
  RoundValuesInPlace(want, DType::kF16, ExecContext{});
  const size_t done = HalfSiluWhileFinite(x, got, limit);
  if (done == 0) GTEST_SKIP() << "the one-pass form is not built on this host (it needs AVX2, FMA and F16C)";
  ASSERT_EQ(done, x.size());
  EXPECT_EQ(std::memcmp(got.data(), want.data(), x.size() * sizeof(float)), 0);
  // Given fp16 values (a kernel rounded them), the same bits without rounding them again.
  std::vector<float> x16 = x, got16(x.size());
  RoundValuesInPlace(x16, DType::kF16, ExecContext{});
  ASSERT_EQ(HalfSiluWhileFinite(x16, got16, limit, /*x_is_half=*/true), x.size());
  EXPECT_EQ(std::memcmp(got16.data(), want.data(), x.size() * sizeof(float)), 0);

  // Values the rounding settles stop it at their register; nothing after that register is written.
  for (float stop : {limit, -1e5f, NAN, INFINITY}) {
    std::vector<float> y(1000, 7.0f), out(1000, -1.0f);
    y[613] = stop;
    const size_t n = HalfSiluWhileFinite(y, out, limit);
    EXPECT_LE(n, 613u) << stop;
    EXPECT_GT(n + 16, 613u) << stop;
    EXPECT_EQ(out[n], -1.0f) << stop;
  }

  // A chunk finish over a conv's result with such values: the one pass, then the passes from the stop.
  std::vector<float> y(5000);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>((i * 7919) % 4001) / 50.0f - 40.0f;
  y[1237] = 70000.0f;
  y[1300] = NAN;
  y[4000] = -INFINITY;
  for (const char* soc : {"Ascend910B1", "Ascend910A"}) {
    const ExecContext ctx = ExecContext::ForSoc(FindSoc(soc), false);
    const InPlaceFn silu = SigmoidTimesInputInPlace(DType::kF16, ctx);
    std::vector<float> results[2];
    FloatStatus statuses[2];
    for (bool one_pass : {false, true}) {
      ChunkRounding round(DType::kF16, ctx), then_round(DType::kF16, ctx);
      const ChunkFinish finish{.round = &round, .then_act = &silu, .then_round = &then_round, .then_half_silu = one_pass};
      std::vector<float>& r = results[one_pass];
      r = y;
      for (size_t at = 0; at < r.size(); at += kFinishChunk) finish(std::span(r).subspan(at, std::min(kFinishChunk, r.size() - at)), at);
      round.MergeInto(statuses[one_pass]);
      then_round.MergeInto(statuses[one_pass]);
    }
    EXPECT_EQ(std::memcmp(results[0].data(), results[1].data(), y.size() * sizeof(float)), 0) << soc;
    EXPECT_TRUE(statuses[0].any()) << soc << ": the values must exercise the record";
    EXPECT_EQ(statuses[1].out_of_range, statuses[0].out_of_range) << soc;
    EXPECT_EQ(statuses[1].non_finite, statuses[0].non_finite) << soc;
    EXPECT_EQ(statuses[1].first_index, statuses[0].first_index) << soc;
    EXPECT_EQ(std::memcmp(&statuses[1].first_value, &statuses[0].first_value, sizeof(float)), 0) << soc;
  }
}

// torch's SiLU as the runtime runs it unobserved: one pass giving the bits of the Sigmoid kernel, its rounding
// as its own task's result, the Mul kernel and the runtime's rounding of the Mul's result, with the same exception
// record. Over several chunks, a length that is no multiple of a vector, and values the rounding must settle (NaN,
// infinities), in fp32 and at fp16 without a SoC (the fp32 reference path running an fp16 model) and on an Inf/NaN
// and a saturating SoC.
TEST(Numerics, SigmoidTimesInputGivesTheBitsOfTheTwoKernels) {
  RegisterBuiltinOps();
  Tensor x = Random({1, 7, 61, 83}, 21, -12, 12);  // 35,441 elements: three chunks of the Sigmoid kernel
  float* p = x.mutable_data<float>();
  p[5] = NAN;
  p[30000] = INFINITY;
  p[30001] = -INFINITY;
  p[20001] = 1e5f;  // past fp16's range: infinity or 65504 once held in fp16
  Node sigmoid;
  sigmoid.name = "sigmoid";
  sigmoid.op_type = "Sigmoid";
  sigmoid.opset = 13;
  sigmoid.inputs = {0};
  sigmoid.outputs = {1};
  Node mul = sigmoid;
  mul.name = "mul";
  mul.op_type = "Mul";
  mul.inputs = {0, 1};
  mul.outputs = {2};
  for (const char* soc : {"", "Ascend910B1", "Ascend910A"}) {
    const ExecContext ctx = *soc ? ExecContext::ForSoc(FindSoc(soc), false) : ExecContext{};
    for (DType held : {DType::kF32, DType::kF16}) {
      const Tensor in = held == DType::kF16 ? RoundToDTypeValues(x, held, ctx, nullptr) : x;
      std::vector<Tensor> s, y;
      ASSERT_TRUE(RunKernel(sigmoid, {in}, s, ThreadPool::Global(), ctx, nullptr).ok());
      if (held == DType::kF16) s[0] = RoundToDTypeValues(s[0], held, ctx, nullptr);
      ASSERT_TRUE(RunKernel(mul, {in, s[0]}, y, ThreadPool::Global(), ctx, nullptr).ok());
      FloatStatus want_status, got_status;
      if (held == DType::kF16) y[0] = RoundToDTypeValues(y[0], held, ctx, &want_status);
      const Tensor got = SigmoidTimesInput(in, held, held, ctx, &got_status, ThreadPool::Global());
      ASSERT_EQ(got.shape(), y[0].shape());
      EXPECT_EQ(std::memcmp(got.data<float>(), y[0].data<float>(), static_cast<size_t>(got.numel()) * sizeof(float)), 0) << soc << " " << DTypeName(held);
      EXPECT_EQ(got_status.out_of_range, want_status.out_of_range) << soc << " " << DTypeName(held);
      EXPECT_EQ(got_status.non_finite, want_status.non_finite);
      EXPECT_EQ(got_status.first_index, want_status.first_index);
      EXPECT_EQ(got_status.first_output, want_status.first_output);
      EXPECT_EQ(std::memcmp(&got_status.first_value, &want_status.first_value, sizeof(float)), 0);
      // Given the only reference to x (moved in, as the runtime hands over its last read), the product is written over
      // x, with the same bits; `in`, passed as a copy, kept its values for the runs above.
      Tensor sole = in.Clone();
      const std::byte* storage = sole.raw();
      const Tensor over = SigmoidTimesInput(std::move(sole), held, held, ctx, nullptr, ThreadPool::Global());
      EXPECT_EQ(over.raw(), storage);
      EXPECT_EQ(std::memcmp(over.data<float>(), y[0].data<float>(), static_cast<size_t>(over.numel()) * sizeof(float)), 0) << soc << " " << DTypeName(held);
      // On the Inf/NaN SoC the held input keeps NaN and the infinities, whose products the record must hold (a
      // saturating SoC held them as finite values, and a product of fp16 values cannot pass 65504).
      if (held == DType::kF16 && *soc && !ctx.saturate()) {
        EXPECT_TRUE(want_status.any()) << "the values must exercise the record";
      }
    }
  }
}

// A kernel offered the runtime's 16-bit rounding of its output (KernelRunOptions::round_output_to) rounds each chunk
// as it writes it: the values and the exception record must be those of the runtime's own pass after the kernel,
// for BatchNormalization (with and without its fused Relu), the unary and the broadcasting binary kernels, an image
// Resize, 1-D convs (tiled products), on (N, C, H, W) and channels-last maps, and 2-D convs into channels-last maps
// (whichever kernel this host gives them), with NaN, infinities and values past fp16's range among the inputs.
TEST(Numerics, KernelsRoundTheirOutputAsTheRuntimeWould) {
  RegisterBuiltinOps();
  ThreadPool& pool = ThreadPool::Global();
  Tensor x = Random({1, 7, 61, 83}, 31, -12, 12);  // 35,441 elements: several chunks of every kernel here
  float* p = x.mutable_data<float>();
  p[5] = NAN;
  p[30000] = INFINITY;
  p[20001] = 1e5f;
  p[20002] = -7e4f;
  const Tensor per_channel = Random({1, 7, 1, 1}, 32, -3, 3);
  std::vector<Tensor> bn_params;
  for (unsigned k = 0; k < 4; ++k) bn_params.push_back(Random({7}, 33 + k, k == 3 ? 0.5f : -2.0f, 2.0f));
  // A conv that runs as Winograd bands (conv_winograd.h), whose bands round their rows when its result stays
  // channels-last: 32 channels (the fewest that take bands), the same special values.
  Tensor x32 = Random({1, 32, 61, 83}, 37, -12, 12);
  for (int64_t i : {5, 30000, 60001}) x32.mutable_data<float>()[i] = x.data<float>()[i % x.numel()];
  x32.mutable_data<float>()[70000] = 1e5f;
  const Tensor w32 = Random({32, 32, 3, 3}, 38), b32 = Random({32}, 39);
  const AttrMap pads = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  AttrMap pads_relu = pads;
  pads_relu.emplace(kEpilogueOp, std::string("Relu"));
  // And one over the whole map on oneDNN's threads (256 channels on 14x14), with values past 65504 but all finite,
  // so that it keeps the Winograd result.
  Tensor x256 = Random({1, 256, 14, 14}, 40, -12, 12);
  x256.mutable_data<float>()[1000] = 1e5f;
  const Tensor w256 = Random({256, 256, 3, 3}, 41), b256 = Random({256}, 42);
  // Depthwise convs (npukit's own kernel on AVX-512 hosts, which rounds in its registers and leaves values past
  // fp16's range and NaN to the runtime's rounding of their rows): on x, and on a 7x7 map of 40 channels, whose rows'
  // channels are split between tasks.
  const Tensor w7 = Random({7, 1, 3, 3}, 44), b7 = Random({7}, 45);
  Tensor x40 = Random({1, 40, 7, 7}, 46, -12, 12);
  x40.mutable_data<float>()[100] = NAN;
  x40.mutable_data<float>()[1000] = INFINITY;
  x40.mutable_data<float>()[1500] = 1e5f;
  const Tensor w40 = Random({40, 1, 3, 3}, 47), b40 = Random({40}, 48);
  AttrMap depthwise7 = pads, depthwise40 = pads;
  depthwise7.emplace("group", int64_t{7});
  depthwise40.emplace("group", int64_t{40});
  AttrMap depthwise7_relu = depthwise7, depthwise40_relu = depthwise40;
  depthwise7_relu.emplace(kEpilogueOp, std::string("Relu"));
  depthwise40_relu.emplace(kEpilogueOp, std::string("Relu"));
  // 1-D convs (im2col and pointwise), tiled products that round their tiles: 300 x 260 results per image, more
  // than a tile each way, over 120 channels, with the same special values.
  Tensor x1d = Random({2, 120, 260}, 49, -2, 2);
  for (int64_t i : {5, 30000, 60001}) x1d.mutable_data<float>()[i] = x.data<float>()[i % x.numel()];
  x1d.mutable_data<float>()[100] = 1e5f;
  const Tensor w1d = Random({300, 120, 3}, 50, -1, 1), w1x1 = Random({300, 120, 1}, 51, -1, 1), b1d = Random({300}, 52);
  AttrMap pads1d = {{"pads", std::vector<int64_t>{1, 1}}}, relu = {{kEpilogueOp, std::string("Relu")}};
  struct Case {
    Node op;
    std::vector<Tensor> extra;  // the inputs after x
    Tensor x_instead = {};      // the input in place of x
  };
  const std::vector<Case> cases = {
      {MakeNode("Conv", 3, pads), {w32, b32}, x32},
      {MakeNode("Conv", 3, pads_relu), {w32, b32}, x32},
      {MakeNode("Conv", 3, pads_relu), {w256, b256}, x256},
      {MakeNode("Conv", 3, depthwise7), {w7, b7}},
      {MakeNode("Conv", 3, depthwise7_relu), {w7, b7}},
      {MakeNode("Conv", 3, depthwise40), {w40, b40}, x40},
      {MakeNode("Conv", 3, depthwise40_relu), {w40, b40}, x40},
      {MakeNode("Conv", 3, pads1d), {w1d, b1d}, x1d},
      {MakeNode("Conv", 3, relu), {w1x1, b1d}, x1d},
      {MakeNode("BatchNormalization", 5), bn_params},
      {MakeNode("BatchNormalization", 5, {{kEpilogueOp, std::string("Relu")}}), bn_params},
      {MakeNode("Exp", 1), {}},
      {MakeNode("Sigmoid", 1), {}},
      {MakeNode("Add", 2), {per_channel}},
      {MakeNode("Mul", 2), {x}},
      {MakeNode("Div", 2), {Random({}, 43, 0.01f, 0.02f)}},  // one row of several pieces (MapBinary)
      // An image resize by rows (resize.cc ResizeSpatial2D), its Inf and NaN spread over their neighbours.
      {MakeNode("Resize", 3, {{"mode", std::string("linear")}}), {Tensor(), F32({4}, {1, 1, 1.5f, 2})}},
  };
  for (const char* soc : {"", "Ascend910B1", "Ascend910A"}) {
    const ExecContext ctx = *soc ? ExecContext::ForSoc(FindSoc(soc), false) : ExecContext{};
    for (const Case& c : cases) {
      for (bool last : {false, true}) {
        const Tensor& in = c.x_instead.defined() ? c.x_instead : x;
        if (in.rank() != 4 && last) continue;  // a channels-last map is 4-D
        if (c.op.op_type == "Conv" && in.rank() == 4 && !last) continue;  // a channels-first result is rounded by the runtime
        if (c.op.op_type == "Resize" && last) continue;  // it reads (N, C, H, W) only
        std::vector<Tensor> ins = {last ? ToChannelsLast(in, pool) : in};
        for (const Tensor& t : c.extra) ins.push_back(last && t.shape() == x.shape() ? ToChannelsLast(t, pool) : t);
        std::vector<Tensor> want, got;
        FloatStatus want_status, got_status;
        KernelRunOptions plain{nullptr, last};
        ASSERT_TRUE(RunKernel(c.op, ins, want, pool, ctx, &want_status, plain).ok());
        want[0] = RoundToDTypeValues(want[0], DType::kF16, ctx, &want_status);
        bool rounded = false;
        KernelRunOptions offered = plain;
        offered.round_output_to = DType::kF16;
        offered.output_rounded = &rounded;
        ASSERT_TRUE(RunKernel(c.op, ins, got, pool, ctx, &got_status, offered).ok());
        const std::string what = std::string(soc) + " " + c.op.op_type + (c.op.has_attr(kEpilogueOp) ? "+Relu" : "") + (last ? " channels-last" : "");
        // Every kernel here rounds its own output, a conv's on every path it may take on this host (Winograd bands,
        // oneDNN's Winograd or direct kernel, npukit's AVX2 Winograd or depthwise kernel: kernels/conv_dnnl.cc
        // FinishResult; a 1-D conv's tiled product).
        EXPECT_TRUE(rounded) << what << ": the kernel left the rounding to the runtime";
        if (!rounded) got[0] = RoundToDTypeValues(got[0], DType::kF16, ctx, &got_status);
        ASSERT_EQ(got[0].shape(), want[0].shape()) << what;
        ASSERT_EQ(got[0].channels_last, want[0].channels_last) << what;
        EXPECT_EQ(std::memcmp(got[0].raw(), want[0].raw(), want[0].nbytes()), 0) << what;
        EXPECT_EQ(got_status.out_of_range, want_status.out_of_range) << what;
        EXPECT_EQ(got_status.non_finite, want_status.non_finite) << what;
        EXPECT_EQ(got_status.first_index, want_status.first_index) << what;
        EXPECT_EQ(got_status.first_output, want_status.first_output) << what;
        EXPECT_EQ(std::memcmp(&got_status.first_value, &want_status.first_value, sizeof(float)), 0) << what;
        if (*soc && !ctx.saturate()) {
          EXPECT_TRUE(want_status.any()) << what << ": the values must exercise the record";
        }
      }
    }
  }
}

// A conv whose batch's result passes half the last-level cache runs image by image, each image's Relu and 16-bit
// rounding right after it (conv_dnnl.cc RunByImage): each image's bits and exception record are those of the image
// run alone, rounded by the runtime's pass, with and without a fused residual (each image adds its own part).
TEST(Numerics, AConvOfALargeBatchGivesEachImageItsOwnResult) {
  RegisterBuiltinOps();
  ThreadPool& pool = ThreadPool::Global();
  const int64_t N = 2, C = 4, M = 32, S = 512;  // 2 x 32 MB of results: by image wherever the L3 is below 128 MB
  Tensor x = Random({N, C, S, S}, 61, -3, 3);
  x.mutable_data<float>()[S * S * C + 77] = 1e5f;  // image 1: past fp16's range, so the record has an entry
  const Tensor w = Random({M, C, 3, 3}, 62), b = Random({M}, 63), r = Random({N, M, S, S}, 64, -2, 2);
  const size_t image = static_cast<size_t>(S * S * M);
  const ExecContext ctx = ExecContext::ForSoc(FindSoc("Ascend910B1"), false);
  for (bool with_residual : {false, true}) {  // the residual by a sum post-op (brgemm kernels) or a binary add
    SCOPED_TRACE(with_residual ? "with a fused residual" : "no residual");
    AttrMap attrs = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {kEpilogueOp, std::string("Relu")}};
    if (with_residual) attrs[kEpilogueResidualInput] = int64_t{3};
    const Node conv = MakeNode("Conv", with_residual ? 4 : 3, attrs);
    auto inputs = [&](const Tensor& xs, const Tensor& rs) {
      std::vector<Tensor> ins = {ToChannelsLast(xs, pool), w, b};
      if (with_residual) ins.push_back(ToChannelsLast(rs, pool));
      return ins;
    };
    KernelRunOptions plain{nullptr, /*channels_last_out=*/true};
    KernelRunOptions offered = plain;
    bool rounded = false;
    offered.round_output_to = DType::kF16;
    offered.output_rounded = &rounded;
    std::vector<Tensor> got;
    FloatStatus got_status;
    ASSERT_TRUE(RunKernel(conv, inputs(x, r), got, pool, ctx, &got_status, offered).ok());
    if (!rounded) got[0] = RoundToDTypeValues(got[0], DType::kF16, ctx, &got_status);
    ASSERT_TRUE(got[0].channels_last);
    FloatStatus want_status;
    for (int64_t n = 0; n < N; ++n) {
      Tensor xn = Tensor::Empty(DType::kF32, {1, C, S, S}), rn = Tensor::Empty(DType::kF32, {1, M, S, S});
      std::memcpy(xn.mutable_raw(), x.data<float>() + n * C * S * S, xn.nbytes());
      std::memcpy(rn.mutable_raw(), r.data<float>() + n * static_cast<int64_t>(image), rn.nbytes());
      std::vector<Tensor> one;
      FloatStatus status;
      ASSERT_TRUE(RunKernel(conv, inputs(xn, rn), one, pool, ctx, &status, plain).ok());
      one[0] = RoundToDTypeValues(one[0], DType::kF16, ctx, &status);
      EXPECT_EQ(std::memcmp(got[0].data<float>() + n * image, one[0].data<float>(), image * sizeof(float)), 0) << "image " << n;
      want_status.out_of_range += status.out_of_range;
      if (want_status.first_index < 0 && status.first_index >= 0) want_status.first_index = status.first_index + n * static_cast<int64_t>(image);
    }
    EXPECT_GT(want_status.out_of_range, 0) << "the values must exercise the record";
    EXPECT_EQ(got_status.out_of_range, want_status.out_of_range);
    EXPECT_EQ(got_status.first_index, want_status.first_index);
  }
}

// An fp32 result on a saturating SoC (or with overflow detection on) is scanned for Inf/NaN on all threads; the
// record and the replacements must be those of one thread walking in order, wherever the values lie among the
// chunks, and a result without any must come back as it was, its storage shared.
TEST(Numerics, SettleFloat32FindsEveryNonFiniteValueInOrder) {
  const Tensor x = Random({3, 5, 97, 89}, 41, -100, 100);  // 129,485 elements: several chunks on every thread
  struct Where {
    std::vector<std::pair<int64_t, float>> put;
  };
  const std::vector<Where> placements = {
      {{}},
      {{{129484, NAN}}},                                            // the last element only
      {{{70000, INFINITY}, {5, -INFINITY}, {129000, NAN}}},        // the first one is not the first placed
      {{{16383, NAN}, {16384, -INFINITY}, {65536, INFINITY}}},     // either side of a chunk boundary
  };
  for (const char* soc : {"Ascend910A", "Ascend910B1"}) {
    const ExecContext ctx = ExecContext::ForSoc(FindSoc(soc), /*track_status=*/true);
    for (const Where& w : placements) {
      Tensor t = x.Clone();
      for (auto [i, v] : w.put) t.mutable_data<float>()[i] = v;
      const Tensor before = t.Clone();
      Tensor settled = t;
      FloatStatus st;
      SettleFloat32(settled, ctx, &st);
      // The reference: one walk in order.
      FloatStatus want;
      Tensor expect = before.Clone();
      for (int64_t i = 0; i < expect.numel(); ++i) {
        float& v = expect.mutable_data<float>()[i];
        if (std::isfinite(v)) continue;
        ++want.non_finite;
        want.Record(0, i, v);
        if (ctx.saturate()) v = std::isnan(v) ? 0.0f : std::copysign(FLT_MAX, v);
      }
      const std::string what = std::string(soc) + ", " + std::to_string(w.put.size()) + " placed";
      EXPECT_EQ(st.non_finite, want.non_finite) << what;
      EXPECT_EQ(st.first_index, want.first_index) << what;
      EXPECT_EQ(st.first_output, want.first_output) << what;
      EXPECT_EQ(std::memcmp(&st.first_value, &want.first_value, sizeof(float)), 0) << what;
      EXPECT_EQ(std::memcmp(settled.raw(), expect.raw(), expect.nbytes()), 0) << what;
      EXPECT_EQ(std::memcmp(t.raw(), before.raw(), before.nbytes()), 0) << what << ": the input tensor changed";
      if (w.put.empty()) {
        EXPECT_EQ(settled.raw(), t.raw()) << what << ": a finite result is not copied";
      }
    }
  }
}

// A task that only moves bytes of earlier tasks' results is not scanned again (they were settled where they were
// computed); one that moves a graph input's bytes is, as that input was never settled. On a saturating SoC both
// Reshapes below give FLT_MAX and 0 for the input's Inf and NaN.
TEST(Numerics, MovedValuesAreSettledOnce) {
  Builder bld;
  const int x = bld.In("x", {2, 2}), shape = bld.Const("shape", I64({4}));
  const int moved_input = bld.Op("Reshape", {x, shape});
  const int moved_result = bld.Op("Reshape", {bld.Op("Relu", {x}), shape});
  Graph g = bld.Done(moved_input);
  g.outputs.push_back(moved_result);
  auto session = Session::FromGraph(g);
  ASSERT_TRUE(session.ok());
  session.value().SetSoc(std::shared_ptr<const SocSpec>(FindSoc("Ascend910A"), [](const SocSpec*) {}));
  ASSERT_TRUE(session.value().exec().saturate());
  std::vector<Tensor> outs;
  ASSERT_TRUE(session.value().Run({F32({2, 2}, {INFINITY, 1.f, NAN, 2.f})}, outs).ok());
  for (const Tensor& y : outs) {
    EXPECT_EQ(y.data<float>()[0], FLT_MAX);
    EXPECT_EQ(y.data<float>()[1], 1.f);
    EXPECT_EQ(y.data<float>()[2], 0.f);
    EXPECT_EQ(y.data<float>()[3], 2.f);
  }
}

TEST(Numerics, ExceedsRangeIsAboutRoundingNotTheThreshold) {
  EXPECT_FALSE(ExceedsRange(65504.0f, DType::kF16));
  EXPECT_FALSE(ExceedsRange(65519.0f, DType::kF16));  // rounds down to 65504
  EXPECT_TRUE(ExceedsRange(65520.0f, DType::kF16));   // rounds up past it
  EXPECT_FALSE(ExceedsRange(INFINITY, DType::kF16));  // not finite: judged by the task's inputs
  EXPECT_FALSE(ExceedsRange(1e38f, DType::kBF16));
  EXPECT_TRUE(ExceedsRange(3.4e38f, DType::kBF16));
}

TEST(Numerics, InfNanModeSwitchOnlyWhereTheSocHasIt) {
  setenv("INF_NAN_MODE_ENABLE", "0", 1);
  EXPECT_EQ(EffectiveOverflowMode(*FindSoc("Ascend910B2")), OverflowMode::kSaturation);
  setenv("INF_NAN_MODE_ENABLE", "1", 1);
  EXPECT_EQ(EffectiveOverflowMode(*FindSoc("Ascend910A")), OverflowMode::kSaturation);
  unsetenv("INF_NAN_MODE_ENABLE");
  EXPECT_EQ(EffectiveOverflowMode(*FindSoc("Ascend910B2")), OverflowMode::kInfNan);
}

TEST(AscendTypes, TableMapsByOpsetAndRank) {
  Node n;
  n.op_type = "Conv";
  EXPECT_EQ(AscendOpType(n, 4), "Conv2D");
  EXPECT_EQ(AscendOpType(n, 5), "Conv3D");
  n.op_type = "Squeeze", n.opset = 11;
  EXPECT_EQ(AscendOpType(n, 3), "Squeeze");
  n.opset = 13;
  EXPECT_EQ(AscendOpType(n, 3), "SqueezeV3");
  n.op_type = "Relu";
  EXPECT_EQ(AscendOpType(n, 4), "Relu");
}

TEST(Fusion, ConvBatchnormFoldsIntoWeightsAndBias) {
  Builder b;
  int x = b.In("x", {1, 3, 6, 6});
  int c = b.Op("Conv", {x, b.Const("w", Random({4, 3, 3, 3}, 1)), b.Const("b", Random({4}, 2))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int y = b.Op("BatchNormalization", {c, b.Const("s", Random({4}, 3, 0.5, 2)), b.Const("o", Random({4}, 4)),
                                      b.Const("m", Random({4}, 5)), b.Const("v", Random({4}, 6, 0.5, 2))});
  Graph g = b.Done(y);
  Tensor in = Random({1, 3, 6, 6}, 7);
  auto want = Execute(g, {in});
  ASSERT_TRUE(ConvBatchnormFusionPass(g).ok());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].original_names, (std::vector<std::string>{"Conv_0", "BatchNormalization_1"}));
  ExpectClose(Execute(g, {in}), want, 1e-5f);
}

TEST(Fusion, GeluLayerNormAndMatMulBiasMatchTheDecomposedGraph) {
  Builder b;
  int x = b.In("x", {2, 8});
  int mm = b.Op("Add", {b.Op("MatMul", {x, b.Const("w", Random({8, 8}, 1))}), b.Const("bias", Random({8}, 2))});
  auto k = [&](const char* n, float v) { return b.Const(n, F32({}, {v})); };
  int gelu = b.Op("Mul", {b.Op("Mul", {mm, b.Op("Add", {b.Op("Erf", {b.Op("Div", {mm, k("sqrt2", std::sqrt(2.0f))})}), k("one", 1)})}), k("half", 0.5f)});
  AttrMap last = {{"axes", std::vector<int64_t>{-1}}};
  int mean = b.Op("ReduceMean", {gelu}, last);
  int sub = b.Op("Sub", {gelu, mean});
  int var = b.Op("ReduceMean", {b.Op("Pow", {sub, k("two", 2)})}, last);
  int norm = b.Op("Div", {sub, b.Op("Sqrt", {b.Op("Add", {var, k("eps", 1e-5f)})})});
  int y = b.Op("Add", {b.Op("Mul", {norm, b.Const("gamma", Random({8}, 3))}), b.Const("beta", Random({8}, 4))});
  Graph g = b.Done(y);
  Tensor in = Random({2, 8}, 5);
  auto want = Execute(g, {in});
  for (auto pass : {MatMulBiasAddFusionPass, GeluONNXFusionPass, LayerNormONNXFusionPass}) ASSERT_TRUE(pass(g).ok());
  std::vector<std::string> types = OpTypes(g);
  EXPECT_EQ(types, (std::vector<std::string>{"MatMulBias", "Gelu", "LayerNormalization"}));
  EXPECT_EQ(g.nodes[1].original_names.size(), 5u);
  EXPECT_EQ(g.nodes[2].original_names.size(), 9u);
  ExpectClose(Execute(g, {in}), want, 1e-5f);
}

// GPT-2's tanh GELU, in torch's export order (x*x*x, scale, add, scale, tanh, +1, *x, *0.5) and in HF's
// (Pow(x, 3), and (0.5 * x) * (1 + tanh)), becomes Gelu with approximate="tanh"; a near miss (0.05 for 0.044715)
// stays as it is.
TEST(Fusion, TanhGeluInBothExportOrders) {
  Builder b;
  int x = b.In("x", {4, 16});
  auto k = [&](const char* n, float v) { return b.Const(n, F32({}, {v})); };
  auto tanh_part = [&](int v, int cube, float coefficient, const char* tag) {
    int inner = b.Op("Mul", {b.Const(std::string("c_") + tag, F32({}, {coefficient})), cube});
    int scaled = b.Op("Mul", {b.Const(std::string("s_") + tag, F32({}, {0.7978845608f})), b.Op("Add", {v, inner})});
    return b.Op("Add", {b.Const(std::string("one_") + tag, F32({}, {1.0f})), b.Op("Tanh", {scaled})});
  };
  int a = b.Op("Mul", {x, k("shift", 1.5f)});
  int torch_form = b.Op("Mul", {k("half1", 0.5f), b.Op("Mul", {a, tanh_part(a, b.Op("Mul", {a, b.Op("Mul", {a, a})}), 0.044715f, "t")})});
  int hf_form = b.Op("Mul", {b.Op("Mul", {torch_form, k("half2", 0.5f)}),
                             tanh_part(torch_form, b.Op("Pow", {torch_form, k("three", 3.0f)}), 0.044715f, "h")});
  int near_miss = b.Op("Mul", {k("half3", 0.5f), b.Op("Mul", {hf_form, tanh_part(hf_form, b.Op("Mul", {hf_form, b.Op("Mul", {hf_form, hf_form})}), 0.05f, "n")})});
  Graph g = b.Done(near_miss);
  Tensor in = Random({4, 16}, 9, -3, 3);
  auto want = Execute(g, {in});
  ASSERT_TRUE(GeluONNXFusionPass(g).ok());
  std::vector<std::string> types = OpTypes(g);
  ASSERT_GE(types.size(), 3u);
  EXPECT_EQ(std::vector<std::string>(types.begin(), types.begin() + 3), (std::vector<std::string>{"Mul", "Gelu", "Gelu"}));
  EXPECT_EQ(g.nodes[1].attr_string("approximate"), "tanh");
  EXPECT_EQ(g.nodes[1].original_names.size(), 9u);
  EXPECT_EQ(std::count(types.begin(), types.end(), "Tanh"), 1);
  EXPECT_TRUE(g.Verify().ok());
  ExpectClose(Execute(g, {in}), want, 2e-5f);
}

TEST(Fusion, SoftmaxPatternAndUbActivation) {
  Builder b;
  int x = b.In("x", {2, 5});
  int c = b.Op("Conv", {b.Op("Reshape", {x, b.Const("s4", [] { Tensor t = Tensor::Empty(DType::kI64, {4}); int64_t v[] = {1, 2, 1, 5}; std::copy(v, v + 4, t.mutable_data<int64_t>()); return t; }())}),
                        b.Const("w", Random({2, 2, 1, 1}, 1))});
  int r = b.Op("Relu", {c});
  int e = b.Op("Exp", {b.Op("Sub", {r, b.Op("ReduceMax", {r}, {{"axes", std::vector<int64_t>{3}}})})});
  int y = b.Op("Div", {e, b.Op("ReduceSum", {e, b.Const("ax", [] { Tensor t = Tensor::Empty(DType::kI64, {1}); t.mutable_data<int64_t>()[0] = 3; return t; }())})});
  Graph g = b.Done(y);
  Tensor in = Random({2, 5}, 2);
  auto want = Execute(g, {in});
  ASSERT_TRUE(SoftmaxFusionPass(g).ok());
  ASSERT_TRUE(ConvElemwiseUbFusionPass(g).ok());
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[1].attr_string(kEpilogueOp), "Relu");
  EXPECT_EQ(g.nodes[2].op_type, "Softmax");
  EXPECT_EQ(g.nodes[2].attr_int("axis", 0), 3);
  ExpectClose(Execute(g, {in}), want, 1e-6f);
}

// torch's pre-opset-14 Hardswish (x * HardSigmoid(x; 1/6, 1/2)) becomes HardSwish, which the conv before it
// then runs inside its kernel, as it does a Relu6 (Clip) after a depthwise conv.
TEST(Fusion, HardSwishFromHardSigmoidMulAndActivationsInsideTheConv) {
  Builder b;
  int x = b.In("x", {1, 4, 9, 9});
  int c = b.Op("Conv", {x, b.Const("w", Random({8, 4, 3, 3}, 1)), b.Const("bias", Random({8}, 2))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int hs = b.Op("Mul", {c, b.Op("HardSigmoid", {c}, {{"alpha", 1.0f / 6}, {"beta", 0.5f}})});
  int d = b.Op("Conv", {hs, b.Const("dw", Random({8, 1, 3, 3}, 3))}, {{"group", int64_t{8}}, {"strides", std::vector<int64_t>{2, 2}}});
  int relu6 = b.Op("Clip", {d, b.Const("lo", Tensor::Zeros(DType::kF32, {})), b.Const("hi", [] { Tensor t = Tensor::Empty(DType::kF32, {}); t.mutable_data<float>()[0] = 6; return t; }())});
  int other = b.Op("Mul", {relu6, b.Op("HardSigmoid", {relu6}, {{"alpha", 0.2f}, {"beta", 0.5f}})});  // not Hardswish
  Graph g = b.Done(other);
  Tensor in = Random({1, 4, 9, 9}, 4);
  auto want = Execute(g, {in});
  ASSERT_TRUE(HardSwishFusionPass(g).ok());
  ASSERT_TRUE(ConvElemwiseUbFusionPass(g).ok());
  std::vector<std::string> types = OpTypes(g);
  // The depthwise conv keeps its ReLU6 as a task of its own (CANN fuses only a Relu into a DepthwiseConv2D).
  EXPECT_EQ(types, (std::vector<std::string>{"Conv", "Conv", "Clip", "HardSigmoid", "Mul"}));
  EXPECT_EQ(g.nodes[0].attr_string(kEpilogueOp), "HardSwish");
  EXPECT_FALSE(g.nodes[1].has_attr(kEpilogueOp));
  EXPECT_TRUE(g.Verify().ok());
  ExpectClose(Execute(g, {in}), want, 1e-6f);
}

// TbeDepthwiseConvElemwiseFusionPass (CANN's UB fusion reference): a DepthwiseConv2D takes only a LeakyRelu of
// slope 0 (a Relu). A depthwise conv's Relu joins it; its HardSwish, Sigmoid or LeakyRelu of another slope stays a
// task; a grouped conv of several channels per group, like any other conv, takes the HardSwish.
TEST(Fusion, ADepthwiseConvTakesOnlyARelu) {
  struct Case {
    const char* act;
    AttrMap act_attrs;
    int64_t in_per_group;  // 1: depthwise
    bool fused;
  };
  const Case cases[] = {{"Relu", {}, 1, true},       {"LeakyRelu", {{"alpha", 0.0f}}, 1, true}, {"HardSwish", {}, 1, false},
                        {"Sigmoid", {}, 1, false},   {"LeakyRelu", {{"alpha", 0.1f}}, 1, false}, {"HardSwish", {}, 2, true}};
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.act) + " after a conv of " + std::to_string(c.in_per_group) + " input channels per group");
    Builder b;
    int x = b.In("x", {1, 8, 7, 7});
    const int64_t groups = 8 / c.in_per_group;
    int conv = b.Op("Conv", {x, b.Const("w", Random({8, c.in_per_group, 3, 3}, 5))}, {{"group", groups}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Graph g = b.Done(b.Op(c.act, {conv}, c.act_attrs));
    Tensor in = Random({1, 8, 7, 7}, 6);
    auto want = Execute(g, {in});
    ASSERT_TRUE(ConvElemwiseUbFusionPass(g).ok());
    EXPECT_EQ(OpTypes(g).size(), c.fused ? 1u : 2u);
    EXPECT_EQ(g.nodes[0].has_attr(kEpilogueOp), c.fused);
    ExpectClose(Execute(g, {in}), want, 1e-6f);
  }
}

// A matrix product takes its activation in the one of CANN's two UB fusions that lists it (passes/fusion.cc
// kBatchMatmulElemwiseActivations, kFullyconnectionActivations): a Relu in TbeBatchMatmulElementWiseFusionPass, a Gelu
// or a Sigmoid or TensorFlow's Relu6 in TbeFullyconnectionElemwiseFusionPass, a HardSwish or an ONNX Clip (CANN's
// ClipByValue) in neither; the results are unchanged.
TEST(Fusion, AMatrixProductTakesItsActivationInThePassThatListsIt) {
  struct Case {
    const char* act;
    bool by_batch_matmul_pass, by_fullyconnection_pass;
  };
  const Case cases[] = {{"Relu", true, true},         {"Gelu", false, true}, {"Sigmoid", false, true},
                        {"HardSwish", false, false},  {"Clip", false, false}, {"Relu6", false, true}};
  for (const Case& c : cases) {
    for (bool batch_matmul_pass_first : {true, false}) {
      SCOPED_TRACE(std::string(c.act) + (batch_matmul_pass_first ? ", the batch-matmul pass first" : ", the fully-connection pass alone"));
      Builder b;
      int x = b.In("x", {2, 5, 16});
      int mm = b.Op("MatMul", {x, b.Const("w", Random({16, 8}, 7))});
      const bool relu6 = std::string_view(c.act) == "Relu6";  // a Clip of Ascend IR type Relu6, as tf_ops.cc gives it
      std::vector<int> act_inputs = {mm};
      if (relu6 || std::string_view(c.act) == "Clip") act_inputs = {mm, b.Const("lo", F32({}, {0.0f})), b.Const("hi", F32({}, {6.0f}))};
      Graph g = b.Done(b.Op(relu6 ? "Clip" : c.act, act_inputs));
      if (relu6) g.nodes.back().ascend_type = "Relu6";
      Tensor in = Random({2, 5, 16}, 8);
      auto want = Execute(g, {in});
      bool fused = false;
      if (batch_matmul_pass_first) {
        ASSERT_TRUE(MatMulElemwiseUbFusionPass(g).ok());
        fused = OpTypes(g).size() == 1;
        EXPECT_EQ(fused, c.by_batch_matmul_pass);
      }
      if (!fused) {
        ASSERT_TRUE(FullyconnectionElemwiseUbFusionPass(g).ok());
        EXPECT_EQ(OpTypes(g).size() == 1, c.by_fullyconnection_pass);
      }
      ExpectClose(Execute(g, {in}), want, 1e-6f);
    }
  }
}

// torch's SiLU (x * Sigmoid(x)) stays Sigmoid and Mul: CANN documents no graph fusion of the pair, and the conv
// before it cannot take either into its epilogue, since both read its output (CANN's conv UB fusions take a
// chain; the Sigmoid-Mul ones are int8: TbeConvSigmoidMulQuantFusionPass). A real Swish op joins the conv.
TEST(Fusion, SiluStaysTwoOpsAndASwishJoinsTheConv) {
  Builder b;
  int x = b.In("x", {1, 4, 9, 9});
  int c = b.Op("Conv", {x, b.Const("w", Random({8, 4, 3, 3}, 1)), b.Const("bias", Random({8}, 2))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int silu = b.Op("Mul", {b.Op("Sigmoid", {c}), c});
  int c2 = b.Op("Conv", {silu, b.Const("w2", Random({8, 8, 1, 1}, 3))});
  int swish = b.Op("Swish", {c2});
  Graph g = b.Done(swish);
  Tensor in = Random({1, 4, 9, 9}, 4);
  auto want = Execute(g, {in});
  ASSERT_TRUE(ConvElemwiseUbFusionPass(g).ok());
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Conv", "Sigmoid", "Mul", "Conv"}));
  EXPECT_FALSE(g.nodes[0].has_attr(kEpilogueOp));
  EXPECT_EQ(g.nodes[3].attr_string(kEpilogueOp), "Swish");
  EXPECT_TRUE(g.Verify().ok());
  ExpectClose(Execute(g, {in}), want, 1e-6f);
}

// A zero Pad of the spatial axes becomes the padding of the AveragePool (counting it) or Conv reading it; a Pad
// with another value, of the channel axis, or before a pool that excludes its own padding stays.
TEST(Fusion, ZeroSpatialPadIntoTheWindowOpReadingIt) {
  Builder b;
  int x = b.In("x", {1, 4, 9, 9});
  auto pads = [&](const std::string& name, std::vector<int64_t> v) { return b.Const(name, I64(std::move(v))); };
  int c = b.Op("Conv", {x, b.Const("w", Random({8, 4, 3, 3}, 1))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int avg = b.Op("AveragePool", {b.Op("Pad", {c, pads("p1", {0, 0, 1, 2, 0, 0, 1, 0})})}, {{"kernel_shape", std::vector<int64_t>{3, 3}}});
  int conv = b.Op("Conv", {b.Op("Pad", {avg, pads("p2", {0, 0, 2, 1, 0, 0, 2, 1})}), b.Const("w2", Random({8, 8, 3, 3}, 2))},
                  {{"pads", std::vector<int64_t>{1, 0, 0, 1}}});
  int channel_pad = b.Op("Pad", {conv, pads("p3", {0, 1, 0, 0, 0, 1, 0, 0})});
  int excluding = b.Op("AveragePool", {b.Op("Pad", {channel_pad, pads("p4", {0, 0, 1, 1, 0, 0, 1, 1})})},
                       {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  Graph g = b.Done(excluding);
  Tensor in = Random({1, 4, 9, 9}, 3);
  auto want = Execute(g, {in});
  ASSERT_TRUE(PadWindowFusionPass(g).ok());
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Conv", "AveragePool", "Conv", "Pad", "Pad", "AveragePool"}));
  EXPECT_EQ(g.nodes[1].attr_ints("pads"), (std::vector<int64_t>{1, 2, 1, 0}));
  EXPECT_EQ(g.nodes[1].attr_int("count_include_pad", 0), 1);
  EXPECT_EQ(g.nodes[1].original_names, (std::vector<std::string>{"Pad_1", "AveragePool_2"}));
  EXPECT_EQ(g.nodes[1].name, "AveragePool_2");
  EXPECT_EQ(g.nodes[2].attr_ints("pads"), (std::vector<int64_t>{3, 1, 2, 2}));
  EXPECT_TRUE(g.Verify().ok());
  ExpectClose(Execute(g, {in}), want, 1e-5f);
}

// torch's channel shuffle (Reshape to groups, swap, Reshape back) becomes ShuffleChannel; it and the channel Slices
// after it (ShuffleNet's split) run on the conv's channels-last map and give the same bits as the unfused graph.
TEST(Fusion, ChannelShuffleAndChannelSlicesOnChannelsLastMaps) {
  Builder b;
  int x = b.In("x", {1, 4, 6, 6});
  auto ints = [&](const std::string& name, std::vector<int64_t> v) { return b.Const(name, I64(std::move(v))); };
  int c = b.Op("Conv", {x, b.Const("w", Random({12, 4, 3, 3}, 1))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int grouped = b.Op("Reshape", {c, ints("to_groups", {1, 3, 4, 6, 6})});
  int swapped = b.Op("Transpose", {grouped}, {{"perm", std::vector<int64_t>{0, 2, 1, 3, 4}}});
  int shuffled = b.Op("Reshape", {swapped, ints("back", {1, 12, 6, 6})});
  int left = b.Op("Slice", {shuffled, ints("s0", {0}), ints("e0", {5}), ints("a0", {1})});
  int right = b.Op("Slice", {shuffled, ints("s1", {5, 1}), ints("e1", {12, 6}), ints("a1", {1, 2}), ints("st1", {2, 1})});
  int conv_left = b.Op("Conv", {left, b.Const("w2", Random({4, 5, 1, 1}, 2))});
  int conv_right = b.Op("Conv", {right, b.Const("w3", Random({4, 4, 1, 1}, 3))}, {{"pads", std::vector<int64_t>{1, 0, 0, 0}}});
  int y = b.Op("Concat", {conv_left, conv_right}, {{"axis", int64_t{1}}});
  Graph g = b.Done(y);
  Tensor in = Random({1, 4, 6, 6}, 4);
  auto want = Execute(g, {in});
  ASSERT_TRUE(ShuffleChannelFusionPass(g).ok());
  EXPECT_EQ(OpTypes(g), (std::vector<std::string>{"Conv", "ShuffleChannel", "Slice", "Slice", "Conv", "Conv", "Concat"}));
  EXPECT_EQ(g.nodes[1].attr_int("group", 0), 3);
  EXPECT_EQ(g.nodes[1].original_names, (std::vector<std::string>{"Reshape_1", "Transpose_2", "Reshape_3"}));
  EXPECT_TRUE(g.Verify().ok());
  EXPECT_EQ(Execute(g, {in}), want);  // bit-equal: the shuffle and the slices only move values
}

// The bottleneck ending: conv3 + residual (a second conv, listed after it) + Relu, and Add + Relu alone.
TEST(Fusion, ConvResidualReluAndEltwiseActivation) {
  Builder b;
  int x = b.In("x", {1, 4, 5, 5});
  int main_branch = b.Op("Conv", {x, b.Const("w1", Random({8, 4, 3, 3}, 1))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int shortcut = b.Op("Conv", {x, b.Const("w2", Random({8, 4, 1, 1}, 2)), b.Const("b2", Random({8}, 3))});
  int y = b.Op("Relu", {b.Op("Add", {main_branch, shortcut})});
  int z = b.Op("Relu", {b.Op("Add", {y, b.Const("c", Random({1, 8, 5, 5}, 4))})});
  Graph g = b.Done(z);
  Tensor in = Random({1, 4, 5, 5}, 5);
  auto want = Execute(g, {in});
  ASSERT_TRUE(ConvElemwiseUbFusionPass(g).ok());
  ASSERT_TRUE(EltwiseUbFusionPass(g).ok());
  std::vector<std::string> types = OpTypes(g);
  EXPECT_EQ(types, (std::vector<std::string>{"Conv", "Conv", "Add"}));  // the shortcut now runs first
  const Node& fused = g.nodes[1];
  EXPECT_EQ(fused.original_names, (std::vector<std::string>{"Conv_0", "Add_2", "Relu_3"}));
  EXPECT_EQ(fused.inputs.size(), 4u);
  EXPECT_EQ(fused.inputs[2], -1);  // no bias: the slot stays empty before the residual
  EXPECT_EQ(g.nodes[2].attr_string("_epilogue_op"), "Relu");
  EXPECT_TRUE(g.Verify().ok());
  ExpectClose(Execute(g, {in}), want, 1e-5f);
}

TEST(Fusion, SwitchFileBothFormsAndUnknownNames) {
  std::string path = ::testing::TempDir() + "/switch.cfg";
  std::ofstream(path) << "# comment\nConvBatchnormFusionPass:off\nGeluONNXFusionPass : on\nBogusPass:off\n";
  std::vector<std::string> warnings;
  auto off = LoadFusionSwitchFile(path, warnings);
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off.value(), (std::set<std::string>{"ConvBatchnormFusionPass"}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("BogusPass"), std::string::npos);
  EXPECT_NE(warnings[0].find("LayerNormONNXFusionPass"), std::string::npos);
  std::ofstream(path, std::ios::trunc) << R"({"Switch":{"GraphFusion":{"ALL":"off","SoftmaxFusionPass":"on"},"UBFusion":{"TbeConvElemwiseFusionPass":"off"}}})";
  off = LoadFusionSwitchFile(path, warnings);
  ASSERT_TRUE(off.ok());
  EXPECT_FALSE(off.value().count("SoftmaxFusionPass"));
  EXPECT_TRUE(off.value().count("ConvBatchnormFusionPass"));
  EXPECT_TRUE(off.value().count("TbeConvElemwiseFusionPass"));
  EXPECT_FALSE(off.value().count("TbeBatchMatmulElementWiseFusionPass"));
  std::ofstream(path, std::ios::trunc) << "ConvBatchnormFusionPass:maybe\n";
  EXPECT_EQ(LoadFusionSwitchFile(path, warnings).status().code(), "E10001");
}

TEST(Precision, CastsAppearWhereDtypesChangeAndWeightsAreConvertedOnce) {
  Builder b;
  int x = b.In("x", {1, 2, 3, 3});
  int w = b.Const("w", Random({2, 2, 1, 1}, 1));
  int y = b.Op("Add", {b.Op("Conv", {x, w}), b.Op("Conv", {x, w})});
  Graph g = b.Done(y);
  MapAscendOpTypes(g);
  std::vector<Status> errors;
  PrecisionConfig cfg = LoadPrecisionConfig({}, *FindSoc("Ascend310P3"), errors);
  ASSERT_TRUE(errors.empty());
  std::vector<std::string> warnings;
  ASSERT_TRUE(AssignPrecision(g, cfg, warnings).ok());
  ASSERT_TRUE(g.Verify().ok());
  std::vector<std::string> types;
  for (const Node& n : g.nodes) types.push_back(ShownType(n));
  // One Cast in (shared by both convs), fp16 weights shared too, one Cast out to the fp32 net output.
  EXPECT_EQ(types, (std::vector<std::string>{"Cast", "Conv2D", "Conv2D", "Add", "Cast"}));
  EXPECT_EQ(g.nodes[1].inputs, g.nodes[2].inputs);
  EXPECT_EQ(g.values[g.nodes[1].inputs[1]].constant->dtype(), DType::kF16);
  EXPECT_EQ(g.values[g.outputs[0]].dtype, DType::kF32);
  EXPECT_EQ(g.values[g.outputs[0]].name, "Add_2_out") << "the net output keeps its name";
}

TEST(Precision, OverridesMatchOriginalOpNamesOfFusedOps) {
  Builder b;
  int y = b.Op("Relu", {b.In("x", {4})});
  Graph g = b.Done(y);
  g.nodes[0].original_names = {"conv", "relu_absorbed"};
  MapAscendOpTypes(g);
  std::string path = ::testing::TempDir() + "/custom.txt";
  std::ofstream(path) << "relu_absorbed::OutputDtype:float32\n";
  PrecisionFlags flags;
  flags.customize_dtypes = path;
  std::vector<Status> errors;
  PrecisionConfig cfg = LoadPrecisionConfig(flags, *FindSoc("Ascend310P3"), errors);
  ASSERT_TRUE(errors.empty());
  std::vector<std::string> warnings;
  ASSERT_TRUE(AssignPrecision(g, cfg, warnings).ok());
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  EXPECT_EQ(g.values[g.nodes[1].outputs[0]].dtype, DType::kF32) << "the Relu (after the input Cast) outputs fp32";
  EXPECT_NE(g.nodes[1].attr_string("_precision_reason").find("customize_dtypes relu_absorbed"), std::string::npos);
}

}  // namespace
}  // namespace npu
