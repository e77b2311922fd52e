// File access: read-only memory maps for inputs, atomic (temp + rename) writes for outputs,
// so a failed run never leaves a half-written file behind.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace npu {

// A read-only mapping of a whole file. Cheap to share: bytes() stays valid while any copy lives.
class MappedFile {
 public:
  static Result<MappedFile> Open(const std::string& path);
  std::span<const std::byte> bytes() const { return {data_.get(), size_}; }
  const std::string& path() const { return path_; }
  // An owner handle that keeps the mapping alive (for tensors that alias into the file).
  std::shared_ptr<const std::byte> share() const { return data_; }
  // For a kernel that keeps its own copy of a model constant (weights in its blocked layout): when `owner`
  // is a mapping's handle, the pages wholly inside `bytes` leave memory, so the weights are not resident
  // twice. Safe for any later reader: the mapping is read-only and private, so a read faults the page back
  // in from the file. Any other owner (heap bytes, a parsed protobuf) is left alone.
  static void DropResidentPages(const std::shared_ptr<const void>& owner, std::span<const std::byte> bytes);

 private:
  std::shared_ptr<const std::byte> data_;
  size_t size_ = 0;
  std::string path_;
};

// x86-64's transparent huge page: memory advised huge (MADV_HUGEPAGE) is walked 2 MiB at a time rather than 4 KiB.
constexpr size_t kHugePage = 2 << 20;
// Heap storage for `bytes` that start on a huge-page boundary, its whole huge pages advised huge (the kernel may
// decline: then it is ordinary memory); null below one huge page or when the allocation fails.
std::shared_ptr<void> HugePageStorage(size_t bytes);
// HugePageStorage where it gives storage, else plain heap storage: null only when the allocation fails.
std::shared_ptr<void> HugePageOrHeapStorage(size_t bytes);

Result<std::string> ReadFileToString(const std::string& path);
bool FileExists(const std::string& path);
// The lines of a small config file with their 1-based numbers, trimmed; blank lines and '#' comments dropped.
Result<std::vector<std::pair<int, std::string>>> ReadConfigLines(const std::string& path);

// Writes to "<path>.tmp.<pid>" and renames onto path in Commit(); abandoned writers delete the temp file.
class AtomicFileWriter {
 public:
  static Result<std::unique_ptr<AtomicFileWriter>> Create(const std::string& path);
  AtomicFileWriter() = default;  // use Create()
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  Status Write(std::span<const std::byte> data);
  Status Write(std::string_view text) { return Write(std::as_bytes(std::span(text.data(), text.size()))); }
  // Overwrites bytes already written (a header completed last); offset() is unchanged.
  Status WriteAt(size_t offset, std::span<const std::byte> data);
  size_t offset() const { return offset_; }
  Status Commit();
  // Renames into `final_path` instead of the path given to Create (a name decided after writing).
  Status CommitAs(const std::string& final_path);
  // Publishes under the path given to Create or, when a file holds that name, <stem>_1<ext>, _2, ...:
  // never replaces a file (hard link + unlink, atomic), so two runs in the same second keep both results
  // and a killed run leaves no file under any final name. Returns the name used.
  Result<std::string> CommitUnique();

 private:
  std::string path_, tmp_;
  int fd_ = -1;
  size_t offset_ = 0;
  bool committed_ = false;
};

// Removes the "<path>.tmp.<pid>" files of writers that were killed (their process is gone). Large outputs
// (.om files) call it before writing, so a SIGKILL costs one stale file until the next write, never more.
// Not done per file: a dump folder holds thousands and would be scanned for each.
void RemoveStaleTemps(const std::string& path);

// An exclusive advisory lock (flock) on <path>.lock for as long as it lives: processes that rewrite one shared
// file (the tune banks) take turns, and a killed holder releases it with its descriptor. The lock file is
// removed on release (a killed holder leaves it, harmless: the next holder takes and removes it).
class FileLock {
 public:
  explicit FileLock(const std::string& path);
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool ok() const { return fd_ >= 0; }

 private:
  std::string path_;
  int fd_ = -1;
};

// Convenience: write a whole buffer atomically.
Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data);

// Writes the map's values, one per line in key order (the same records always give the same bytes), atomically.
Status WriteLinesAtomic(const std::string& path, const std::map<std::string, std::string>& lines);

// Writes a whole buffer with AtomicFileWriter::CommitUnique; returns the name used.
Result<std::string> WriteFileUnique(const std::string& path, std::span<const std::byte> data);

}  // namespace npu
