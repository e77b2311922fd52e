// The .om container: a 256-byte header (magic "IMOD"), a partition table and the partitions.
// Header fields sit at the CANN offsets; the checksum field holds XXH3-128 of everything after the
// header. The reader checks magic, sizes, bounds and checksum before any partition is handed out.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/status.h"

struct XXH3_state_s;  // xxhash.h

namespace npu::om {

enum class PartitionType : uint32_t { kModelDef = 0, kWeightsData = 1, kTaskInfo = 2, kTbeKernels = 3 };

constexpr uint32_t kMagic = 0x444F4D49;  // "IMOD" little-endian
constexpr uint32_t kHeaderSize = 256;
constexpr uint32_t kVersion = 0x20000000;
constexpr size_t kWeightAlign = 64;
constexpr size_t kOffIsChecksum = 81;  // header byte: 0 = the checksum field is valid and checked

// A run of bytes in a partition: bytes that exist (`bytes`), or bytes made while the file is written
// (`make` fills a buffer of `size`), so a converted weight never has to exist whole in memory: it is made
// into a reused staging buffer, checksummed and written while still in cache.
struct Piece {
  Piece(std::span<const std::byte> b) : bytes(b), size(b.size()) {}  // NOLINT: spans convert implicitly
  Piece(size_t n, std::function<Status(std::span<std::byte>)> f) : size(n), make(std::move(f)) {}
  std::span<const std::byte> bytes;
  size_t size = 0;
  std::function<Status(std::span<std::byte>)> make;
};

// A partition as a list of pieces written back to back (never gathered into one buffer first).
struct PartitionData {
  PartitionType type;
  std::vector<Piece> pieces;
  size_t align = 1;  // file offset alignment for this partition
  size_t size() const {
    size_t n = 0;
    for (const auto& p : pieces) n += p.size;
    return n;
  }
};

// Writes `pieces` in order; made pieces are made across the thread pool, a staging buffer's worth at a
// time. Every byte written is also fed to `hash` when one is given.
Status WritePieces(AtomicFileWriter& w, const std::vector<Piece>& pieces, XXH3_state_s* hash = nullptr);

struct HeaderInfo {
  std::string name;
  std::string platform_version;  // SoC
  bool dynamic = false;
};

// Writes header, table and partitions atomically to `path`.
Status WriteOmFile(const std::string& path, const HeaderInfo& info, const std::vector<PartitionData>& parts);

struct OmFile {
  MappedFile file;
  HeaderInfo info;
  uint32_t version = 0;
  std::string generation;  // "v1", "v2" or "current" (ge_formats.md §3)
  bool cann_built = false;  // written by CANN's ATC (no npukit checksum): MODEL_DEF is a ge.proto.ModelDef
  uint32_t model_num = 1;   // models in the file; npukit reads the first
  std::map<PartitionType, std::span<const std::byte>> partitions;
  size_t file_offset(std::span<const std::byte> s) const { return static_cast<size_t>(s.data() - file.bytes().data()); }
};

Result<OmFile> ReadOmFile(const std::string& path);

}  // namespace npu::om
