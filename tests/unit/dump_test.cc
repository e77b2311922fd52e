// The dump and .npy codecs and the comparison metrics: the files msame writes and msaccucmp reads.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "compare/metrics.h"
#include "dump/dump_file.h"
#include "dump/npy.h"
#include "test_util.h"

namespace npu {
namespace {

std::string Temp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

TEST(DumpFile, WritesAndReadsBackEveryTensor) {
  toolkit::dump::DumpData h;
  h.set_version("2.0");
  h.set_op_name("conv");
  const std::vector<float> in = {1, 2, 3, 4};
  const std::vector<uint16_t> out = {0x3c00, 0x4000};  // fp16 1, 2
  auto* i = h.add_input();
  i->set_data_type(1), i->set_format(2), i->mutable_shape()->add_dim(4), i->set_size(16);
  auto* o = h.add_output();
  o->set_data_type(2), o->set_format(2), o->mutable_shape()->add_dim(2), o->set_size(4);
  o->mutable_original_op()->set_name("Conv_0");
  std::vector<std::span<const std::byte>> payloads = {std::as_bytes(std::span(in)), std::as_bytes(std::span(out))};
  ASSERT_TRUE(WriteDumpFile(Temp("conv.dump"), h, payloads).ok());
  auto f = ReadDumpFile(Temp("conv.dump"));
  ASSERT_TRUE(f.ok()) << f.status().message();
  ASSERT_EQ(f.value().inputs.size(), 1u);
  ASSERT_EQ(f.value().outputs.size(), 1u);
  EXPECT_EQ(f.value().op_name, "conv");
  EXPECT_EQ(f.value().outputs[0].original_name, "Conv_0");
  EXPECT_EQ(0, std::memcmp(f.value().inputs[0].data.data(), in.data(), 16));
  EXPECT_TRUE(f.value().outputs[0].problem.empty());
}

TEST(DumpFile, RefusesHeadersThatLie) {
  toolkit::dump::DumpData h;
  auto* o = h.add_output();
  o->set_data_type(1), o->mutable_shape()->add_dim(1000), o->set_size(4000);
  const std::vector<float> one = {1};
  std::vector<std::span<const std::byte>> payloads = {std::as_bytes(std::span(one))};
  EXPECT_FALSE(WriteDumpFile(Temp("lie.dump"), h, payloads).ok()) << "the writer checks sizes too";
  std::ofstream(Temp("short.dump"), std::ios::binary) << std::string("\xff\xff\xff\xff\0\0\0\0", 8);
  auto r = ReadDumpFile(Temp("short.dump"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), "EC0011");
}

TEST(Npy, RoundTripsAndRefusesImpossibleShapes) {
  Tensor t = Random({2, 3}, 7);
  ASSERT_TRUE(WriteNpy(Temp("t.npy"), t).ok());
  auto back = ReadNpy(Temp("t.npy"));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back.value().shape(), t.shape());
  EXPECT_EQ(0, std::memcmp(back.value().raw(), t.raw(), t.nbytes()));
  std::string header = NpyHeader("<f4", Shape{int64_t{1} << 62});  // 2**62 * 4 bytes wraps to 0
  std::ofstream(Temp("wrap.npy"), std::ios::binary) << header;
  auto r = ReadNpy(Temp("wrap.npy"));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().reason().find("more bytes than any file"), std::string::npos) << r.status().message();
  EXPECT_FALSE(ByteSize({-1, 4}, 4)) << "negative dims";
  EXPECT_EQ(ByteSize({2, 3}, 8), 48u);
}

TEST(Metrics, FollowMsaccucmpsDefinitions) {
  const std::vector<float> x = {1, 2, 3, 4}, y = {1, 2, 3, 5}, zero = {0, 0, 0, 0};
  const GeType* f32 = FindGeType(1);
  auto run = [&](const std::vector<float>& a, const std::vector<float>& b, Metric m) {
    TensorData ta{f32, reinterpret_cast<const std::byte*>(a.data()), a.size()}, tb{f32, reinterpret_cast<const std::byte*>(b.data()), b.size()};
    return ComputeMetrics(ta, tb, std::vector<Metric>{m}).value[static_cast<int>(m)];
  };
  EXPECT_NEAR(run(x, x, Metric::kCosine), 1.0, 1e-15);
  EXPECT_NEAR(run(x, y, Metric::kCosine), 34.0 / std::sqrt(30.0 * 39.0), 1e-12);
  EXPECT_DOUBLE_EQ(run(x, y, Metric::kMaxAbs), 1.0);
  EXPECT_DOUBLE_EQ(run(x, y, Metric::kMeanAbs), 0.25);
  EXPECT_NEAR(run(x, y, Metric::kMaxRel), 0.2, 1e-12);
  EXPECT_NEAR(run(x, y, Metric::kRelEuclid), std::sqrt(1.0 / 39.0), 1e-12);
  EXPECT_EQ(run(zero, zero, Metric::kCosine), 1.0) << "two all-zero tensors agree";
  EXPECT_TRUE(std::isnan(run(x, zero, Metric::kCosine))) << "one all-zero side is undefined";
  EXPECT_EQ(run(zero, zero, Metric::kKL), 0.0) << "an all-zero pair has no divergence";
}

}  // namespace
}  // namespace npu
