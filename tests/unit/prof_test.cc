// The sliced raw-data files profiling writes and profparse streams back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "prof/prof_format.h"
#include "prof/slices.h"

namespace npu::prof {
namespace {

StepRecord Step(uint32_t iteration) {
  StepRecord r{};
  r.h.magic = kStepMagic, r.h.version = kRecordVersion;
  r.iteration = iteration, r.ticks = 1000ull * iteration;
  return r;
}

struct SliceDir {
  std::filesystem::path path = std::filesystem::temp_directory_path() / ("npukit_slices_" + std::to_string(::getpid()));
  SliceDir() { std::filesystem::create_directories(path); }
  ~SliceDir() { std::filesystem::remove_all(path); }
};

// More records than the reader buffers at once, split across slices mid-record, with garbage between two
// records and half a record at the end: every whole record comes back in order, the rest is counted.
TEST(Slices, RecordStreamResynchronisesAcrossSlicesAndRefills) {
  SliceDir dir;
  constexpr uint32_t kRecords = 20000;  // past the stream's 8192-record buffer
  constexpr uint32_t kGarbageAfter = 777;
  // The step magic with a version this reader does not know, then bytes that are no magic at all.
  const std::byte garbage[5] = {std::byte{0xA7}, std::byte{0x5A}, std::byte{2}, std::byte{0}, std::byte{1}};
  {
    SliceWriter w(dir.path.string(), "step", 1000);  // 1000 is not a multiple of the 24-byte record
    for (uint32_t i = 0; i < kRecords; ++i) {
      ASSERT_TRUE(w.Append(Step(i)).ok());
      if (i == kGarbageAfter) {
        ASSERT_TRUE(w.Append(std::span(garbage)).ok());
      }
    }
    StepRecord last = Step(kRecords);
    ASSERT_TRUE(w.Append(std::as_bytes(std::span(&last, 1)).first(sizeof last / 2)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto reader = SliceReader::Open(dir.path.string(), "step");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_TRUE(reader.value().incomplete().empty());
  RecordStream<StepRecord> steps(reader.value(), kStepMagic);
  uint32_t n = 0;
  for (StepRecord r; steps.Next(r); ++n) ASSERT_EQ(r.iteration, n);
  EXPECT_TRUE(steps.status().ok());
  EXPECT_EQ(n, kRecords);
  EXPECT_EQ(steps.garbage_bytes(), sizeof garbage);
  EXPECT_EQ(steps.trailing_bytes(), sizeof(StepRecord) / 2);
}

// A stream over one record and nothing else, the smallest buffer the reader sizes.
TEST(Slices, RecordStreamReadsASingleRecord) {
  SliceDir dir;
  {
    SliceWriter w(dir.path.string(), "step", 1 << 20);
    ASSERT_TRUE(w.Append(Step(42)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto reader = SliceReader::Open(dir.path.string(), "step");
  ASSERT_TRUE(reader.ok());
  RecordStream<StepRecord> steps(reader.value(), kStepMagic);
  StepRecord r;
  ASSERT_TRUE(steps.Next(r));
  EXPECT_EQ(r.iteration, 42u);
  EXPECT_FALSE(steps.Next(r));
  EXPECT_EQ(steps.garbage_bytes(), 0u);
  EXPECT_EQ(steps.trailing_bytes(), 0u);
}

}  // namespace
}  // namespace npu::prof
