// CANN dump files (version 2): [u64 header length][DumpData protobuf, data fields empty][raw payloads in
// input, output, buffer, workspace order]. The reader memory-maps the file and checks every length against
// the file size before touching the bytes it names; the writer is atomic.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/file_io.h"
#include "base/status.h"
#include "dump.pb.h"  // generated from dump/dump.proto
#include "ir/dtype.h"

namespace npu {

// Widens n elements to double. bool/int are exact; fp16/bf16 go through the vector converters.
void DecodeToDouble(const GeType& t, const std::byte* src, size_t n, double* dst);

struct DumpTensor {
  enum Kind { kInput, kOutput, kBuffer, kSpace };
  Kind kind = kOutput;
  int index = 0;
  int dtype_code = 0;
  int format = static_cast<int>(Format::kND);
  int sub_format = 0;  // groups of a grouped FRACTAL_Z
  std::vector<int64_t> shape, original_shape;
  std::string original_name;  // outputs only: the framework op this tensor came from
  int original_output_index = -1;
  int original_format = -1;  // outputs: the framework tensor's layout (original_op.format), -1 when not given
  uint64_t address = 0;
  std::span<const std::byte> data;
  // Set when the tensor itself is unusable (unknown dtype, size that disagrees with its shape); the
  // file's other tensors are still fine.
  std::string problem;
  const char* kind_name() const;  // "input", "output", "buffer", "space"
};

struct DumpFile {
  std::string path, op_name;
  uint64_t dump_time = 0;
  std::vector<DumpTensor> inputs, outputs, buffers, spaces;
  std::vector<std::pair<std::string, std::string>> attrs;
  MappedFile file;  // keeps every DumpTensor::data alive
};

// E19010 with the path and the exact inconsistency for a truncated or lying file.
Result<DumpFile> ReadDumpFile(const std::string& path);
// The payloads must be given in the order the header lists them, with the header's sizes.
Status WriteDumpFile(const std::string& path, const toolkit::dump::DumpData& header,
                     std::span<const std::span<const std::byte>> payloads);

}  // namespace npu
