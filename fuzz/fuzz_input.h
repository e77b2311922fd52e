// What every fuzz target needs to hand its bytes to parsers that open files by path.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace npu::fuzz {

// The input as an anonymous in-memory file (memfd), opened by its /proc/self/fd path: no disk I/O per run.
class MemFile {
 public:
  explicit MemFile(std::span<const uint8_t> bytes);
  ~MemFile();
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

// A scratch directory, made once per process (under /dev/shm when it exists) and emptied per run.
const std::string& ScratchDir();
void ClearScratch();

// Inputs that are whole directories (a PROF_* folder, a tune bank) travel as a flat image:
//   repeated { u8 name_len; name; u32 data_len (little endian); data }
// Names are relative paths of [A-Za-z0-9_.-] parts joined by '/', never "..". Unpack writes the image
// into ScratchDir()/root. A length past the end takes the rest (so cutting the image cuts its last file, and
// a seed per file packs that file last); a malformed entry ends the image. False when no file was written.
bool UnpackDirImage(std::span<const uint8_t> image, const std::string& root);

}  // namespace npu::fuzz
