#include "base/file_io.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace npu {
namespace {
std::string Errno() { return std::strerror(errno); }

// Replaces an existing file (or symlink) at `final_path` by swapping the two names atomically, then unlinking
// the old content. Why not rename(): ext4 treats a rename onto an existing file as "replace via rename" and
// starts writeback of the whole new file before returning (auto_da_alloc), which for a 100 MB .om costs
// ~95 ms against ~5 ms for the exchange (measured on the development machine: ext4, kernel 6.18). Both are
// atomic for readers; neither fsyncs. Returns false when there is nothing to replace or the file system
// cannot exchange, and the caller renames.
bool ReplaceByExchange(const std::string& tmp, const std::string& final_path) {
  struct stat st{};
  if (::lstat(final_path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))) return false;
  if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, final_path.c_str(), RENAME_EXCHANGE) != 0) return false;
  ::unlink(tmp.c_str());  // now the replaced file; its pages are dropped, not written
  return true;
}
}  // namespace

bool FileExists(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0;
}

namespace {

// A mapping's deleter, named so that DropResidentPages can recognise a mapping's handle by it.
struct Unmap {
  size_t size;
  void operator()(const std::byte* p) const { ::munmap(const_cast<std::byte*>(p), size); }
};

}  // namespace

void MappedFile::DropResidentPages(const std::shared_ptr<const void>& owner, std::span<const std::byte> bytes) {
  if (!owner || !std::get_deleter<Unmap>(owner) || bytes.empty()) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data()), end = begin + bytes.size();
  const uintptr_t first = (begin + page - 1) / page * page, last = end / page * page;  // whole pages only
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

std::shared_ptr<void> HugePageStorage(size_t bytes) {
  if (bytes < kHugePage) return {};
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (!p) return {};
  (void)::madvise(p, rounded, MADV_HUGEPAGE);  // advice: a refusal costs speed only
  return std::shared_ptr<void>(p, std::free);
}

std::shared_ptr<void> HugePageOrHeapStorage(size_t bytes) {
  std::shared_ptr<void> p = HugePageStorage(bytes);
  return p ? p : std::shared_ptr<void>(std::malloc(bytes), std::free);
}

Result<MappedFile> MappedFile::Open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Error("E13001", "file", path, "the file does not exist");
    return Status::Error("E13002", "file", path, "cannot open: " + Errno());
  }
  struct stat st{};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::Error("E13002", "file", path, "not a regular file");
  }
  MappedFile f;
  f.path_ = path;
  f.size_ = static_cast<size_t>(st.st_size);
  if (f.size_ == 0) {
    ::close(fd);
    f.data_ = std::shared_ptr<const std::byte>(reinterpret_cast<const std::byte*>(""), [](const std::byte*) {});
    return f;
  }
  void* p = ::mmap(nullptr, f.size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) return Status::Error("E13002", "file", path, "mmap failed: " + Errno());
  f.data_ = std::shared_ptr<const std::byte>(static_cast<const std::byte*>(p), Unmap{f.size_});
  return f;
}

Result<std::string> ReadFileToString(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  auto b = f.bytes();
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

Result<std::vector<std::pair<int, std::string>>> ReadConfigLines(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::vector<std::pair<int, std::string>> out;
  int no = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i != text.size() && text[i] != '\n') continue;
    ++no;
    std::string_view line(text.data() + start, i - start);
    start = i + 1;
    size_t b = line.find_first_not_of(" \t\r"), e = line.find_last_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] == '#') continue;
    out.emplace_back(no, std::string(line.substr(b, e - b + 1)));
  }
  return out;
}

void RemoveStaleTemps(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p(path);
  const std::string prefix = p.filename().string() + ".tmp.";
  std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : ".";
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    std::string pid = name.substr(prefix.size());
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (::kill(std::stoi(pid), 0) != 0 && errno == ESRCH) std::filesystem::remove(e.path(), ec);
  }
}

