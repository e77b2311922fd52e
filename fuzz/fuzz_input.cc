#include "fuzz_input.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace npu::fuzz {
namespace fs = std::filesystem;

namespace {

void WriteAll(int fd, std::span<const uint8_t> bytes) {
  for (size_t done = 0; done < bytes.size();) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) std::abort();  // the scratch space is full: the harness cannot go on
    done += size_t(n);
  }
}

}  // namespace

MemFile::MemFile(std::span<const uint8_t> bytes) {
  fd_ = memfd_create("fuzz-input", MFD_CLOEXEC);
  if (fd_ < 0) std::abort();  // the harness cannot run at all without it
  WriteAll(fd_, bytes);
  path_ = "/proc/self/fd/" + std::to_string(fd_);
}

MemFile::~MemFile() { ::close(fd_); }

const std::string& ScratchDir() {
  struct Scratch {  // removed with the process (a crash leaves it for the post-mortem)
    std::string dir;
    Scratch() {
      dir = (fs::is_directory("/dev/shm") ? "/dev/shm" : fs::temp_directory_path().string()) + "/npukit-fuzz-XXXXXX";
      if (!mkdtemp(dir.data())) std::abort();
    }
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

void ClearScratch() {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(ScratchDir(), ec)) fs::remove_all(e.path(), ec);
}

namespace {

bool SafeRelativePath(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    for (char c : part)
      if (!(isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

bool UnpackDirImage(std::span<const uint8_t> image, const std::string& root) {
  constexpr size_t kMaxEntries = 64;
  ClearScratch();
  const fs::path base = fs::path(ScratchDir()) / root;
  fs::create_directories(base);
  size_t pos = 0;
  size_t entries = 0;
  for (; pos < image.size(); ++entries) {
    // A malformed entry ends the image; the files before it stay (one mutation that breaks an entry still runs).
    if (entries == kMaxEntries || image.size() - pos < 1) break;
    size_t name_len = image[pos++];
    if (image.size() - pos < name_len + 4) break;
    std::string_view name(reinterpret_cast<const char*>(image.data() + pos), name_len);
    pos += name_len;
    uint32_t len = uint32_t(image[pos]) | uint32_t(image[pos + 1]) << 8 | uint32_t(image[pos + 2]) << 16 | uint32_t(image[pos + 3]) << 24;
    pos += 4;
    if (!SafeRelativePath(name)) break;
    // A length past the end takes what is left: cutting the image cuts its last file, as a truncated file is.
    len = static_cast<uint32_t>(std::min<size_t>(len, image.size() - pos));
    fs::path file = base / std::string(name);
    std::error_code ec;
    fs::create_directories(file.parent_path(), ec);
    if (ec) return false;  // a name used both as a file and as a folder
    // Plain POSIX I/O: an ofstream's buffer was a large allocation per file, which ASan made costly.
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return false;  // e.g. the name of a folder made by an earlier entry
    WriteAll(fd, image.subspan(pos, len));
    ::close(fd);
    pos += len;
  }
  return entries > 0;
}

}  // namespace npu::fuzz
