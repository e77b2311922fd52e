// The cores of aoe, msaccucmp and profparse below their CLIs: where a job to resume is looked for, how
// file_compare lays a device-layout array back, and which flag a profile folder's error names.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "aoe_report.h"
#include "base/file_io.h"
#include "commands.h"
#include "compile/compile.h"
#include "dump/npy.h"
#include "fusion_rule.h"
#include "msprof_tables.h"
#include "om/ge_json.h"
#include "om/om_model.h"
#include "raw_profile.h"

namespace npu {
namespace {

namespace fs = std::filesystem;

fs::path FreshDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("npukit_tools_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// aoe --reload on a first run: the missing job is found out by asking, and asking writes nothing.
TEST(AoeReload, NoJobToResumeIsAnErrorThatWritesNothing) {
  fs::path work = FreshDir("aoe");
  ::setenv("ASCEND_WORK_PATH", work.c_str(), 1);
  auto job = aoe::FindJob("", "resnet18");
  ::unsetenv("ASCEND_WORK_PATH");
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), "EG0003");
  EXPECT_NE(job.status().message().find("no unfinished subgraph tuning job of resnet18"), std::string::npos);
  EXPECT_TRUE(fs::is_empty(work));
  fs::remove_all(work);
}

// A 1x1x16x16x16 NC1HWC0 array (a dump saved as .npy) against its 1x16x16x16 NCHW golden: the same tensor.
TEST(FileCompare, LaysAnNc1hwc0ArrayBackAgainstItsNchwGolden) {
  fs::path dir = FreshDir("file_compare");
  const int64_t c = 16, h = 4, w = 3;
  Tensor nchw = Tensor::Zeros(DType::kF32, {1, c, h, w});
  Tensor blocked = Tensor::Zeros(DType::kF32, {1, 1, h, w, c});
  float* a = nchw.mutable_data<float>();
  float* b = blocked.mutable_data<float>();
  for (int64_t ch = 0; ch < c; ++ch)
    for (int64_t i = 0; i < h * w; ++i) a[ch * h * w + i] = b[i * c + ch] = static_cast<float>(ch * 100 + i);
  ASSERT_TRUE(WriteNpy((dir / "npu.npy").string(), blocked).ok());
  ASSERT_TRUE(WriteNpy((dir / "golden.npy").string(), nchw).ok());
  std::ostringstream out;
  EXPECT_EQ(cmp::RunFileCompare((dir / "npu.npy").string(), (dir / "golden.npy").string(), dir.string(), out), 0) << out.str();
  EXPECT_NE(out.str().find("is NC1HWC0: compared as NCHW [1,16,4,3]"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("CosineSimilarity: 1"), std::string::npos) << out.str();
  // Shapes that are not one tensor in two layouts: both shapes named.
  ASSERT_TRUE(WriteNpy((dir / "other.npy").string(), Tensor::Zeros(DType::kF32, {1, 2, h * w, c})).ok());
  std::ostringstream refused;
  EXPECT_NE(cmp::RunFileCompare((dir / "other.npy").string(), (dir / "golden.npy").string(), dir.string(), refused), 0);
  EXPECT_NE(refused.str().find("-m [1,2,12,16], -g [1,16,4,3]"), std::string::npos) << refused.str();
  fs::remove_all(dir);
}

// profparse diff A B: a missing folder is named as diff's A or B, not as --output (a flag diff does not take).
TEST(ProfparseDiff, AMissingProfileNamesItsPlaceInTheCommand) {
  auto dirs = profparse::FindProfDirs("/nonexistent/prof_b", "diff B");
  ASSERT_FALSE(dirs.ok());
  EXPECT_EQ(dirs.status().param(), "diff B");
  EXPECT_EQ(dirs.status().message().find("--output"), std::string::npos) << dirs.status().message();
}

// msaccucmp -f reads what atc --mode=1 writes: the bundled tinynet compiled for Ascend310P3 and saved, its
// ModelDef as ATC prints it, read back as a fusion rule. Every op with a task is there in order with its inputs
// (Data and Const are the graph's inputs and weights, NetOutput its outputs); the stem's conv carries the
// framework ops fused into it (Conv, BatchNormalization folded, Relu). A file that is not JSON is EC0012 naming -f.
TEST(FusionRule, ReadsTheJsonAtcWrites) {
  CompileFlags f;
  f.framework = "5", f.model = std::string(NPUKIT_SOURCE_DIR) + "/examples/tinynet.onnx", f.soc_version = "Ascend310P3";
  auto config = MakeCompileConfig(f, CompileGoal::kConvert);
  ASSERT_TRUE(config.ok()) << config.status().message();
  auto m = Compile(config.value());
  ASSERT_TRUE(m.ok()) << m.status().message();
  fs::path dir = FreshDir("fusion_rule");
  ASSERT_TRUE(SaveOm((dir / "tiny.om").string(), m.value()).ok());
  auto j = OmModelDefJson((dir / "tiny.om").string());
  ASSERT_TRUE(j.ok()) << j.status().message();
  const std::string text = j.value().dump(2);
  ASSERT_TRUE(WriteFileAtomic((dir / "tiny.json").string(), std::as_bytes(std::span(text.data(), text.size()))).ok());
  auto rule = cmp::ReadFusionRule((dir / "tiny.json").string(), "-f");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  auto loaded = LoadOm((dir / "tiny.om").string());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  const Graph& g = loaded.value().graph;
  std::vector<const Node*> tasks;  // the ops the .om lists (not a shape-only view, which the .om leaves out)
  for (const Node& n : g.nodes)
    if (!n.has_attr(kRemovedViewAttr)) tasks.push_back(&n);
  ASSERT_EQ(rule.value().ops.size(), tasks.size());
  for (size_t k = 0; k < tasks.size(); ++k) {
    const cmp::FusionOp& op = rule.value().ops[k];
    EXPECT_EQ(op.name, tasks[k]->name);
    EXPECT_EQ(op.inputs.size(), tasks[k]->inputs.size()) << op.name;
    EXPECT_EQ(op.original_names, tasks[k]->original_names) << op.name;
    EXPECT_EQ(rule.value().by_name.at(op.name), k);
    EXPECT_FALSE(op.integer) << "a float model has no integer ops";
  }
  auto stem = std::find_if(rule.value().ops.begin(), rule.value().ops.end(), [](const cmp::FusionOp& o) { return o.name == "/stem/stem.0/Conv"; });
  ASSERT_NE(stem, rule.value().ops.end());
  EXPECT_EQ(stem->original_names.back(), "/stem/stem.2/Relu");
  const std::string junk = "{\"graph\": [";
  ASSERT_TRUE(WriteFileAtomic((dir / "junk.json").string(), std::as_bytes(std::span(junk.data(), junk.size()))).ok());
  auto bad = cmp::ReadFusionRule((dir / "junk.json").string(), "-f");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), "EC0012");
  EXPECT_EQ(bad.status().param(), "-f");
  fs::remove_all(dir);
}

