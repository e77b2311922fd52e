#include "report.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "base/json.h"

namespace npu::cmp {
namespace {

// A JSON value for a cell: numbers as numbers, "NaN" as null, the rest as strings.
nlohmann::json JsonCell(const std::string& s) {
  if (s == "NaN") return nullptr;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (!s.empty() && *end == '\0' && s.find_first_not_of("0123456789.-+e") == std::string::npos) return v;
  return s;
}

}  // namespace

std::string FormatNumber(double v, bool full) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char b[64];
  std::snprintf(b, sizeof b, full ? "%.17g" : "%.6f", v);
  return b;
}

Result<std::vector<Row>> ReadCsv(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::vector<Row> rows;
  Row row;
  std::string cell;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') cell += '"', ++i;
      else if (c == '"') quoted = false;
      else cell += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      row.push_back(std::move(cell)), cell.clear();
    } else if (c == '\n') {
      row.push_back(std::move(cell)), cell.clear();
      rows.push_back(std::move(row)), row.clear();
      any = false;
      continue;
    } else {
      cell += c;
    }
    any = true;
  }
  if (quoted) return Status::Error("EC0015", "csv", path, "ends inside a quoted cell (truncated?)");
  if (any) row.push_back(std::move(cell)), rows.push_back(std::move(row));
  return rows;
}

Result<std::unique_ptr<ResultWriter>> ResultWriter::Create(const std::string& path, const std::string& format, Row header,
                                                           std::string shard_run) {
  auto r = std::make_unique<ResultWriter>();
  NPU_ASSIGN_OR_RETURN(r->w_, AtomicFileWriter::Create(path));
  r->format_ = format;
  r->shard_run_ = std::move(shard_run);
  r->header_ = std::move(header);
  // JSON keys must be unique: the two DataType/Address columns become NPU... and Golden...
  bool golden_side = false;
  for (const auto& h : r->header_) {
    if (h == "GroundTruth") golden_side = true;
    bool dup = h == "DataType" || h == "Address";
    r->keys_.push_back(dup ? (golden_side ? "Golden" : "NPU") + h : h);
  }
  if (format == "csv") {
    std::string line = r->shard_run_.empty() ? "" : "Ordinal,Run,";
    for (size_t i = 0; i < r->header_.size(); ++i) line += (i ? "," : "") + CsvCell(r->header_[i]);
    NPU_RETURN_IF_ERROR(r->w_->Write(line + "\n"));
  } else {
    nlohmann::json h = r->keys_;
    NPU_RETURN_IF_ERROR(r->w_->Write("{\"header\": " + DumpJson(h) + ",\n\"rows\": ["));
  }
  return r;
}

Status ResultWriter::Add(size_t ordinal, const Row& row) {
  std::string line;
  if (format_ == "csv") {
    if (!shard_run_.empty()) line = std::to_string(ordinal) + "," + CsvCell(shard_run_) + ",";
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "," : "") + CsvCell(row[i]);
    line += "\n";
  } else {
    nlohmann::ordered_json o;
    if (!shard_run_.empty()) o["Ordinal"] = ordinal, o["Run"] = shard_run_;
    for (size_t i = 0; i < row.size() && i < keys_.size(); ++i) o[keys_[i]] = JsonCell(row[i]);
    line = (first_ ? "\n" : ",\n") + DumpJson(o);
  }
  first_ = false;
  return w_->Write(line);
}

Result<std::string> ResultWriter::Finish() {
  if (format_ == "json") NPU_RETURN_IF_ERROR(w_->Write("\n]}\n"));
  return w_->CommitUnique();
}

}  // namespace npu::cmp
