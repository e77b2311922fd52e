// aoe's search and tune bank, below the CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>

#include "sim/schedule.h"
#include "ir/ascend_types.h"
#include "lower/lower.h"
#include "passes/fusion.h"
#include "test_util.h"
#include "tune/bank.h"
#include "tune/search.h"
#include "tune/subgraph.h"
#include "tune/subgraph_search.h"

namespace npu {
namespace {

Work Gemm(int64_t m, int64_t k, int64_t n, int64_t batch = 1) {
  Work w;
  w.kind = WorkKind::kCube;
  w.batch = batch, w.m = m, w.k = k, w.n = n;
  w.a_bytes = batch * m * k * 2, w.b_bytes = batch * k * n * 2, w.in_bytes = w.a_bytes + w.b_bytes, w.out_bytes = batch * m * n * 2;
  return w;
}

TEST(Search, GuidedLandsNearTheExhaustiveOptimumOnAFractionOfTheSpace) {
  std::mt19937 rng(3);
  for (const char* name : {"Ascend310P3", "Ascend910B2"}) {
    const SocSpec& soc = *FindSoc(name);
    for (int i = 0; i < 3; ++i) {  // each exhaustive search is ~1 M evaluations
      Work w = Gemm(16 + rng() % 4000, 16 + rng() % 4000, 16 + rng() % 2000, 1 + rng() % 3);
      Tiling start = DefaultTiling(w, soc);
      SearchResult g = SearchTiling(w, soc, {}, SearchStrategy::kGuided, start);
      SearchResult x = SearchTiling(w, soc, {}, SearchStrategy::kExhaustive, start);
      EXPECT_LE(x.best_ns, g.best_ns * (1 + 1e-9)) << TilingKey(w);
      EXPECT_LE(g.best_ns, x.best_ns * 1.03) << name << " " << TilingKey(w);
      EXPECT_LE(g.best_ns, EstimateTask(w, start, soc).duration_ns * (1 + 1e-9));  // never worse than the built-in
      EXPECT_TRUE(CheckTiling(w, g.best, soc).ok());
      EXPECT_EQ(g.space_size, x.space_size);
      if (g.space_size > 1000) {
        EXPECT_LE(g.evaluations, g.space_size / 20) << TilingKey(w);
      }
    }
  }
}

class BankTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("npukit_bank_" + std::to_string(::getpid()));
    std::filesystem::remove_all(root_);
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(BankTest, SavesLoadsMergesConcurrentWritersAndNamesBadLines) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  Work w = Gemm(512, 512, 512);
  Tiling t = DefaultTiling(w, soc);
  t.step_m = 1;
  auto a = TuneBank::Open(root_, soc);
  auto b = TuneBank::Open(root_, soc);  // a second process, opened before `a` saves
  ASSERT_TRUE(a.ok() && b.ok());
  a.value().Put({"MatMulV2", TilingKey(w), t, 10, 8});
  b.value().Put({"MatMulV2", "cube:other", t, 5, 4});
  ASSERT_TRUE(a.value().Save().ok());
  ASSERT_TRUE(b.value().Save().ok());  // merges a's record instead of dropping it
  auto c = TuneBank::Open(root_, soc);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value().size(), 2u);
  ASSERT_TRUE(c.value().Find(TilingKey(w)));
  EXPECT_EQ(c.value().Find(TilingKey(w))->tiling, t);
  EXPECT_FALSE(TuneBank::Open(root_, *FindSoc("Ascend910B2")).value().Find(TilingKey(w)));  // per SoC
  std::string file = c.value().dir() + "/Ascend310P3_8_AiCore_MatMulV2_runtime_kb.json";
  ASSERT_TRUE(std::filesystem::exists(file));
  {
    std::ofstream out(file, std::ios::app);
    out << "{\"version\": 999, \"op\": \"MatMulV2\", \"info_dict\": {\"key\": \"x\"}, \"knowledge\": {}}\n";
  }
  auto d = TuneBank::Open(root_, soc);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.value().skipped(), 1u);  // another cost-model version: skipped, counted
  {
    std::ofstream out(file, std::ios::app);
    out << "{broken\n";
  }
  auto e = TuneBank::Open(root_, soc);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("runtime_kb.json:4"), std::string::npos) << e.status().message();
  EXPECT_NE(e.status().message().find("EG0012"), std::string::npos);
}