Result<std::unique_ptr<AtomicFileWriter>> AtomicFileWriter::Create(const std::string& path) {
  auto w = std::make_unique<AtomicFileWriter>();
  w->path_ = path;
  w->tmp_ = path + ".tmp." + std::to_string(::getpid());
  w->fd_ = ::open(w->tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (w->fd_ < 0) return Status::Error("E13004", "output", path, "cannot create: " + Errno());
  return w;
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
}

Status AtomicFileWriter::Write(std::span<const std::byte> data) {
  // At most this much per write(2). The page cache takes a folio as large as the write allows, up to 2 MiB,
  // and a 2 MiB folio needs a free 2 MiB block: on a VM that hands free memory back to its host (free page
  // reporting, as on the development machine) exactly the blocks the host took back, each faulted in
  // again there 4 KiB at a time. 100 MB written to a fresh file 2 s after the last write took 27-290 ms in
  // 2 MiB calls and 24-28 ms in 256 KiB calls (docs/performance.md, atc). 400 calls per 100 MB cost nothing.
  constexpr size_t kMaxWrite = 256 << 10;
  const std::byte* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, std::min(left, kMaxWrite));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::Error("E13004", "output", path_, "write failed: " + Errno());
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  offset_ += data.size();
  return Status::Ok();
}

Status AtomicFileWriter::WriteAt(size_t offset, std::span<const std::byte> data) {
  if (offset > offset_ || data.size() > offset_ - offset)
    return Status::Error("E19999", "output", path_, "internal: rewrite past the bytes written");
  for (size_t done = 0; done < data.size();) {
    ssize_t n = ::pwrite(fd_, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::Error("E13004", "output", path_, "write failed: " + Errno());
    done += static_cast<size_t>(n);
  }
  return Status::Ok();
}

Status AtomicFileWriter::Commit() { return CommitAs(path_); }

Status AtomicFileWriter::CommitAs(const std::string& final_path) {
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Status::Error("E13004", "output", final_path, "close failed: " + Errno());
  }
  fd_ = -1;
  if (!ReplaceByExchange(tmp_, final_path) && ::rename(tmp_.c_str(), final_path.c_str()) != 0)
    return Status::Error("E13004", "output", final_path, "rename failed: " + Errno());
  committed_ = true;
  return Status::Ok();
}

Result<std::string> AtomicFileWriter::CommitUnique() {
  constexpr int kMaxSuffix = 10000;
  if (::close(fd_) != 0) {
    fd_ = -1;
    return Status::Error("E13004", "output", path_, "close failed: " + Errno());
  }
  fd_ = -1;
  size_t slash = path_.rfind('/'), dot = path_.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path_.size();
  const std::string stem = path_.substr(0, dot), ext = path_.substr(dot);
  for (int n = 0; n < kMaxSuffix; ++n) {
    std::string name = n ? stem + "_" + std::to_string(n) + ext : path_;
    if (::link(tmp_.c_str(), name.c_str()) == 0) {
      ::unlink(tmp_.c_str());
      committed_ = true;
      return name;
    }
    if (errno != EEXIST) return Status::Error("E13004", "output", name, "cannot create the file: " + Errno(), "Check the folder's permissions.");
  }
  return Status::Error("E13004", "output", path_, "too many earlier results with this name", "Clean the output folder.");
}

// The lock file is removed by its holder, so a waiter may wake holding a lock on a file that is no longer at
// the path (while a newcomer locks a new one): it checks that the path still names its file, else starts over.
FileLock::FileLock(const std::string& path) : path_(path + ".lock") {
  for (;;) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) return;
    int locked;
    while ((locked = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
    }
    if (locked != 0) break;
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return;
    ::close(fd_);
  }
  ::close(fd_);
  fd_ = -1;
}

FileLock::~FileLock() {
  if (fd_ < 0) return;
  ::unlink(path_.c_str());  // while still held: nobody can hold the removed file's lock and think it current
  ::close(fd_);             // closing releases the lock
}

Status WriteLinesAtomic(const std::string& path, const std::map<std::string, std::string>& lines) {
  std::string text;
  for (const auto& [key, line] : lines) text += line + "\n";
  return WriteFileAtomic(path, std::as_bytes(std::span(text.data(), text.size())));
}

Status WriteFileAtomic(const std::string& path, std::span<const std::byte> data) {
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  NPU_RETURN_IF_ERROR(w->Write(data));
  return w->Commit();
}

Result<std::string> WriteFileUnique(const std::string& path, std::span<const std::byte> data) {
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  NPU_RETURN_IF_ERROR(w->Write(data));
  return w->CommitUnique();
}

}  // namespace npu
