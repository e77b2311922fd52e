// The cost model's laws (issue 12, must-show 1) and the SoC spec files it reads.
#include <gtest/gtest.h>

#include <random>

#include "cost/cost_model.h"
#include "cost/tiling.h"
#include "cost/work.h"
#include "ir/node_attrs.h"
#include "passes/fusion.h"
#include "soc/soc_spec.h"
#include "test_util.h"

namespace npu {
namespace {

Work MatMul(int64_t m, int64_t k, int64_t n, int64_t batch = 1) {
  Work w;
  w.kind = WorkKind::kCube;
  w.dtype = w.out_dtype = DType::kF16;
  w.batch = batch, w.m = m, w.k = k, w.n = n;
  w.a_bytes = batch * m * k * 2, w.b_bytes = batch * k * n * 2;
  w.in_bytes = w.a_bytes + w.b_bytes, w.out_bytes = batch * m * n * 2;
  w.flops = 2.0 * static_cast<double>(batch * m) * static_cast<double>(k * n);
  return w;
}

Work Elementwise(int64_t elements, double ops = 1) {
  Work w;
  w.kind = WorkKind::kVector;
  w.dtype = w.out_dtype = DType::kF16;
  w.elements = elements, w.ops_per_element = ops;
  w.in_bytes = 2 * elements * 2, w.out_bytes = elements * 2;
  w.flops = static_cast<double>(elements) * ops;
  return w;
}

double CubePeak(const SocSpec& s) { return 2.0 * s.cube_m * s.cube_n * s.cube_k * s.ai_cores * s.freq_mhz * 1e6; }
double Seconds(const TaskCost& c) { return c.duration_ns * 1e-9; }
TaskCost Cost(const Work& w, const SocSpec& s) { return EstimateTask(w, DefaultTiling(w, s), s); }

TEST(SocSpecs, EveryBuiltInParsesWithItsFigures) {
  ASSERT_EQ(AllSocs().size(), 7u);
  const SocSpec* p = FindSoc("Ascend310P3");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->ai_cores, 8);
  EXPECT_EQ(p->freq_mhz, 1060);
  EXPECT_EQ(p->ops_family, "ascend310p");
  EXPECT_EQ(p->default_overflow, OverflowMode::kSaturation);
  EXPECT_FALSE(p->cube_fp32);
  const SocSpec* b = FindSoc("Ascend910B3");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->ops_family, "ascend910b");
  EXPECT_TRUE(b->overflow_switchable && b->has_bf16 && b->cube_fp32);
  EXPECT_EQ(b->CubeK(DType::kF32), 8);
  EXPECT_EQ(b->l2, 192 << 20);
  for (const SocSpec& s : AllSocs()) {
    EXPECT_GT(s.memory_bandwidth_gbps, 0) << s.name;
    EXPECT_GT(s.l0a, 0) << s.name;
    EXPECT_EQ(s.CubeK(DType::kI8), 32) << s.name;
  }
}

TEST(SocSpecs, BadFilesNameTheKeyOrLine) {
  auto missing = ParseSocSpec("[version]\nSoC_version=X\n[SoCInfo]\nl2_size=1\n", "my.ini");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("ai_core_cnt"), std::string::npos);
  EXPECT_NE(missing.status().message().find("my.ini"), std::string::npos);
  auto garbage = ParseSocSpec("[version]\nthis line has no equals sign\n", "g.ini");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("g.ini:2"), std::string::npos);
  std::string text = "[version]\nSoC_version=Mine\n";
  for (const char* sec : {"[SoCInfo]\nai_core_cnt=abc\n"}) text += sec;
  auto bad = ParseSocSpec(text, "b.ini");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("ai_core_cnt"), std::string::npos);
}

