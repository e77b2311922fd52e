// The other msaccucmp subcommands: convert, file_compare, overflow and merge.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "ir/dtype.h"

namespace npu::cmp {

// Prints "[ERROR] <message>" and returns the exit code (2 for a usage error, else 1). A file the writer could not create is named by the
// flag the user gave it (-out), not the writer's generic "output".
int Fail(std::ostream& out, Status s);

// An .npy of raw tensor bytes (bfloat16, which numpy lacks, widened to float32).
Status WriteNpyBytes(const std::string& path, const GeType& d, const std::vector<int64_t>& shape, std::span<const std::byte> data);

struct ConvertOptions {
  std::string dump, out, type = "npy", format, shape, output_index, input_index, custom;
};
int RunConvert(const ConvertOptions& o, std::ostream& out);

int RunFileCompare(const std::string& npu, const std::string& golden, const std::string& out_dir, std::ostream& out);

int RunOverflow(const std::string& dump_dir, const std::string& out_dir, const std::string& top, std::ostream& out);

// Shard results (files or folders holding result_*_shard{K}of{N}.csv|json) -> one result file.
int RunMerge(const std::vector<std::string>& inputs, const std::string& out_dir, const std::string& format, const std::string& report,
             std::ostream& out);

// Result CSVs (files, or folders holding result_*.csv) -> a page each beside it, and with several an index page,
// OUT/index.html, linking them (html_report.h).
int RunReport(const std::vector<std::string>& inputs, const std::string& out_dir, std::ostream& out);

}  // namespace npu::cmp
