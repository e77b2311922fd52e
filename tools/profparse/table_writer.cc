#include "table_writer.h"

#include "msprof_tables.h"

#include <charconv>
#include <cmath>

#include "base/csv.h"

namespace npu::profparse {

Result<OutFile> OutFile::Create(const std::string& dir, const std::string& name) {
  OutFile f;
  f.dir_ = dir;
  f.name_ = name;
  NPU_ASSIGN_OR_RETURN(f.file_, AtomicFileWriter::Create(dir + "/" + name));
  return f;
}

void OutFile::Flush() {
  if (error_.ok() && !buf_.empty()) error_ = file_->Write(buf_);
  buf_.clear();
}

Status OutFile::Commit(const std::string& final_name) {
  Flush();
  NPU_RETURN_IF_ERROR(error_);
  return file_->CommitAs(dir_ + "/" + (final_name.empty() ? name_ : final_name));
}

void AppendMicros(std::string& out, uint64_t ns) {
  char buf[32];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, ns / 1000);
  out.append(buf, p);
  uint64_t frac = ns % 1000;
  char f[4] = {'.', static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  out.append(f, 4);
}

void AppendFixed(std::string& out, double v, int decimals) {
  // Fast path for the usual magnitudes: scale to an integer and place the point (to_chars on doubles is
  // the hottest call of an export otherwise).
  static constexpr double kScale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
  if (decimals >= 0 && decimals <= 6 && std::fabs(v) < 1e12) {
    double scaled = std::round(v * kScale[decimals]);
    bool neg = scaled < 0;
    uint64_t u = static_cast<uint64_t>(neg ? -scaled : scaled);
    char buf[32];
    char* end = buf + sizeof buf;
    char* p = end;
    for (int i = 0; i < decimals; ++i, u /= 10) *--p = static_cast<char>('0' + u % 10);
    if (decimals) *--p = '.';
    do *--p = static_cast<char>('0' + u % 10);
    while (u /= 10);
    if (neg && scaled != 0) *--p = '-';
    out.append(p, end);
    return;
  }
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  out.append(buf, ec == std::errc() ? p : buf);
}

Status TableWriter::Open() {
  std::string name = type_ + "_part" + std::to_string(done_.size()) + "_" + stamp_ + (format_ == TableFormat::kCsv ? ".csv" : ".json");
  NPU_ASSIGN_OR_RETURN(cur_, OutFile::Create(dir_, name));
  open_ = true;
  rows_in_file_ = 0;
  if (format_ == TableFormat::kCsv) {
    std::string& b = cur_.buffer();
    for (size_t i = 0; i < columns_.size(); ++i) b += (i ? "," : "") + CsvCell(columns_[i]);
    b += "\n";
  } else {
    cur_.Write("[");
  }
  return Status::Ok();
}

void TableWriter::Text(std::string_view s) {
  if (!open_ && !Open().ok()) return;
  std::string& b = cur_.buffer();
  if (format_ == TableFormat::kCsv) {
    if (cell_) b += ',';
    b += CsvCell(s);
  } else {
    b += cell_ ? ",\"" : (rows_in_file_ ? ",\n{\"" : "\n{\"");
    b += columns_[cell_];
    b += "\":\"";
    for (char c : s) {
      if (c == '"' || c == '\\') b += '\\';
      if (static_cast<unsigned char>(c) < 0x20) {
        b += ' ';
        continue;
      }
      b += c;
    }
    b += '"';
  }
  ++cell_;
}

std::string* TableWriter::BeginNumber() {
  if (!open_ && !Open().ok()) return nullptr;
  std::string& b = cur_.buffer();
  if (format_ == TableFormat::kCsv) {
    if (cell_) b += ',';
  } else {
    b += cell_ ? ",\"" : (rows_in_file_ ? ",\n{\"" : "\n{\"");
    b += columns_[cell_];
    b += "\":";
  }
  ++cell_;
  return &b;
}

void TableWriter::Number(std::string_view s) {
  if (format_ == TableFormat::kJson && s == "N/A") return Text(s);
  if (std::string* b = BeginNumber()) b->append(s);
}

void TableWriter::Integer(uint64_t v) {
  if (std::string* b = BeginNumber()) {
    char buf[24];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    b->append(buf, p);
  }
}

void TableWriter::Fixed(double v, int decimals) {
  if (!std::isfinite(v)) return Number("N/A");
  if (std::string* b = BeginNumber()) AppendFixed(*b, v, decimals);
}

void TableWriter::Micros(uint64_t ns) {
  std::string* b = BeginNumber();
  if (!b) return;
  // JSON numbers are doubles: an epoch timestamp in µs would lose its nanoseconds, so JSON gets a string.
  if (format_ == TableFormat::kJson) *b += '"';
  AppendMicros(*b, ns);
  if (format_ == TableFormat::kJson) *b += '"';
}

void TableWriter::Metric(double v) {
  if (!std::isfinite(v)) return Number("N/A");
  if (std::string* b = BeginNumber()) AppendMetric(*b, v);
}

void TableWriter::Trimmed(double v) {
  if (!std::isfinite(v)) return Number("N/A");
  if (std::string* b = BeginNumber()) AppendTrimmed(*b, v);
}

void TableWriter::Timestamp(uint64_t ns) {
  Micros(ns);
  if (format_ == TableFormat::kCsv && open_) cur_.buffer() += '\t';
}

void TableWriter::TextCached(std::string_view raw, std::string_view csv_escaped) {
  if (format_ == TableFormat::kJson) return Text(raw);
  if (!open_ && !Open().ok()) return;
  std::string& b = cur_.buffer();
  if (cell_) b += ',';
  b += csv_escaped;
  ++cell_;
}

Status TableWriter::EndRow() {
  if (!open_) NPU_RETURN_IF_ERROR(Open());
  cur_.buffer() += format_ == TableFormat::kCsv ? "\n" : "}";
  cur_.MaybeFlush();
  cell_ = 0;
  ++rows_;
  if (++rows_in_file_ == kRowsPerFile) NPU_RETURN_IF_ERROR(CloseCurrent());
  return Status::Ok();
}

Status TableWriter::CloseCurrent() {
  if (!open_) return Status::Ok();
  if (format_ == TableFormat::kJson) cur_.Write("\n]\n");
  done_.push_back(std::move(cur_));
  open_ = false;
  return Status::Ok();
}

Status TableWriter::Finish() {
  if (!open_ && done_.empty()) NPU_RETURN_IF_ERROR(Open());  // an empty table still gets its header
  NPU_RETURN_IF_ERROR(CloseCurrent());
  std::string ext = format_ == TableFormat::kCsv ? ".csv" : ".json";
  for (size_t i = 0; i < done_.size(); ++i) {
    std::string name = done_.size() == 1 ? type_ + "_" + stamp_ + ext : type_ + "_slice_" + std::to_string(i) + "_" + stamp_ + ext;
    NPU_RETURN_IF_ERROR(done_[i].Commit(name));
    committed_.push_back(name);
  }
  done_.clear();
  return Status::Ok();
}

}  // namespace npu::profparse
