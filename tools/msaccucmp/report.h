// Result tables: CSV as msaccucmp writes it (quoted where needed, 6-decimal metrics) or JSON
// ({"header": [...], "rows": [{...}]}), written atomically row by row. Shard files carry two leading columns:
// Ordinal, so `merge` can restore the single-run order, and Run, "<fingerprint>/<rows of the whole run>", so that it
// can tell shards of another comparison and a shard cut short (kShardRunColumns).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "base/csv.h"
#include "base/file_io.h"
#include "base/progress.h"  // Timestamp14 for result names
#include "base/status.h"

namespace npu::cmp {

using Row = std::vector<std::string>;

class ResultWriter {
 public:
  // `shard_run`: empty for a whole result; a shard's Run value otherwise.
  static Result<std::unique_ptr<ResultWriter>> Create(const std::string& path, const std::string& format, Row header,
                                                      std::string shard_run = {});
  Status Add(size_t ordinal, const Row& row);
  // Publishes the file under the path given to Create, or with a _N suffix when a file holds it (never
  // replacing an earlier result); returns the name used.
  Result<std::string> Finish();

 private:
  std::unique_ptr<AtomicFileWriter> w_;
  std::string format_;
  Row header_, keys_;
  std::string shard_run_;
  bool first_ = true;
};

Result<std::vector<Row>> ReadCsv(const std::string& path);  // the subset of CSV that npu::CsvCell writes
// msaccucmp's number cells: 6 decimals ("NaN", "inf", "-inf" spelled out); full = 17 significant digits.
std::string FormatNumber(double v, bool full = false);

}  // namespace npu::cmp
