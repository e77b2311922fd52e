// aoe's search and tune bank, below the CLI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "tune/bank.h"
#include "tune/search.h"

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
  EXPECT_NE(e.status().message().find("EG0011"), std::string::npos);
}

}  // namespace
}  // namespace npu