// On one tiling (the one chosen for the largest case, valid for all): the cost function's law. Which
// tiling to pick is the heuristic's and aoe's business, not this law's.
TEST(CostModel, MoreWorkNeverTakesLessTime) {
  auto sweep = [](const SocSpec& s, const std::vector<Work>& works) {
    Tiling t = DefaultTiling(works.back(), s);
    double prev = 0;
    for (const Work& w : works) {
      ASSERT_TRUE(CheckTiling(w, t, s).ok()) << TilingToString(w, t);
      double d = EstimateTask(w, t, s).duration_ns;
      EXPECT_GE(d, prev * (1 - 1e-9)) << s.name << " " << TilingKey(w) << " " << TilingToString(w, t);
      prev = d;
    }
  };
  for (const SocSpec& s : AllSocs()) {
    std::vector<Work> by_m, by_k, by_n, by_batch, by_elements, by_ops;
    for (int64_t m : {1, 16, 17, 49, 64, 196, 784, 3136, 12544, 50176}) by_m.push_back(MatMul(m, 576, 128));
    for (int64_t k : {16, 64, 147, 576, 1152, 4608, 25088}) by_k.push_back(MatMul(196, k, 256));
    for (int64_t n : {16, 64, 256, 1000, 4096}) by_n.push_back(MatMul(49, 512, n));
    for (int64_t b : {1, 2, 3, 12, 48}) by_batch.push_back(MatMul(128, 64, 128, b));
    for (int64_t e : {1, 1000, 100000, 802816, 12845056, 100000000}) by_elements.push_back(Elementwise(e));
    for (double ops : {0.0, 1.0, 2.0, 8.0, 64.0}) by_ops.push_back(Elementwise(1 << 20, ops));
    for (const auto* works : {&by_m, &by_k, &by_n, &by_batch, &by_elements, &by_ops}) sweep(s, *works);
  }
}

TEST(CostModel, AFasterSocIsNeverSlowerOnTheSameTiling) {
  std::mt19937 rng(7);
  for (const SocSpec& slow : AllSocs()) {
    SocSpec fast = slow;
    fast.freq_mhz *= 1.5;
    fast.memory_bandwidth_gbps *= 2;
    for (double* r : {&fast.rates.ddr, &fast.rates.l2_read, &fast.rates.l1_to_l0a, &fast.rates.l1_to_l0b, &fast.rates.l0c_to_ub,
                      &fast.rates.ub_to_ddr, &fast.rates.ub_to_l2})
      *r *= 1.25;
    for (int i = 0; i < 200; ++i) {
      Work w = i % 2 ? MatMul(1 + rng() % 5000, 1 + rng() % 5000, 1 + rng() % 5000) : Elementwise(1 + rng() % 50000000, 1 + rng() % 8);
      Tiling t = DefaultTiling(w, slow);
      EXPECT_LE(EstimateTask(w, t, fast).duration_ns, EstimateTask(w, t, slow).duration_ns * (1 + 1e-9)) << slow.name << " " << TilingToString(w, t);
    }
  }
}

TEST(CostModel, LargeMatMulReachesTheCubePeak) {
  for (const SocSpec& s : AllSocs()) {
    Work w = MatMul(8192, 8192, 8192);
    double achieved = w.flops / Seconds(Cost(w, s));
    EXPECT_GE(achieved, 0.8 * CubePeak(s)) << s.name << ": " << achieved / CubePeak(s);
    EXPECT_LE(achieved, CubePeak(s)) << s.name;
  }
}

TEST(CostModel, LargeElementwiseReachesTheMemoryBandwidth) {
  for (const SocSpec& s : AllSocs()) {
    Work w = Elementwise(int64_t{1} << 28);  // 512 MiB per fp16 operand: far beyond any L2
    double achieved = static_cast<double>(w.in_bytes + w.out_bytes) / Seconds(Cost(w, s));
    EXPECT_GE(achieved, 0.7 * s.memory_bandwidth_gbps * 1e9) << s.name << ": " << achieved / (s.memory_bandwidth_gbps * 1e9);
  }
}

TEST(CostModel, NothingEverExceedsAPeak) {
  std::mt19937 rng(11);
  for (const SocSpec& s : AllSocs()) {
    double bw = s.memory_bandwidth_gbps * 1e9;
    for (int i = 0; i < 500; ++i) {
      Work w = i % 2 ? MatMul(1 + rng() % 20000, 1 + rng() % 8000, 1 + rng() % 8000, 1 + rng() % 4)
                     : Elementwise(1 + rng() % 200000000, 1 + rng() % 8);
      TaskCost c = Cost(w, s);
      double sec = c.exec_ns * 1e-9;
      ASSERT_GT(sec, 0);
      EXPECT_LE(w.flops / sec, CubePeak(s) * (1 + 1e-9)) << s.name;
      double dram = c.gm_read_bytes - c.l2_read_bytes;  // reads L2 did not serve
      EXPECT_LE(dram / sec, bw * (1 + 1e-9)) << s.name << " " << TilingKey(w);
      for (double pipe : {c.pipes.cube, c.pipes.vector, c.pipes.mte1, c.pipes.mte2, c.pipes.mte3, c.pipes.fixpipe})
        EXPECT_LE(pipe, c.core_cycles * (1 + 1e-9)) << s.name;
    }
  }
}

