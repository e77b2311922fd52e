// Output files of profparse: written under a temporary name and renamed into place only when complete
// (a failed export leaves no half-written CSV), buffered, and rolled over every 1,000,000 rows as msprof does.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/file_io.h"
#include "base/status.h"

namespace npu::profparse {

// One output file: a buffer over base's AtomicFileWriter (temporary name until Commit renames it).
class OutFile {
 public:
  static Result<OutFile> Create(const std::string& dir, const std::string& name);
  void Write(std::string_view s) {
    buf_.append(s);
    MaybeFlush();
  }
  std::string& buffer() { return buf_; }  // append directly, then call MaybeFlush()
  void MaybeFlush() {
    if (buf_.size() >= kFlushBytes) Flush();
  }
  Status Commit(const std::string& final_name);  // "" keeps the name given to Create

 private:
  static constexpr size_t kFlushBytes = 1 << 20;
  void Flush();
  std::string dir_, name_, buf_;
  std::unique_ptr<AtomicFileWriter> file_;
  Status error_;  // the first failed write, reported by Commit
};

enum class TableFormat { kCsv, kJson };

// A summary table (op_summary, task_time, ...): CSV with formula-safe text cells, or a JSON array of row
// objects. Rows past 1,000,000 start a new file; names follow msprof: <type>_<ts>.csv, or
// <type>_slice_<n>_<ts>.csv when the table needed more than one file.
class TableWriter {
 public:
  static constexpr uint64_t kRowsPerFile = 1000000;
  TableWriter(std::string dir, std::string type, std::string stamp, std::vector<std::string> columns, TableFormat format)
      : dir_(std::move(dir)), type_(std::move(type)), stamp_(std::move(stamp)), columns_(std::move(columns)), format_(format) {}
  void Text(std::string_view s);  // a text cell (quoted/escaped as needed)
  void Number(std::string_view s);  // a numeric cell or N/A, written as is
  // Hot-path cells that format straight into the buffer (no temporaries).
  void Integer(uint64_t v);
  void Fixed(double v, int decimals);  // N/A when not finite
  void Metric(double v);  // msprof's metric form: three decimals at most, trailing zeros dropped ("0.33", "0.0")
  void Trimmed(double v);  // op_statistic's form: also a bare point dropped ("7.84", "100")
  void Micros(uint64_t ns);
  // A point in time in µs as msprof writes it: three decimals and, in CSV, a TAB after them (so a spreadsheet
  // keeps every digit of an epoch-scale number rather than rounding it to a float).
  void Timestamp(uint64_t ns);
  // A text cell whose CSV form the caller already holds (per-op strings repeat millions of times).
  void TextCached(std::string_view raw, std::string_view csv_escaped);
  Status EndRow();
  Status Finish();  // commits every file; names decided here
  uint64_t rows() const { return rows_; }
  std::vector<std::string> files() const { return committed_; }

 private:
  Status Open();
  Status CloseCurrent();
  std::string* BeginNumber();  // the buffer, positioned for a numeric cell
  std::string dir_, type_, stamp_;
  std::vector<std::string> columns_;
  TableFormat format_;
  std::vector<OutFile> done_;  // full files waiting for their final names
  OutFile cur_;
  bool open_ = false;
  uint64_t rows_ = 0, rows_in_file_ = 0;
  size_t cell_ = 0;
  std::vector<std::string> committed_;
};

// ns as microseconds with exactly three decimals, without floating point ("1234.567").
void AppendMicros(std::string& out, uint64_t ns);
// A double with `decimals` digits after the point.
void AppendFixed(std::string& out, double v, int decimals);

}  // namespace npu::profparse
