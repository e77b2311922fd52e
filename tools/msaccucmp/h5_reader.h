// HDF5 dumps of the Ascend PyTorch dumper: /{op}/{seqid}/{input|output}/{name} datasets.
// libhdf5 (Debian's serial build) is not thread-safe, so every call here holds one lock.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "sources.h"

namespace npu::cmp {

struct H5Dataset {
  std::string path;  // "/AddmmBackward/4/input/mat1"
  std::string op, io, name;
  uint64_t seq = 0, bytes = 0;
};

// Every tensor dataset (attribute Type absent or 0) laid out as /op/seq/io/name; other datasets are skipped.
Result<std::vector<H5Dataset>> ListH5Datasets(const std::string& file);
Result<LoadedTensor> ReadH5Dataset(const std::string& file, const std::string& dataset);
// ListH5Datasets in a child process: libhdf5 decodes some corrupt files without bounds checks
// (fuzz/known_issues/libhdf5), so a fault in the library while it walks the groups and every dataset's object
// header, attributes and chunk index is a coded error, not a crash. The child sends the listing back.
Result<std::vector<H5Dataset>> ListH5DatasetsIsolated(const std::string& file);
// ReadH5Dataset in a child process, for the same reason (a corrupt chunk index or filter pipeline faults inside
// H5Dread); the tensor comes back through a pipe.
Result<LoadedTensor> ReadH5DatasetIsolated(const std::string& file, const std::string& dataset);

}  // namespace npu::cmp
