#include "om/om_file.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "base/thread_pool.h"

namespace npu::om {
namespace {

// Field offsets in the 256-byte header (CANN ModelFileHeader order).
constexpr size_t kOffMagic = 0, kOffHeadSize = 4, kOffVersion = 8, kOffChecksum = 12, kOffLength = 76;
constexpr size_t kOffModelType = 82, kOffName = 84, kOffModelNum = 156;
constexpr size_t kOffPlatform = 160, kOffModelLength = 184, kOffDynamic = 193;
constexpr size_t kTableEntry = 24, kTableHead = 8;  // u32 num + pad; {u32 type, pad, u64 offset, u64 size}
constexpr uint32_t kMaxPartitions = 8;  // CANN's loader takes 1 to 8

template <class T>
void Put(std::vector<std::byte>& b, size_t off, T v) { std::memcpy(b.data() + off, &v, sizeof v); }
template <class T>
T Get(std::span<const std::byte> b, size_t off) {
  T v;
  std::memcpy(&v, b.data() + off, sizeof v);
  return v;
}

std::string ToHex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

Status Corrupt(const std::string& path, std::string why) { return Status::Error("E10003", "--om", path, std::move(why)); }

}  // namespace

Status WriteOmFile(const std::string& path, const HeaderInfo& info, const std::vector<PartitionData>& parts) {
  const size_t table = kTableHead + kTableEntry * parts.size();
  std::vector<std::byte> tbl(table);
  Put<uint32_t>(tbl, 0, static_cast<uint32_t>(parts.size()));
  // Offsets are relative to the end of the table; partitions may be padded to their alignment.
  std::vector<size_t> pad(parts.size());
  size_t off = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    size_t abs = kHeaderSize + table + off;
    pad[i] = (parts[i].align - abs % parts[i].align) % parts[i].align;
    off += pad[i];
    Put<uint32_t>(tbl, kTableHead + i * kTableEntry, static_cast<uint32_t>(parts[i].type));
    Put<uint64_t>(tbl, kTableHead + i * kTableEntry + 8, off);
    Put<uint64_t>(tbl, kTableHead + i * kTableEntry + 16, parts[i].size());
    off += parts[i].size();
  }
  std::vector<std::byte> hdr(kHeaderSize);
  Put<uint32_t>(hdr, kOffMagic, kMagic);
  Put<uint32_t>(hdr, kOffHeadSize, kHeaderSize);
  Put<uint32_t>(hdr, kOffVersion, kVersion);
  Put<uint32_t>(hdr, kOffLength, static_cast<uint32_t>(std::min<size_t>(table + off, UINT32_MAX)));
  Put<uint8_t>(hdr, kOffIsChecksum, 0);  // 0 = checksum present
  Put<uint8_t>(hdr, kOffModelType, 0);   // IR model
  std::memcpy(hdr.data() + kOffName, info.name.data(), std::min<size_t>(31, info.name.size()));
  Put<uint32_t>(hdr, kOffModelNum, 1);
  std::memcpy(hdr.data() + kOffPlatform, info.platform_version.data(), std::min<size_t>(19, info.platform_version.size()));
  Put<uint64_t>(hdr, kOffModelLength, table + off);
  Put<uint8_t>(hdr, kOffDynamic, info.dynamic ? 1 : 0);

  // One pass: everything after the header is checksummed as it is written; the header, which holds the
  // checksum, is written first without it and completed at the end.
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> st(XXH3_createState(), XXH3_freeState);
  XXH3_128bits_reset(st.get());
  RemoveStaleTemps(path);
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(path));
  NPU_RETURN_IF_ERROR(w->Write(hdr));
  static const std::byte zeros[kWeightAlign] = {};
  std::vector<Piece> body{Piece(std::span<const std::byte>(tbl))};
  for (size_t i = 0; i < parts.size(); ++i) {
    if (pad[i]) body.emplace_back(std::span(zeros, pad[i]));
    body.insert(body.end(), parts[i].pieces.begin(), parts[i].pieces.end());
  }
  NPU_RETURN_IF_ERROR(WritePieces(*w, body, st.get()));
  XXH128_hash_t h = XXH3_128bits_digest(st.get());
  Put<uint64_t>(hdr, kOffChecksum, h.low64);
  Put<uint64_t>(hdr, kOffChecksum + 8, h.high64);
  NPU_RETURN_IF_ERROR(w->WriteAt(0, hdr));
  return w->Commit();
}