// A chain of `blocks` residual blocks x + relu(matmul(x, W_i)) with its weights; `dim` sets the weight size.
// `rows` x `dim` activations through `blocks` residual MatMul + Relu blocks of `dim` x `dim` weights.
Graph ResidualChain(int blocks, int64_t dim, int64_t rows = 0) {
  Builder b;
  int x = b.In("x", {rows > 0 ? rows : dim, dim});
  for (int i = 0; i < blocks; ++i) {
    int w = b.Const("w" + std::to_string(i), Random({dim, dim}, i));
    x = b.Op("Add", {x, b.Op("Relu", {b.Op("MatMul", {x, w})})});
  }
  return b.Done(x);
}

TEST(Subgraph, PartitionCoversEveryOpOnceAndKeysRepeatedStructureAlike) {
  Graph g = ResidualChain(12, 64);
  auto parts = PartitionSubgraphs(g, "ctx");
  std::vector<int> seen;
  for (const auto& s : parts) {
    EXPECT_TRUE(s.nodes.size() >= kMinSubgraphOps || &s == &parts.back());
    seen.insert(seen.end(), s.nodes.begin(), s.nodes.end());
  }
  std::vector<int> all(g.nodes.size());
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(seen, all);
  ASSERT_GE(parts.size(), 3u);
  EXPECT_EQ(parts[0].key, parts[1].key);  // 4 identical blocks each
  EXPECT_NE(parts[0].key, PartitionSubgraphs(g, "other soc")[0].key);
  EXPECT_NE(parts[0].key, PartitionSubgraphs(ResidualChain(12, 32), "ctx")[0].key);  // other shapes
}

TEST(Subgraph, PlanTextRoundTripsAndBadTextIsAnError) {
  SubgraphPlan p;
  p.fusion_off = {"TbeConvElemwiseFusionPass", "AABiasaddConvFusion"};
  p.pin_weights = true;
  SubgraphPlan streams{.parallel_branches = true, .core_split = 4}, one{.single_stream = true};
  for (const SubgraphPlan& q : {SubgraphPlan{}, p, streams, one}) {
    auto back = SubgraphPlan::Parse(q.ToString());
    ASSERT_TRUE(back.ok()) << q.ToString();
    EXPECT_EQ(back.value(), q);
  }
  for (const char* bad : {"l2=[warm]", "fusion_off=[", "x=[a]", "fusion_off=[]", "core_split=[4]", "streams=[parallel_branches] core_split=[x]",
                          "streams=[parallel_branches,single_stream]"}) EXPECT_FALSE(SubgraphPlan::Parse(bad).ok()) << bad;
}

TEST(Subgraph, FusionOffAttributeKeepsThatNodeUnfused) {
  Graph g = ResidualChain(2, 64);
  MapAscendOpTypes(g);
  Graph off = g;
  auto parts = PartitionSubgraphs(off, "ctx");
  SubgraphPlan plan;
  plan.fusion_off = {"TbeBatchMatmulElementWiseFusionPass"};
  for (const auto& s : parts) ApplySubgraphPlan(off, s, plan);
  ASSERT_TRUE(MatMulElemwiseUbFusionPass(g).ok());
  ASSERT_TRUE(MatMulElemwiseUbFusionPass(off).ok());
  EXPECT_LT(g.nodes.size(), off.nodes.size());
  EXPECT_TRUE(std::any_of(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.has_attr(kFusionPassesAttr); }));
}

