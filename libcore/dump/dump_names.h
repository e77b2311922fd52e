// Dump and golden file names, as the CANN tools lay them out:
//   NPU dump:  {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp}
//   golden:    {op_name}.{output_index}.{timestamp}.npy
// '.', '/', '\' and spaces in names become '_'. A name longer than the filesystem allows is replaced by
// a decimal hash, and a "hash,real_name" line goes to mapping.csv in the same folder.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace npu {

std::string SanitizeDumpName(std::string_view name);

struct DumpFileName {
  std::string op_type, op_name;  // op_name as sanitised on disk
  uint64_t task_id = 0, stream_id = 0, timestamp = 0;
};
// Parses a dump file name (4 fields in old dumps without stream id); nullopt if it is not one.
std::optional<DumpFileName> ParseDumpFileName(std::string_view file);

struct GoldenFileName {
  std::string op_name;
  int output_index = 0;
  uint64_t timestamp = 0;
};
std::optional<GoldenFileName> ParseGoldenFileName(std::string_view file);  // "{op}.{idx}.{ts}.npy"

// Hands out on-disk names for one folder, hashing the ones that are too long and keeping mapping.csv.
// Thread-safe, so parallel writers can share one.
class LongNameMap {
 public:
  explicit LongNameMap(std::string dir) : dir_(std::move(dir)) {}
  // `name` must already be sanitised; returns it, or its hash stand-in when it is too long.
  Result<std::string> OnDisk(const std::string& name);

 private:
  std::string dir_;
  std::mutex mu_;
};

// mapping.csv of a folder: hash -> real name (empty when there is none).
std::map<std::string, std::string> ReadNameMapping(const std::string& dir);

constexpr size_t kMaxFileName = 255;

}  // namespace npu