TEST(CostModel, InvalidTilingsAreRejected) {
  const SocSpec& s = *FindSoc("Ascend910B2");
  Work w = MatMul(1024, 1024, 1024);
  Tiling t = DefaultTiling(w, s);
  EXPECT_TRUE(CheckTiling(w, t, s).ok()) << TilingToString(w, t);
  Tiling big = t;
  big.base_m = 512, big.base_k = 512;
  EXPECT_FALSE(CheckTiling(w, big, s).ok());
  EXPECT_TRUE(std::isinf(EstimateTask(w, big, s).duration_ns));
  Tiling odd = t;
  odd.base_n = 24;
  EXPECT_FALSE(CheckTiling(w, odd, s).ok());
}

// CANN's static AIPP kernel gives each block whole images: at batch 1 one core converts the image, at a batch the
// cores divide it is spread over all of them, otherwise there is one block per image (waves past the core count).
// No tiling may split it otherwise, so aoe and a tune bank cannot either.
TEST(CostModel, AippSplitsIntoWholeImages) {
  const SocSpec& s = *FindSoc("Ascend310P3");
  auto aipp = [&](int64_t batch) {
    Work w = Elementwise(batch * 4 * 224 * 224, 4);
    w.in_bytes = batch * 3 * 224 * 224;  // the uint8 image in, fp16 NC1HWC0_C04 out
    w.whole_items = batch;
    return w;
  };
  EXPECT_EQ(DefaultTiling(aipp(1), s).block_dim, 1);
  EXPECT_EQ(DefaultTiling(aipp(4), s).block_dim, 4);
  EXPECT_EQ(DefaultTiling(aipp(16), s).block_dim, 8);
  EXPECT_EQ(DefaultTiling(aipp(12), s).block_dim, 12);
  EXPECT_EQ(Cost(aipp(12), s).waves, 2);
  Work plain = aipp(1);
  plain.whole_items = 0;  // the same bytes split freely go over all the cores
  EXPECT_GT(Cost(aipp(1), s).exec_ns, 2 * Cost(plain, s).exec_ns);  // less than 8x: the fixed costs stay
  Tiling spread = DefaultTiling(aipp(1), s);
  spread.block_dim = 8;
  EXPECT_FALSE(CheckTiling(aipp(1), spread, s).ok());
}

}  // namespace
}  // namespace npu

// ---- Concat without a task (GE's _no_task concat: each producer writes its slice of the output) ------------

