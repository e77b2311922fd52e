// The cores of aoe, msaccucmp and profparse below their CLIs: where a job to resume is looked for, how
// file_compare lays a device-layout array back, and which flag a profile folder's error names.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "aoe_report.h"
#include "commands.h"
#include "dump/npy.h"
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

}  // namespace
}  // namespace npu
