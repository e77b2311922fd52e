// The sliced raw-data files profiling writes and profparse streams back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "prof/hwts_log.h"
#include "prof/msprof_raw.h"
#include "prof/slices.h"

namespace npu::prof {
namespace {

// A host record (msprof's MsprofApi): magic, a known level, then the call.
raw::ApiRecord Call(uint32_t n) {
  return raw::ApiRecord{raw::kMagic, static_cast<uint16_t>(raw::Level::kAcl), 0, 1, 0, 1000ull * n, 1000ull * n + 1, n};
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
  // The host magic with a level msprof does not define, then bytes that are no magic at all.
  const std::byte garbage[5] = {std::byte{0x5A}, std::byte{0x5A}, std::byte{1}, std::byte{0}, std::byte{1}};
  {
    SliceWriter w(dir.path.string(), "api", 1000);  // 1000 is not a multiple of the 40-byte record
    for (uint32_t i = 0; i < kRecords; ++i) {
      ASSERT_TRUE(w.Append(Call(i)).ok());
      if (i == kGarbageAfter) {
        ASSERT_TRUE(w.Append(std::span(garbage)).ok());
      }
    }
    raw::ApiRecord last = Call(kRecords);
    ASSERT_TRUE(w.Append(std::as_bytes(std::span(&last, 1)).first(sizeof last / 2)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto reader = SliceReader::Open(dir.path.string(), "api");
  ASSERT_TRUE(reader.ok()) << reader.status().message();
  EXPECT_TRUE(reader.value().incomplete().empty());
  RecordStream<raw::ApiRecord> calls(reader.value(), raw::IsHostRecord);
  uint32_t n = 0;
  for (raw::ApiRecord r; calls.Next(r); ++n) ASSERT_EQ(r.item_id, n);
  EXPECT_TRUE(calls.status().ok());
  EXPECT_EQ(n, kRecords);
  EXPECT_EQ(calls.garbage_bytes(), sizeof garbage);
  EXPECT_EQ(calls.trailing_bytes(), sizeof(raw::ApiRecord) / 2);
}

// A stream over one record and nothing else, the smallest buffer the reader sizes.
TEST(Slices, RecordStreamReadsASingleRecord) {
  SliceDir dir;
  {
    SliceWriter w(dir.path.string(), "api", 1 << 20);
    ASSERT_TRUE(w.Append(Call(42)).ok());
    ASSERT_TRUE(w.Finish().ok());
  }
  auto reader = SliceReader::Open(dir.path.string(), "api");
  ASSERT_TRUE(reader.ok());
  RecordStream<raw::ApiRecord> calls(reader.value(), raw::IsHostRecord);
  raw::ApiRecord r;
  ASSERT_TRUE(calls.Next(r));
  EXPECT_EQ(r.item_id, 42u);
  EXPECT_FALSE(calls.Next(r));
  EXPECT_EQ(calls.garbage_bytes(), 0u);
  EXPECT_EQ(calls.trailing_bytes(), 0u);
}

// CANN's HWTS log: what the encoder writes the decoder reads back; an end closes the latest start of its stream
// and task; an end with no start and a start with no end make no task; a gap in the 4-bit counter is a loss.
TEST(HwtsLog, RecordsRoundTripAndPairAsMsprofPairsThem) {
  std::vector<prof::HwtsLogEntry> log = {
      {0, 0, 0, 7, 3, 100},   // start of task 7
      {0, 1, 0, 7, 3, 150},   // a second start of it: the latest one counts
      {1, 2, 0, 9, 3, 160},   // an end with no start
      {1, 3, 2, 7, 3, 200},   // the end of task 7 (an AI_VECTOR_CORE task)
      {0, 4, 0, 8, 1025, 300},  // stream 1025 fits 11 bits
      {0, 6, 0, 5, 3, 400},   // counter 6 after 4: one record lost; task 5 never ends
  };
  std::vector<std::byte> bytes(log.size() * prof::kHwtsLogRecordBytes);
  for (size_t i = 0; i < log.size(); ++i)
    prof::EncodeHwtsLogRecord(log[i], std::span<std::byte, prof::kHwtsLogRecordBytes>(bytes.data() + i * prof::kHwtsLogRecordBytes, prof::kHwtsLogRecordBytes));
  bytes[2 * prof::kHwtsLogRecordBytes + 16] = std::byte{0x03};  // a flag in the stream field's high bits: masked off
  bytes[2 * prof::kHwtsLogRecordBytes + 17] = std::byte{0x08};
  uint64_t lost = 0;
  auto decoded = prof::DecodeHwtsLog(bytes, &lost);
  ASSERT_EQ(decoded.size(), log.size());
  EXPECT_EQ(lost, 1u);
  EXPECT_EQ(decoded[1].syscnt, 150u);
  EXPECT_EQ(decoded[3].task_type, 2);
  EXPECT_EQ(decoded[2].stream_id, 3);
  EXPECT_EQ(decoded[4].stream_id, 1025);
  prof::HwtsPairer pairer;
  for (const auto& e : decoded) pairer.Add(e);
  ASSERT_EQ(pairer.pairs().size(), 1u);
  EXPECT_EQ(pairer.pairs()[0].start, 150u);
  EXPECT_EQ(pairer.pairs()[0].end, 200u);
  EXPECT_EQ(prof::GeTaskTypeName(pairer.pairs()[0].task_type), "AI_VECTOR_CORE");
  EXPECT_EQ(pairer.unmatched_ends(), 1u);
  EXPECT_EQ(pairer.open_starts(), 2u);
  // Another log type (2) is not a task record; a cut record is not decoded.
  std::vector<std::byte> other(prof::kHwtsLogRecordBytes + 10);
  other[0] = std::byte{0x12};
  EXPECT_TRUE(prof::DecodeHwtsLog(other).empty());
}

}  // namespace
}  // namespace npu::prof