namespace {

// Hashes and writes byte ranges in the order given, on a thread of its own, so the next stage buffer is
// made while the last one is written. A range may return a stage buffer to the maker once written.
class OrderedWriter {
 public:
  OrderedWriter(AtomicFileWriter& w, XXH3_state_s* hash) : w_(w), hash_(hash), thread_([this] { Run(); }) {}
  ~OrderedWriter() { Finish(); }
  OrderedWriter(const OrderedWriter&) = delete;
  OrderedWriter& operator=(const OrderedWriter&) = delete;

  void Push(std::span<const std::byte> bytes, int stage = -1) {
    std::lock_guard lock(mu_);
    queue_.emplace_back(bytes, stage);
    cv_.notify_all();
  }
  // Waits until `stage` is written (or never used) and marks it in use.
  void Acquire(int stage) {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !busy_[stage]; });
    busy_[stage] = true;
  }
  void Release(int stage) {
    std::lock_guard lock(mu_);
    busy_[stage] = false;
    cv_.notify_all();
  }
  // Writes what is queued and returns the first write error.
  Status Finish() {
    {
      std::lock_guard lock(mu_);
      done_ = true;
      cv_.notify_all();
    }
    if (thread_.joinable()) thread_.join();
    return status_;
  }
  static constexpr int kStages = 2;

 private:
  AtomicFileWriter& w_;
  XXH3_state_s* hash_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::pair<std::span<const std::byte>, int>> queue_;
  std::array<bool, kStages> busy_{};
  bool done_ = false;
  Status status_;  // the writer thread's alone until it is joined
  std::thread thread_;

  void Run() {
    for (;;) {
      std::pair<std::span<const std::byte>, int> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || done_; });
        if (queue_.empty()) return;
        job = queue_.front();
        queue_.pop_front();
      }
      if (status_.ok()) {
        if (hash_) XXH3_128bits_update(hash_, job.first.data(), job.first.size());
        status_ = w_.Write(job.first);
      }
      if (job.second >= 0) Release(job.second);
    }
  }
};

}  // namespace

Status WritePieces(AtomicFileWriter& w, const std::vector<Piece>& pieces, XXH3_state_s* hash) {
  // A stage holds several weights for the pool to make at once, and stays a small part of a large model
  // (resnet50's largest weight is 9.4 MB; a bigger piece grows its stage).
  constexpr size_t kStageBytes = 8 << 20;
  struct Stage {
    std::shared_ptr<std::byte[]> data;
    size_t capacity = 0;
  };
  std::array<Stage, OrderedWriter::kStages> stages;
  // The writer thread keeps a core busy: the pool's other threads make the stages. With every core in the
  // pool, OpenMP's workers spin between stages on the writer's core (resnet50 on 2 cores: 108 -> 150 ms).
  ThreadPool makers(ThreadPool::Global().size() - 1);
  OrderedWriter out(w, hash);
  int next = 0;
  for (size_t i = 0; i < pieces.size();) {
    if (!pieces[i].make) {
      out.Push(pieces[i++].bytes);
      continue;
    }
    // The run of made pieces from i that fits a stage (at least one).
    std::vector<size_t> at{0};
    size_t end = i;
    while (end < pieces.size() && pieces[end].make && (end == i || at.back() + pieces[end].size <= kStageBytes))
      at.push_back(at.back() + pieces[end++].size);
    out.Acquire(next);
    Stage& stage = stages[next];
    if (at.back() > stage.capacity) {
      stage.capacity = std::max(at.back(), kStageBytes);
      // Ordinary pages, not huge ones: see AtomicFileWriter::Write for what a fresh 2 MiB block can cost.
      stage.data = std::make_shared_for_overwrite<std::byte[]>(stage.capacity);
    }
    std::vector<Status> made(end - i);
    makers.ParallelFor(end - i, 1, [&](size_t b, size_t e) {
      for (size_t k = b; k < e; ++k) made[k] = pieces[i + k].make({stage.data.get() + at[k], pieces[i + k].size});
    });
    for (const Status& s : made)
      if (!s.ok()) {
        out.Release(next);
        (void)out.Finish();
        return s;
      }
    out.Push({stage.data.get(), at.back()}, next);
    next = (next + 1) % OrderedWriter::kStages;
    i = end;
  }
  return out.Finish();
}