namespace npu {
namespace {

// Producers (Relu) of fp16 NC1HWC0 feature maps with `channels` each, concatenated on `axis`.
Graph ConcatOf(std::vector<int64_t> channels, int64_t batch, int64_t axis = 1) {
  Graph g;
  int64_t total = 0;
  Node cat;
  cat.name = "cat";
  cat.op_type = "Concat";
  cat.attrs["axis"] = axis;
  for (size_t i = 0; i < channels.size(); ++i) {
    const int x = g.AddValue("x" + std::to_string(i)), v = g.AddValue("v" + std::to_string(i));
    for (int id : {x, v}) {
      g.values[id].dtype = DType::kF16;
      g.values[id].shape = {batch, channels[i], 14, 14};
      g.values[id].has_shape = true;
      g.values[id].device_format = Format::kNC1HWC0;
    }
    g.inputs.push_back(x);
    Node relu;
    relu.name = "relu" + std::to_string(i);
    relu.op_type = "Relu";
    relu.inputs = {x};
    relu.outputs = {v};
    g.values[v].producer = static_cast<int>(g.nodes.size());
    g.nodes.push_back(relu);
    cat.inputs.push_back(v);
    total += channels[i];
  }
  const int y = g.AddValue("y");
  g.values[y].dtype = DType::kF16;
  g.values[y].shape = {batch, total, 14, 14};
  g.values[y].has_shape = true;
  g.values[y].device_format = Format::kNC1HWC0;
  g.values[y].producer = static_cast<int>(g.nodes.size());
  cat.outputs = {y};
  g.nodes.push_back(cat);
  return g;
}

TaskCost ConcatCost(const Graph& g, Work* work = nullptr) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  Work w = DescribeWork(g, g.nodes.back(), Engine::kVector);
  if (work) *work = w;
  return EstimateTask(w, DefaultTiling(w, soc), soc);
}

// An RNN's time steps each need the state the step before wrote: 64 steps take 64 times one step's GEMM, not one
// GEMM 64 times as tall (which the cores would split and pipeline).
TEST(CostModel, RecurrentStepsRunOneAfterAnother) {
  const SocSpec& s = *FindSoc("Ascend310P3");
  Work step;
  step.kind = WorkKind::kCube;
  step.m = 1, step.k = 128 + 256, step.n = 4 * 256;
  step.a_bytes = step.m * step.k * 2, step.b_bytes = step.k * step.n * 2;
  step.out_bytes = step.m * step.n * 2;
  const Tiling t = DefaultTiling(step, s);
  auto exec = [&](int64_t steps) {  // the kernel's prologue once, then every step's GEMM
    Work w = step;
    w.steps = steps;
    return EstimateTask(w, t, s).exec_ns;
  };
  const double all = exec(64);
  EXPECT_NEAR(exec(64) - exec(32), 2 * (exec(32) - exec(16)), 1e-6 * all);
  EXPECT_GT(all, 50 * exec(1));
  Work tall = step;  // the same arithmetic as one GEMM: far faster, which is why the steps are kept apart
  tall.m = 64;
  tall.a_bytes *= 64, tall.out_bytes *= 64;
  EXPECT_LT(Cost(tall, s).exec_ns * 8, all);
}

TEST(ConcatInPlace, AlignedChannelsAtBatchOneCostNoTaskAndNoBytes) {
  Work w;
  const TaskCost c = ConcatCost(ConcatOf({32, 64, 16}, 1), &w);
  EXPECT_EQ(w.kind, WorkKind::kView);
  EXPECT_EQ(c.duration_ns, 0);
  EXPECT_EQ(c.gm_read_bytes + c.gm_write_bytes, 0);
}

TEST(ConcatInPlace, OtherwiseItIsACopy) {
  // C not a multiple of C0 (16 for fp16): the first input's last block would be padded inside the output
  // batch 2: each input is two blocks of the output, not one
  for (const Graph& g : {ConcatOf({24, 40}, 1), ConcatOf({32, 32}, 2), ConcatOf({32, 32}, 1, 2)}) {
    Work w;
    const TaskCost c = ConcatCost(g, &w);
    EXPECT_EQ(w.kind, WorkKind::kVector);
    EXPECT_GT(c.duration_ns, 0);
    EXPECT_GE(c.gm_read_bytes, 2.0 * 32 * 14 * 14 * 2);  // it reads its inputs and writes the output
  }
}


// ConvConcatFusionPass: at batch 16 a concat of conv outputs is still no task, as each conv writes its C slice of the
// output with a stride (StridedWrite); a concat with an input no conv writes, or an unaligned C before the last
// input, stays a copy. Switched off, the aligned one is a copy again.
TEST(ConcatInPlace, ConvOutputsAreWrittenIntoTheirSlicesAtAnyBatch) {
  auto concat_of_convs = [](int64_t first_channels, bool through_relu) {
    Builder b;
    int x = b.In("x", {16, 32, 14, 14});
    int a = b.Op("Conv", {x, b.Const("wa", Random({first_channels, 32, 1, 1}, 1))});
    if (through_relu) a = b.Op("Relu", {a});
    int c = b.Op("Conv", {x, b.Const("wb", Random({16, 32, 3, 3}, 2))}, {{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
    Graph g = b.Done(b.Op("Relu", {b.Op("Concat", {a, c}, {{"axis", int64_t{1}}})}));
    for (Value& v : g.values) {
      v.dtype = DType::kF16;
      if (!v.constant && v.has_shape && v.shape.size() == 4) v.device_format = Format::kNC1HWC0;
    }
    return g;
  };
  auto concat_work = [](const Graph& g) {
    for (const Node& n : g.nodes)
      if (n.op_type == "Concat") return DescribeWork(g, n, Engine::kVector).kind;
    return WorkKind::kAiCpu;  // no concat: never expected
  };
  Graph aligned = concat_of_convs(32, false);
  EXPECT_EQ(concat_work(aligned), WorkKind::kVector);  // batch 16: without the pass, a copy
  ASSERT_TRUE(ConvConcatFusionPass(aligned).ok());
  EXPECT_EQ(concat_work(aligned), WorkKind::kView);
  for (Graph g : {concat_of_convs(24, false), concat_of_convs(32, true)}) {
    ASSERT_TRUE(ConvConcatFusionPass(g).ok());
    EXPECT_EQ(concat_work(g), WorkKind::kVector);
  }
  Graph off = concat_of_convs(32, false);
  for (Node& n : off.nodes)
    if (n.op_type == "Concat") n.attr_list_add(kFusionOffAttr, "ConvConcatFusionPass");
  ASSERT_TRUE(ConvConcatFusionPass(off).ok());
  EXPECT_EQ(concat_work(off), WorkKind::kVector);
}

}  // namespace
}  // namespace npu

// ---- BatchMatMulV2 by 2-D weights (CANN keeps one GEMM per matrix of A; cost/work.cc FoldsBatchIntoM) ----------

namespace npu {
namespace {

// The work of MatMul(x, W) (+ a bias when `bias`), x of shape `x_shape`, W of K x n, all fp16.
Work WeightsMatMul(std::vector<int64_t> x_shape, int64_t n, bool bias) {
  Builder b;
  int x = b.In("x", x_shape);
  int mm = b.Op("MatMul", {x, b.Const("w", Random({x_shape.back(), n}, 1))});
  if (bias) mm = b.Op("Add", {mm, b.Const("b", Random({n}, 2))});
  Graph g = b.Done(mm);
  if (bias) EXPECT_TRUE(MatMulBiasAddFusionPass(g).ok());
  for (Value& v : g.values) v.dtype = DType::kF16;
  for (const Node& node : g.nodes)
    if (node.op_type == "MatMul" || node.op_type == "MatMulBias") return DescribeWork(g, node, Engine::kCube);
  ADD_FAILURE() << "no MatMul left";
  return Work{};
}

TEST(CostModel, AMatMulByWeightsKeepsOneGemmPerMatrixOfA) {
  // ConvNeXt's channels-last Linear: a 4-D A is never reshaped, so 8 x 56 matrices of 56 rows, each padded to 64.
  Work convnext = WeightsMatMul({8, 56, 56, 96}, 384, true);
  EXPECT_EQ(convnext.batch, 8 * 56);
  EXPECT_EQ(convnext.m, 56);
  EXPECT_TRUE(convnext.b_shared);
  // A 3-D A folds when a bias follows and there are >= 50 matrices of <= 32 rows, or >= 4096 of <= 64 rows.
  Work tokens = WeightsMatMul({64, 16, 96}, 384, true);
  EXPECT_EQ(tokens.batch, 1);
  EXPECT_EQ(tokens.m, 64 * 16);
  EXPECT_FALSE(tokens.b_shared);
  EXPECT_EQ(WeightsMatMul({64, 16, 96}, 384, false).batch, 64);  // no bias Add: stays batched
  EXPECT_EQ(WeightsMatMul({4096, 64, 96}, 384, false).batch, 1);
  EXPECT_EQ(WeightsMatMul({4096, 65, 96}, 384, false).batch, 4096);
  Work bert = WeightsMatMul({8, 128, 768}, 3072, true);  // BERT's FFN: 8 matrices of 128 rows
  EXPECT_EQ(bert.batch, 8);
  EXPECT_EQ(bert.m, 128);
  Work flat = WeightsMatMul({448, 96}, 384, true);  // a 2-D A is one GEMM
  EXPECT_EQ(flat.batch, 1);
  EXPECT_EQ(flat.m, 448);
}

// Each core loads the shared B for every matrix it runs unless B stays in L1: ConvNeXt's stage-3 Linear (B 1.2 MB, more
// than L1) reads B 14 times per core, the stage-1 one (B 72 KB) once.
TEST(CostModel, ASharedBLargerThanL1IsLoadedOncePerMatrix) {
  const SocSpec& s = *FindSoc("Ascend310P3");
  auto b_reads = [&](std::vector<int64_t> x_shape, int64_t n) {
    Work w = WeightsMatMul(x_shape, n, true);
    TaskCost c = Cost(w, s);
    Work none = w;  // the same GEMMs with a B of no bytes: what is left is A's reads
    none.b_bytes = 0;
    return (c.gm_read_bytes - Cost(none, s).gm_read_bytes) / static_cast<double>(w.b_bytes);
  };
  EXPECT_NEAR(b_reads({8, 14, 14, 384}, 1536), 8 * 14, 1e-6);  // 112 matrices over 8 cores, each loading all of B
  EXPECT_NEAR(b_reads({8, 56, 56, 96}, 384), 8, 1e-6);         // every core once
  // And the padding: 7-row matrices cost as 16-row ones on the cube.
  Work stage4 = WeightsMatMul({8, 7, 7, 768}, 3072, true);
  Work padded = stage4;
  padded.m = 16;
  EXPECT_DOUBLE_EQ(Cost(stage4, s).cube_fractals, Cost(padded, s).cube_fractals);
}

}  // namespace
}  // namespace npu
