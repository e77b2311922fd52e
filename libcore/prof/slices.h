// Sliced raw data files (<name>.slice_<n>): a writer that rolls over at a size limit, splitting records
// anywhere as CANN's collectors do, and a reader that streams the slices back as one byte stream with a
// bounded buffer, noticing slices that were cut short (no .done marker or a size that disagrees with it).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "base/status.h"

namespace npu::prof {

class SliceWriter {
 public:
  // Files are dir/<name>.slice_0, _1, ... of at most slice_bytes each.
  SliceWriter(std::string dir, std::string name, uint64_t slice_bytes);
  ~SliceWriter();
  SliceWriter(const SliceWriter&) = delete;
  SliceWriter& operator=(const SliceWriter&) = delete;
  Status Append(std::span<const std::byte> bytes);
  // One record's bytes. Spans go to the overload above: as a T, a fixed-size span would write its pointer.
  template <typename T>
    requires(std::is_trivially_copyable_v<T> && !std::is_convertible_v<const T&, std::span<const std::byte>>)
  Status Append(const T& record) { return Append(std::as_bytes(std::span(&record, 1))); }
  // Closes the last slice and writes every slice's .done marker.
  Status Finish();
  uint64_t bytes_written() const { return total_; }

 private:
  Status OpenNext();
  Status CloseCurrent();
  std::string dir_, name_;
  uint64_t slice_bytes_, in_slice_ = 0, total_ = 0;
  int index_ = -1;
  std::FILE* f_ = nullptr;
};

// The slices of one data file, in order, as a stream.
class SliceReader {
 public:
  // Finds dir/<name>.slice_<n>; an empty list when there are none.
  static Result<SliceReader> Open(const std::string& dir, const std::string& name);
  // Reads up to out.size() bytes; returns the count (0 at the end). Errors name the slice.
  Result<size_t> Read(std::span<std::byte> out);
  // Slices that lack a .done marker or whose size disagrees with it (the collection was cut short).
  const std::vector<std::string>& incomplete() const { return incomplete_; }
  uint64_t total_bytes() const { return total_; }
  bool empty() const { return files_.empty(); }

 private:
  std::vector<std::string> files_, incomplete_;
  size_t next_ = 0;
  uint64_t total_ = 0;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_{nullptr, std::fclose};
};

// Streams fixed-size records of type T from a SliceReader through a bounded buffer. With a validator, a record
// it rejects is garbage: the reader counts it and skips forward byte by byte to the next valid one (host records
// open with a magic). Without one, every whole record is returned: device records carry no magic, and their
// decoders reject what they cannot read.
template <typename T>
class RecordStream {
 public:
  using Validator = bool (*)(const std::byte* record);
  explicit RecordStream(SliceReader& r, Validator valid = nullptr) : r_(r), valid_(valid), buf_(BufferBytes(r.total_bytes())) {}
  // The next valid record into out; false at the end (then check status()).
  bool Next(T& out);
  uint64_t garbage_bytes() const { return garbage_; }
  uint64_t trailing_bytes() const { return end_ - pos_; }  // a partial record at the end (truncated data)
  const Status& status() const { return status_; }

 private:
  static constexpr size_t kBufferRecords = 8192;
  // No bigger than the data (plus a record): a small profile must not zero a megabyte per stream.
  static size_t BufferBytes(uint64_t data_bytes) {
    return sizeof(T) * static_cast<size_t>(std::min<uint64_t>(kBufferRecords, data_bytes / sizeof(T) + 1));
  }
  bool Fill();
  SliceReader& r_;
  Validator valid_;
  std::vector<std::byte> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t garbage_ = 0;
  bool eof_ = false;
  Status status_;
};

template <typename T>
bool RecordStream<T>::Fill() {
  if (eof_) return false;
  std::copy(buf_.begin() + static_cast<std::ptrdiff_t>(pos_), buf_.begin() + static_cast<std::ptrdiff_t>(end_), buf_.begin());
  end_ -= pos_;
  pos_ = 0;
  auto n = r_.Read(std::span(buf_).subspan(end_));
  if (!n.ok()) {
    status_ = n.status();
    eof_ = true;
    return false;
  }
  if (n.value() == 0) eof_ = true;
  end_ += n.value();
  return n.value() > 0;
}

template <typename T>
bool RecordStream<T>::Next(T& out) {
  for (;;) {
    // A read may return less than a record (the data ends mid-record): refill until one is whole, or stop.
    while (end_ - pos_ < sizeof(T))
      if (!Fill()) return false;
    if (!valid_ || valid_(buf_.data() + pos_)) {
      std::memcpy(&out, buf_.data() + pos_, sizeof(T));
      pos_ += sizeof(T);
      return true;
    }
    ++pos_;  // resynchronise byte by byte
    ++garbage_;
  }
}

}  // namespace npu::prof