// Weights larger than L2 in all, read once per iteration: LRU keeps none of them for the next iteration;
// pinning keeps those that fit half of L2, and the iteration gets faster for it, as the activations are small
// enough to stream through the other half (large ones would be written back to DRAM more often: pinning has a cost).
TEST(Subgraph, PinnedWeightsHitInL2AndBypassedOutputsDoNot) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  Graph g = ResidualChain(12, 1024, 64);  // 12 x 2 MiB of fp16 weights > 16 MiB of L2; 128 KiB activations
  MapAscendOpTypes(g);
  for (Value& v : g.values) v.dtype = DType::kF16;  // on the cube (fp32 would run on AI CPU); costs read dtypes only
  auto tasks = LowerToTasks(g, &soc);
  IterationTiming lru = ScheduleIteration(g, tasks, soc);
  for (const auto& t : lru.tasks) EXPECT_EQ(t.l2.weight_hit, 0);
  Graph pinned = g;
  for (const auto& s : PartitionSubgraphs(pinned, "ctx")) ApplySubgraphPlan(pinned, s, {.pin_weights = true});
  IterationTiming pin = ScheduleIteration(pinned, tasks, soc);
  EXPECT_LE(pin.pinned_l2_bytes, soc.l2 * kPinnableL2Fraction);
  EXPECT_GT(pin.pinned_l2_bytes, 0);
  int hits = 0;
  for (const auto& t : pin.tasks) hits += t.l2.weight_hit > 0;
  EXPECT_EQ(hits, static_cast<int>(pin.pinned_l2_bytes / (1024 * 1024 * 2)));
  EXPECT_LT(pin.total_ns, lru.total_ns);
  Graph bypass = g;
  for (const auto& s : PartitionSubgraphs(bypass, "ctx")) ApplySubgraphPlan(bypass, s, {.bypass_outputs = true});
  IterationTiming by = ScheduleIteration(bypass, tasks, soc);
  for (size_t k = 0; k < tasks.size(); ++k) {
    EXPECT_LE(by.tasks[k].l2.input_hit, lru.tasks[k].l2.input_hit);
    // What a bypassed op wrote misses when read; only what a read brought into L2 (Add's x) can hit.
    if (tasks[k].kernel_name != "Add") {
      EXPECT_EQ(by.tasks[k].l2.input_hit, 0) << tasks[k].kernel_name;
    }
  }
}

// L2 is write-back: a tensor a task wrote is dirty there, and pushing it out costs its bytes on DRAM. A chain of
// 6 MiB tensors through 16 MiB of L2 pushes out every tensor it writes, once per iteration, and pays for it; a
// chain of small ones rewrites its tensors in place and pays nothing.
TEST(L2, DirtyTensorsPushedOutAreWrittenBackOnTheDramOfTheTaskThatPushedThem) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  auto relu_chain = [](int64_t rows) {
    Builder b;
    int x = b.In("x", {rows, 1024});
    for (int i = 0; i < 4; ++i) x = b.Op("Relu", {x});
    Graph g = b.Done(x);
    MapAscendOpTypes(g);
    for (Value& v : g.values) v.dtype = DType::kF16;
    return g;
  };
  auto written_back = [](const IterationTiming& it) {
    double sum = 0;
    for (const auto& t : it.tasks) sum += t.l2.writeback_bytes;
    return sum;
  };
  Graph big = relu_chain(3072);  // 6 MiB per tensor
  auto tasks = LowerToTasks(big, &soc);
  IterationTiming it = ScheduleIteration(big, tasks, soc);
  EXPECT_DOUBLE_EQ(written_back(it), 4 * 3072 * 1024 * 2.0);
  Graph small = relu_chain(256);  // 512 KiB per tensor: all five stay
  IterationTiming calm = ScheduleIteration(small, LowerToTasks(small, &soc), soc);
  EXPECT_EQ(written_back(calm), 0);
  // The write-back shares the task's DRAM: the same task without it is faster.
  for (const auto& t : it.tasks) {
    if (t.l2.writeback_bytes == 0) continue;
    L2State clean = t.l2;
    clean.writeback_bytes = 0;
    EXPECT_GT(t.cost.exec_ns, EstimateTask(t.work, tasks[&t - it.tasks.data()].tiling, soc, clean).exec_ns);
  }
}