namespace {

// The header's generation decides where the platform string is, whether model_length exists and how wide
// the partition table's entries are (ge_formats.md §3).
struct Layout {
  const char* generation;
  size_t platform;         // offset of platform_version[20]
  bool has_model_length;   // model_length u64 @184
  size_t table_head, entry;  // u32 count (+ u32 pad); entries of {u32 type, mem_offset, mem_size} or {u32 type, pad, u64, u64}
};
constexpr Layout kV1{"v1", 156, false, 4, 12}, kV2{"v2", kOffPlatform, false, 4, 12}, kCurrent{"current", kOffPlatform, true, kTableHead, kTableEntry};
constexpr size_t kOffEncrypt = 80, kChecksumBytes = 64;
constexpr uint8_t kFlowModel = 3;  // modeltype of a flow model: always the wide table

bool AllZero(std::span<const std::byte> b) {
  return std::all_of(b.begin(), b.end(), [](std::byte x) { return x == std::byte{0}; });
}

}  // namespace

Result<OmFile> ReadOmFile(const std::string& path) {
  auto mf = MappedFile::Open(path);
  if (!mf.ok()) return Status::Error("E10003", "--om", path, mf.status().reason(), "Check the .om path.");
  OmFile om;
  om.file = std::move(mf).value();
  auto b = om.file.bytes();
  if (b.size() >= 4 && std::memcmp(b.data(), "PK\x03\x04", 4) == 0)
    return Corrupt(path, "this is a zip-based OM2 model (atc --mode=7), which npukit does not read; convert the source model with atc --mode=0");
  if (b.size() < kHeaderSize) return Corrupt(path, "the file has " + std::to_string(b.size()) + " bytes, less than the 256-byte header");
  if (Get<uint32_t>(b, kOffMagic) != kMagic) return Corrupt(path, "wrong magic number: not an .om file");
  if (Get<uint32_t>(b, kOffHeadSize) != kHeaderSize) return Corrupt(path, "header size field is not 256");
  if (Get<uint8_t>(b, kOffEncrypt) != 0) return Corrupt(path, "the model is encrypted (is_encrypt is set); npukit reads plain models only");
  om.version = Get<uint32_t>(b, kOffVersion);
  const uint64_t model_length = Get<uint64_t>(b, kOffModelLength);
  const Layout* layout = nullptr;
  if (om.version == 0x10000000) layout = &kV1;
  else if (om.version == kVersion) layout = model_length != 0 || Get<uint8_t>(b, kOffModelType) == kFlowModel ? &kCurrent : &kV2;
  else return Corrupt(path, "unsupported .om header version 0x" + ToHex(om.version) + " (known: 0x10000000, 0x20000000)");
  om.generation = layout->generation;
  const uint64_t follows = b.size() - kHeaderSize;
  const uint32_t length32 = Get<uint32_t>(b, kOffLength);
  if (layout->has_model_length && model_length != follows)
    return Corrupt(path, "header says " + std::to_string(model_length) + " bytes follow it, the file has " + std::to_string(follows) + " (truncated or appended to)");
  // The 32-bit length field must agree too (saturated for files past 4 GiB).
  if (length32 != std::min<uint64_t>(follows, UINT32_MAX))
    return Corrupt(path, "the header's length field says " + std::to_string(length32) + " bytes follow it, the file has " + std::to_string(follows) +
                             " (truncated or appended to)");
  auto body = b.subspan(kHeaderSize);
  // npukit fills the checksum field with XXH3-128 of the body; CANN's tools leave it zero.
  om.cann_built = AllZero(b.subspan(kOffChecksum, kChecksumBytes));
  if (!om.cann_built && Get<uint8_t>(b, kOffIsChecksum) == 0) {
    XXH128_hash_t h = XXH3_128bits(body.data(), body.size());
    if (h.low64 != Get<uint64_t>(b, kOffChecksum) || h.high64 != Get<uint64_t>(b, kOffChecksum + 8))
      return Corrupt(path, "checksum mismatch: the file was modified or damaged after atc wrote it");
  }
  om.model_num = layout == &kV1 ? 1 : std::max<uint32_t>(1, Get<uint32_t>(b, kOffModelNum));
  if (om.model_num > body.size() / layout->table_head)
    return Corrupt(path, "model_num " + std::to_string(om.model_num) + " is more than the file has room for");
  // With model_num > 1 each model's table and partitions follow the previous model's: npukit keeps the first
  // (the root model) and checks the others' bounds.
  for (uint32_t model = 0; model < om.model_num; ++model) {
    const std::string which = om.model_num > 1 ? "model " + std::to_string(model) + ": " : "";
    if (body.size() < layout->table_head) return Corrupt(path, which + "no partition table");
    const uint32_t num = Get<uint32_t>(body, 0);
    if (num == 0 || num > kMaxPartitions)
      return Corrupt(path, which + "partition count " + std::to_string(num) + " is out of range (1 to " + std::to_string(kMaxPartitions) + ")");
    const size_t table = layout->table_head + layout->entry * num;
    if (body.size() < table) return Corrupt(path, which + "partition table runs past the end of the file");
    auto data = body.subspan(table);
    uint64_t prev_end = 0;
    std::map<PartitionType, std::span<const std::byte>> parts;
    for (uint32_t i = 0; i < num; ++i) {
      const size_t at = layout->table_head + i * layout->entry;
      auto type = static_cast<PartitionType>(Get<uint32_t>(body, at));
      const bool wide = layout->entry == kTableEntry;
      uint64_t off = wide ? Get<uint64_t>(body, at + 8) : Get<uint32_t>(body, at + 4);
      uint64_t size = wide ? Get<uint64_t>(body, at + 16) : Get<uint32_t>(body, at + 8);
      if (off < prev_end || off > data.size() || size > data.size() - off)
        return Corrupt(path, which + "partition " + std::to_string(i) + " (offset " + std::to_string(off) + ", size " + std::to_string(size) +
                                 ") lies outside the file or overlaps another");
      if (parts.count(type)) return Corrupt(path, which + "partition type " + std::to_string(static_cast<uint32_t>(type)) + " appears twice");
      prev_end = off + size;
      parts[type] = data.subspan(off, size);
    }
    if (!parts.count(PartitionType::kModelDef)) return Corrupt(path, which + "no MODEL_DEF partition");
    if (model == 0) om.partitions = std::move(parts);
    body = data.subspan(prev_end);
  }
  om.info.name.assign(reinterpret_cast<const char*>(b.data() + kOffName), strnlen(reinterpret_cast<const char*>(b.data() + kOffName), 32));
  om.info.platform_version.assign(reinterpret_cast<const char*>(b.data() + layout->platform),
                                  strnlen(reinterpret_cast<const char*>(b.data() + layout->platform), 20));
  om.info.dynamic = layout->has_model_length && Get<uint8_t>(b, kOffDynamic) != 0;
  return om;
}

}  // namespace npu::om
