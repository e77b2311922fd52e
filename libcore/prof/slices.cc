#include "prof/slices.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace npu::prof {
namespace fs = std::filesystem;

SliceWriter::SliceWriter(std::string dir, std::string name, uint64_t slice_bytes)
    : dir_(std::move(dir)), name_(std::move(name)), slice_bytes_(std::max<uint64_t>(slice_bytes, 1)) {}

SliceWriter::~SliceWriter() {
  if (f_) std::fclose(f_);
}

Status SliceWriter::OpenNext() {
  NPU_RETURN_IF_ERROR(CloseCurrent());
  ++index_;
  std::string path = dir_ + "/" + name_ + ".slice_" + std::to_string(index_);
  f_ = std::fopen(path.c_str(), "wb");
  if (!f_) return Status::Error("E13004", "profiler output", path, std::string("cannot create the file: ") + std::strerror(errno));
  in_slice_ = 0;
  return Status::Ok();
}

Status SliceWriter::CloseCurrent() {
  if (!f_) return Status::Ok();
  std::string path = dir_ + "/" + name_ + ".slice_" + std::to_string(index_);
  bool ok = std::fflush(f_) == 0;
  ok = std::fclose(f_) == 0 && ok;
  f_ = nullptr;
  if (!ok) return Status::Error("E13004", "profiler output", path, std::string("write failed: ") + std::strerror(errno));
  std::ofstream done(path + ".done");
  done << "filesize:" << in_slice_ << "\n";
  return done ? Status::Ok() : Status::Error("E13004", "profiler output", path + ".done", "cannot write the marker");
}

Status SliceWriter::Append(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    if (!f_ || in_slice_ == slice_bytes_) NPU_RETURN_IF_ERROR(OpenNext());
    size_t n = static_cast<size_t>(std::min<uint64_t>(bytes.size(), slice_bytes_ - in_slice_));
    if (std::fwrite(bytes.data(), 1, n, f_) != n)
      return Status::Error("E13004", "profiler output", dir_ + "/" + name_, std::string("write failed: ") + std::strerror(errno));
    in_slice_ += n;
    total_ += n;
    bytes = bytes.subspan(n);
  }
  return Status::Ok();
}

Status SliceWriter::Finish() { return CloseCurrent(); }

Result<SliceReader> SliceReader::Open(const std::string& dir, const std::string& name) {
  SliceReader r;
  std::error_code ec;
  std::string prefix = name + ".slice_";
  std::vector<std::pair<long, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (f.rfind(prefix, 0) != 0 || f.size() <= prefix.size()) continue;
    std::string idx = f.substr(prefix.size());
    if (!std::all_of(idx.begin(), idx.end(), ::isdigit) || idx.size() > 9) continue;
    found.emplace_back(std::stol(idx), e.path().string());
  }
  if (ec) return Status::Error("E13001", "--output", dir, "cannot list the directory: " + ec.message());
  std::sort(found.begin(), found.end());
  for (size_t i = 0; i < found.size(); ++i) {
    const std::string& path = found[i].second;
    if (found[i].first != static_cast<long>(i)) {
      r.incomplete_.push_back(dir + "/" + prefix + std::to_string(i) + " (missing)");
      break;  // a gap: the stream stops before it
    }
    uint64_t size = fs::file_size(path, ec);
    std::ifstream done(path + ".done");
    std::string line;
    if (!done || !std::getline(done, line) || line != "filesize:" + std::to_string(size)) r.incomplete_.push_back(path);
    r.files_.push_back(path);
    r.total_ += size;
  }
  return r;
}

Result<size_t> SliceReader::Read(std::span<std::byte> out) {
  size_t got = 0;
  while (got < out.size()) {
    if (!f_) {
      if (next_ >= files_.size()) break;
      f_.reset(std::fopen(files_[next_].c_str(), "rb"));
      if (!f_) return Status::Error("E13001", "--output", files_[next_], std::string("cannot open the slice: ") + std::strerror(errno));
      ++next_;
    }
    size_t n = std::fread(out.data() + got, 1, out.size() - got, f_.get());
    if (n == 0) {
      if (std::ferror(f_.get())) return Status::Error("E13001", "--output", files_[next_ - 1], "read error");
      f_.reset();
    }
    got += n;
  }
  return got;
}

}  // namespace npu::prof