// x feeds two independent matmul chains that join in an Add: with parallel branches they take streams 0 and 1
// and overlap; a core split tiles each for its share; the join waits for both through an event.
TEST(Subgraph, ParallelBranchesOverlapOnTheirStreamsAndShareTheCores) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  Builder b;
  int x = b.In("x", {256, 256});
  int left = b.Op("Relu", {b.Op("MatMul", {x, b.Const("w0", Random({256, 256}, 0))})});
  int right = b.Op("Relu", {b.Op("MatMul", {x, b.Const("w1", Random({256, 256}, 1))})});
  Graph g = b.Done(b.Op("Add", {left, right}));
  MapAscendOpTypes(g);
  for (Value& v : g.values) v.dtype = DType::kF16;
  auto one = LowerToTasks(g, &soc);
  IterationTiming serial = ScheduleIteration(g, one, soc);
  Graph par = g;
  auto parts = PartitionSubgraphs(par, "ctx");
  ASSERT_EQ(parts.size(), 1u);
  ApplySubgraphPlan(par, parts[0], {.parallel_branches = true, .core_split = soc.ai_cores / 2});
  auto two = LowerToTasks(par, &soc);
  EXPECT_EQ(StreamCount(two), 2u);
  EXPECT_EQ(EventCount(par, two), 1u);  // the right Relu's output, waited for by the Add on stream 0
  std::vector<double> start(two.size()), end(two.size());
  IterationTiming overlap = ScheduleIteration(par, two, soc);
  for (size_t k = 0; k < two.size(); ++k) {
    start[k] = overlap.tasks[k].start_ns, end[k] = start[k] + overlap.tasks[k].duration_ns;
    if (two[k].kind == WorkKind::kCube) {
      EXPECT_LE(two[k].tiling.block_dim, soc.ai_cores / 2);
    }
  }
  EXPECT_EQ(two[0].stream_id, 0u);  // left MatMul
  EXPECT_EQ(two[2].stream_id, 1u);  // right MatMul
  EXPECT_LT(start[2], end[0]);      // the branches overlap
  EXPECT_GE(start[4], std::max(end[1], end[3]) + soc.task_launch_ns - 1e-9);  // the join waits for both
  EXPECT_LT(overlap.total_ns, serial.total_ns);
}

// atc's default stream allocation: two branches small enough to share the cores run side by side. The first keeps
// the fork's stream; the second starts after an event and the join waits for it through another, so the join starts
// max(a, e + b + e) after the fork instead of a + b (--enable_single_stream=true: no allocation, one stream).
TEST(Streams, IndependentBranchesTakeTheLongerOneNotTheSum) {
  const SocSpec& soc = *FindSoc("Ascend310P3");
  Builder b;
  int x = b.In("x", {64, 64});
  int fork = b.Op("Relu", {x});
  int a = b.Op("Sigmoid", {b.Op("Relu", {fork})});  // two tasks
  int c = b.Op("Tanh", {fork});                    // one task
  Graph g = b.Done(b.Op("Add", {a, c}));
  MapAscendOpTypes(g);
  for (Value& v : g.values) v.dtype = DType::kF16;
  auto span_of = [&](const Graph& graph, bool parallel) {
    Graph h = graph;
    if (parallel) AllocateParallelStreams(h);
    auto tasks = LowerToTasks(h, &soc);
    IterationTiming t = ScheduleIteration(h, tasks, soc);
    for (const Task& task : tasks) EXPECT_LT(task.tiling.block_dim, soc.ai_cores / 2);  // they fit side by side
    const double fork_end = t.tasks[0].start_ns + t.tasks[0].duration_ns;
    const double a_ns = t.tasks[1].duration_ns + t.tasks[2].duration_ns, c_ns = t.tasks[3].duration_ns;
    return std::tuple{t.tasks[4].start_ns - fork_end, a_ns, c_ns, StreamCount(tasks), EventCount(h, tasks)};
  };
  auto [serial, a1, c1, serial_streams, serial_events] = span_of(g, false);
  EXPECT_EQ(serial_streams, 1u);
  EXPECT_EQ(serial_events, 0u);
  EXPECT_NEAR(serial, a1 + c1, 1e-6);
  Graph kept = g;  // aoe's "one stream" decision: the default allocation leaves those ops alone
  for (Node& n : kept.nodes) n.attr_list_add(kStreamPolicyAttr, kSingleStream);
  auto [kept_span, a3, c3, kept_streams, kept_events] = span_of(kept, true);
  EXPECT_EQ(kept_streams, 1u);
  EXPECT_NEAR(kept_span, a3 + c3, 1e-6);
  auto [parallel, a2, c2, streams, events] = span_of(g, true);
  EXPECT_EQ(streams, 2u);
  EXPECT_EQ(events, 2u);  // into the side branch, and back to the join
  const double event = soc.task_launch_ns;
  EXPECT_NEAR(parallel, std::max(a2, event + c2 + event), 1e-6);
  EXPECT_LT(parallel, serial);
}

