// Where compared tensors come from, and loading them: one tensor of a dump file, a golden .npy, or an
// HDF5 dataset. Loading happens in the worker that compares the pair, so at most a few tensors per
// worker are mapped at a time.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "dump/dump_file.h"

namespace npu::cmp {

struct TensorRef {
  enum Kind { kNone, kDump, kNpy, kH5 };
  Kind kind = kNone;
  std::string path;
  bool input = false;  // dump: input or output list
  int index = 0;       // dump: position in that list
  std::string dataset;  // h5: dataset path
  uint64_t bytes = 0;   // estimated payload size, for scheduling and sharding
  // dump inputs: the framework layout of the tensor (original_op.format of the output that produced it),
  // which input descs do not carry; -1 when unknown.
  int framework_format = -1;
  bool present() const { return kind != kNone; }
};

struct LoadedTensor {
  const GeType* dtype = nullptr;
  std::span<const std::byte> data;
  std::vector<int64_t> shape;
  int format = static_cast<int>(Format::kND);
  uint64_t address = 0;
  std::shared_ptr<const void> keep;  // mapping or buffer that `data` points into
  std::string problem;               // the tensor exists but cannot be compared (why)
  size_t numel() const { return dtype ? data.size() / dtype->size : 0; }
};

class CustomScripts;  // custom_scripts.h

// Dump tensors in a device layout are converted back to NCHW/ND and cropped to the original shape, by the
// user's format_convert script for that pair when `scripts` has one. A tensor-level problem (unknown dtype,
// lying size, a failing script) comes back in LoadedTensor::problem; an unreadable file is an error.
Result<LoadedTensor> Load(const TensorRef& r, CustomScripts* scripts = nullptr);

// One NPU dump file found under a folder.
struct DumpEntry {
  std::string path, op_type, op_name;  // op_name as on disk (sanitised)
  uint64_t task_id = 0, timestamp = 0, step = 0;
};
// Dump files below `dir` (any depth), one per op name: where several steps hold the same op the largest
// step wins, then the latest timestamp. Long names are resolved through mapping.csv.
std::map<std::string, DumpEntry> ScanDumps(const std::string& dir, std::vector<std::string>* skipped);

// Golden .npy files below `dir`: "{op}.{output}" -> path, same step rule.
std::map<std::string, std::string> ScanGoldens(const std::string& dir);

uint64_t FileSize(const std::string& path);

// The real name of a dump or golden file: itself, or through its folder's mapping.csv when the name on
// disk is a hash stand-in for a name too long for the filesystem. `cache` holds the mappings read so far.
using NameMaps = std::map<std::string, std::map<std::string, std::string>>;
std::string RealFileName(const std::string& path, NameMaps& cache);

}  // namespace npu::cmp