// msaccucmp -f reads real ATC's --mode=1 JSON too (tests/data/om_json: an AMCT-quantized TF ResNet-50): its
// Data op is the graph input, its 161 Consts are weights, NetOutput names the output (and a control edge into it
// carries no tensor), so the rule lists the 66 ops that have tasks, with their inputs resolved to those values
// and the quantize ops marked as integer ones.
TEST(FusionRule, ReadsRealAtcJson) {
  auto rule = cmp::ReadFusionRule(std::string(NPUKIT_SOURCE_DIR) + "/tests/data/om_json/amct_tf_resnet50_v1_quantized.json", "-f");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  const auto& ops = rule.value().ops;
  ASSERT_EQ(ops.size(), 66u);
  EXPECT_EQ(ops.front().type, "Cast");
  EXPECT_EQ(ops.front().inputs, std::vector<std::string>{"input"});
  auto conv1 = std::find_if(ops.begin(), ops.end(), [](const cmp::FusionOp& o) { return o.type == "Conv2D"; });
  ASSERT_NE(conv1, ops.end());
  EXPECT_EQ(conv1->inputs, (std::vector<std::string>{"trans_TransData_1:0", "dynamic_const_9910_433", "dynamic_const_9910_378"}));
  EXPECT_NE(std::find(conv1->original_names.begin(), conv1->original_names.end(), "resnet_v1_50/conv1/Relu"), conv1->original_names.end());
  EXPECT_TRUE(std::any_of(ops.begin(), ops.end(), [](const cmp::FusionOp& o) { return o.integer; }));
}

// Numbers as msprof prints them: metrics to three decimals with trailing zeros dropped but one kept; op_statistic
// drops a bare point too.
TEST(MsprofTables, NumbersAsMsprofPrintsThem) {
  auto metric = [](double v) {
    std::string s;
    profparse::AppendMetric(s, v);
    return s;
  };
  auto trimmed = [](double v) {
    std::string s;
    profparse::AppendTrimmed(s, v);
    return s;
  };
  EXPECT_EQ(metric(0.33), "0.33");
  EXPECT_EQ(metric(7.285), "7.285");
  EXPECT_EQ(metric(0), "0.0");
  EXPECT_EQ(metric(-0.0001), "0.0");
  EXPECT_EQ(metric(-2.5), "-2.5");
  EXPECT_EQ(metric(26227), "26227.0");
  EXPECT_EQ(metric(1e17), "100000000000000000.000");  // past int64's exact range: printf's digits
  EXPECT_EQ(trimmed(100), "100");
  EXPECT_EQ(trimmed(7.84), "7.84");
  EXPECT_EQ(trimmed(18.8841), "18.884");
}

}  // namespace
}  // namespace npu