TEST_F(BankTest, SubgraphBankKeepsOtherWritersRecordsAndNamesBadLines) {
  std::filesystem::create_directories(root_);
  std::string path = (root_ / "subgraph.json").string();
  auto a = SubgraphBank::Open(path), b = SubgraphBank::Open(path);
  ASSERT_TRUE(a.ok() && b.ok());
  a.value().Put({"k1", "ctx", "first", {.pin_weights = true}, 2.0, 1.5});
  b.value().Put({"k2", "ctx", "second", {}, 2.0, 2.0});
  ASSERT_TRUE(a.value().Save().ok());
  ASSERT_TRUE(b.value().Save().ok());
  auto c = SubgraphBank::Open(path);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.value().size(), 2u);
  EXPECT_TRUE(c.value().Find("k1")->plan.pin_weights);
  std::ofstream(path, std::ios::app) << "{\"key\": 1}\n";
  auto d = SubgraphBank::Open(path);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), "EG0012");
  EXPECT_NE(d.status().message().find("subgraph.json:3"), std::string::npos);
}

// The subgraph search on a cost surface of its own: switching pass B off saves 10, pinning weights 5,
// bypassing outputs costs 3, and splitting half the cores to the side branches saves 7. Both strategies find
// that point; coordinate descent with fewer evaluations than the space holds, exhaustive with all of them.
TEST(SubgraphSearch, FindsTheCheapestPlanOnAKnownSurface) {
  SubgraphChoices c;
  c.passes = {"A", "B"};
  c.cores = 8;
  ASSERT_GT(c.space(), kExhaustiveSubgraphPoints);  // the default strategy is coordinate descent
  int calls = 0;
  PlanCost cost = [&](const std::vector<SubgraphPlan>& plans) -> Result<double> {
    ++calls;
    const SubgraphPlan& p = plans[1];
    return 100.0 - (p.fusion_off.count("B") ? 10 : 0) - (p.pin_weights ? 5 : 0) + (p.bypass_outputs ? 3 : 0) -
           (p.core_split == 4 ? 7 : 0);
  };
  std::vector<SubgraphPlan> plans(2);
  for (bool exhaustive : {false, true}) {
    calls = 0;
    auto r = SearchSubgraph(cost, plans, 1, c, 100.0, exhaustive);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_DOUBLE_EQ(r.value().best_ns, 78.0);
    EXPECT_EQ(r.value().best.fusion_off, std::set<std::string>{"B"});
    EXPECT_TRUE(r.value().best.pin_weights);
    EXPECT_FALSE(r.value().best.bypass_outputs);
    EXPECT_EQ(r.value().best.core_split, 4);
    EXPECT_EQ(r.value().evaluations, static_cast<uint64_t>(calls));
    if (exhaustive) EXPECT_EQ(r.value().evaluations + 1, r.value().space);
    else EXPECT_LT(r.value().evaluations, r.value().space / 2);
  }
  // A failing cost (a compile error) ends the search with that error.
  PlanCost failing = [](const std::vector<SubgraphPlan>&) -> Result<double> { return Status::Error("E19999", "x", "", "boom"); };
  EXPECT_FALSE(SearchSubgraph(failing, plans, 1, c, 100.0, false).ok());
}

}  // namespace
}  // namespace npu
