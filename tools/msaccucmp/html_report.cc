#include "html_report.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <sstream>

#include "base/file_io.h"
#include "base/text.h"
#include "summary.h"

namespace npu::cmp {
namespace {

namespace fs = std::filesystem;

// The chart's geometry, in SVG user units (the page scales it to the window).
constexpr int kPlotWidth = 1000, kPlotHeight = 140, kLeft = 70, kRight = 20, kTop = 24, kBottom = 22;
constexpr size_t kSparkPoints = 240;  // an index row's sparkline
constexpr int kSparkWidth = 160, kSparkHeight = 28;

// The page fetches nothing, and says so to the browser: no source is allowed but the inline styles and SVG.
constexpr const char* kHead =
    "<meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">";
constexpr const char* kStyle = R"(body{font:14px system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:16px;margin-top:28px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:3px 6px;text-align:right;white-space:nowrap}
th{background:#f4f4f4;position:sticky;top:0}td.t{text-align:left}tr.first{outline:2px solid #d62728}
.PASS{color:#2e9e4f}.WARN{color:#c98a00}.FAIL{color:#d62728;font-weight:bold}.SKIP{color:#888}
svg{max-width:100%;height:auto}.note{color:#666}a{color:inherit})";

std::string_view VerdictColour(std::string_view v) {
  if (v == "PASS") return "#2e9e4f";
  if (v == "WARN") return "#e0a000";
  if (v == "FAIL") return "#d62728";
  return "#9e9e9e";
}
int VerdictRank(std::string_view v) { return v == "FAIL" ? 3 : v == "WARN" ? 2 : v == "PASS" ? 1 : 0; }

std::string Esc(std::string_view s) {
  std::string out;
  for (char c : EscapeNonUtf8(s)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

double Num(const std::string& cell) {
  if (cell.empty() || cell == "NaN" || cell == "nan") return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(cell.c_str(), &end);
  return *end == '\0' ? v : std::numeric_limits<double>::quiet_NaN();
}

std::string Fixed(double v, int digits = 1) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(digits);
  s << v;
  return s.str();
}

// The result table with its columns found by name.
struct ResultTable {
  Row header;
  std::vector<Row> rows;
  int Col(const std::string& name) const {
    auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? -1 : static_cast<int>(it - header.begin());
  }
  std::string Cell(size_t r, int c) const { return c >= 0 && static_cast<size_t>(c) < rows[r].size() ? rows[r][c] : std::string(); }
};

// One chart: a metric per row in execution order.
struct Series {
  std::string title;
  std::vector<double> v;
  bool log_scale = false;
  bool lower_is_worse = true;  // cosine: low is bad; an error: high is bad
};

struct Marks {
  const std::vector<std::string>* verdicts;
  const std::vector<int>* anchor;    // per row: its table row id, or -1
  const std::vector<bool>* overflow;
  const std::vector<std::string>* label;
  size_t first_divergent;
};

std::string Chart(const Series& s, const Marks& m) {
  const size_t n = s.v.size();
  auto value = [&](double v) { return s.log_scale ? (v > 0 ? std::log10(v) : std::numeric_limits<double>::quiet_NaN()) : v; };
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : s.v)
    if (double y = value(x); std::isfinite(y)) lo = std::min(lo, y), hi = std::max(hi, y);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (s.log_scale) lo = std::floor(lo), hi = std::max(std::ceil(hi), lo + 1);
  else if (hi - lo < 1e-6) lo = hi - 1e-3;
  const int W = kLeft + kPlotWidth + kRight, H = kTop + kPlotHeight + kBottom;
  auto X = [&](double i) { return kLeft + (n > 1 ? i / static_cast<double>(n - 1) : 0.5) * kPlotWidth; };
  auto Y = [&](double y) { return kTop + (1 - (y - lo) / (hi - lo)) * kPlotHeight; };
  auto tick = [&](double y) { return s.log_scale ? "1e" + Fixed(y + 0.0, 0) : Fixed(y, 4); };  // + 0.0: no "1e-0"
  std::ostringstream o;
  o << "<svg viewBox=\"0 0 " << W << " " << H << "\" role=\"img\"><text x=\"" << kLeft << "\" y=\"16\" font-size=\"13\">" << Esc(s.title)
    << (s.log_scale ? " (log scale)" : "") << "</text>";
  o << "<rect x=\"" << kLeft << "\" y=\"" << kTop << "\" width=\"" << kPlotWidth << "\" height=\"" << kPlotHeight << "\" fill=\"#fafafa\" stroke=\"#ccc\"/>";
  for (double y : {lo, (lo + hi) / 2, hi})
    o << "<text x=\"" << kLeft - 4 << "\" y=\"" << Fixed(Y(y) + 4) << "\" font-size=\"10\" text-anchor=\"end\">" << tick(y) << "</text>";
  o << "<text x=\"" << kLeft << "\" y=\"" << H - 6 << "\" font-size=\"10\">0</text><text x=\"" << kLeft + kPlotWidth << "\" y=\"" << H - 6
    << "\" font-size=\"10\" text-anchor=\"end\">" << (n ? n - 1 : 0) << "</text>";
  // A mark for `row`: <tag attrs> with a tooltip, inside a link to the row's table entry when it has one.
  auto mark = [&](size_t row, const char* tag, const std::string& attrs) {
    const int a = (*m.anchor)[row];
    const std::string tip = Esc((*m.label)[row]) + ": " + (std::isfinite(s.v[row]) ? FormatNumber(s.v[row]) : std::string("NaN"));
    const std::string el = std::string("<") + tag + " " + attrs + "><title>" + tip + "</title></" + tag + ">";
    return a >= 0 ? "<a href=\"#r" + std::to_string(a) + "\">" + el + "</a>" : el;
  };
  if (n <= static_cast<size_t>(kPlotWidth)) {  // one point per row
    for (size_t i = 0; i < n; ++i) {
      const double y = value(s.v[i]);
      if (!std::isfinite(y)) continue;
      o << mark(i, "circle", "cx=\"" + Fixed(X(static_cast<double>(i))) + "\" cy=\"" + Fixed(Y(y)) + "\" r=\"2.5\" fill=\"" +
                                   std::string(VerdictColour((*m.verdicts)[i])) + "\"");
    }
  } else {  // one column per pixel: its rows' min..max, in the worst verdict's colour, linked to its worst row
    for (int c = 0; c < kPlotWidth; ++c) {
      const size_t b = n * static_cast<size_t>(c) / kPlotWidth, e = n * static_cast<size_t>(c + 1) / kPlotWidth;
      double cmin = std::numeric_limits<double>::infinity(), cmax = -cmin;
      size_t worst = b;
      int rank = -1;
      for (size_t i = b; i < e; ++i) {
        const double y = value(s.v[i]);
        if (std::isfinite(y)) cmin = std::min(cmin, y), cmax = std::max(cmax, y);
        const int r = VerdictRank((*m.verdicts)[i]);
        const bool worse_value = std::isfinite(y) && (s.lower_is_worse ? y <= cmin : y >= cmax);
        if (r > rank || (r == rank && worse_value)) rank = r, worst = i;
      }
      if (!std::isfinite(cmin)) continue;
      const double x = kLeft + c + 0.5;
      o << mark(worst, "line", "x1=\"" + Fixed(x) + "\" x2=\"" + Fixed(x) + "\" y1=\"" + Fixed(Y(cmin) + 0.8) + "\" y2=\"" + Fixed(Y(cmax) - 0.8) +
                                   "\" stroke-width=\"1\" stroke=\"" + std::string(VerdictColour((*m.verdicts)[worst])) + "\"");
    }
  }
  for (size_t i = 0, last_px = std::numeric_limits<size_t>::max(); i < n; ++i)  // overflow rows: a mark at the top
    if ((*m.overflow)[i] && static_cast<size_t>(X(static_cast<double>(i))) != last_px) {
      last_px = static_cast<size_t>(X(static_cast<double>(i)));
      o << "<path d=\"M" << Fixed(X(static_cast<double>(i))) << " " << kTop + 8 << "l-4 -7h8z\" fill=\"#d62728\"><title>overflow: "
        << Esc((*m.label)[i]) << "</title></path>";
    }
  if (m.first_divergent != std::string::npos) {
    const double x = X(static_cast<double>(m.first_divergent));
    o << "<line x1=\"" << Fixed(x) << "\" x2=\"" << Fixed(x) << "\" y1=\"" << kTop << "\" y2=\"" << kTop + kPlotHeight
      << "\" stroke=\"#d62728\" stroke-dasharray=\"4 3\"/><text x=\"" << Fixed(std::min(x + 4, static_cast<double>(kLeft + kPlotWidth - 200)))
      << "\" y=\"" << kTop + 12 << "\" font-size=\"11\" fill=\"#d62728\">first divergent</text>";
  }
  o << "</svg>\n";
  return o.str();
}

bool Overflowed(const ResultTable& t, size_t r, int c_flag, int c_nan, int c_inf) {
  const std::string flag = t.Cell(r, c_flag);
  if (flag == "YES" || flag == "True" || flag == "true") return true;
  for (int c : {c_nan, c_inf})
    if (const double v = Num(t.Cell(r, c)); std::isfinite(v) && v > 0) return true;
  return false;
}

std::string TableRows(const ResultTable& t, const std::vector<size_t>& order, const std::vector<int>& anchor, size_t first, int c_verdict) {
  std::ostringstream o;
  o << "<table><tr>";
  for (const auto& h : t.header) o << "<th>" << Esc(h) << "</th>";
  o << "</tr>\n";
  for (size_t r : order) {
    o << "<tr" << (anchor[r] >= 0 ? " id=\"r" + std::to_string(anchor[r]) + "\"" : "") << (r == first ? " class=\"first\"" : "") << ">";
    for (size_t c = 0; c < t.header.size(); ++c) {
      const std::string cell = t.Cell(r, static_cast<int>(c));
      const bool text = std::isnan(Num(cell)) && cell != "NaN";
      o << "<td" << (static_cast<int>(c) == c_verdict ? " class=\"" + Esc(cell) + "\"" : text ? " class=\"t\"" : "") << ">" << Esc(cell) << "</td>";
    }
    o << "</tr>\n";
  }
  o << "</table>\n";
  return o.str();
}

std::vector<double> Sparkline(const std::vector<double>& v) {
  if (v.size() <= kSparkPoints) return v;
  std::vector<double> out;
  for (size_t k = 0; k < kSparkPoints; ++k) {  // each point the worst (lowest) of its share: a dip stays visible
    const size_t b = v.size() * k / kSparkPoints, e = v.size() * (k + 1) / kSparkPoints;
    double worst = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = b; i < e; ++i)
      if (std::isfinite(v[i]) && !(v[i] >= worst)) worst = v[i];
    out.push_back(worst);
  }
  return out;
}

}  // namespace

std::string RenderHtmlReport(const std::vector<Row>& table, const std::string& title, HtmlPageSummary* summary) {
  ResultTable t;
  if (!table.empty()) t.header = table[0], t.rows.assign(table.begin() + 1, table.end());
  const size_t n = t.rows.size();
  const int c_verdict = t.Col("Verdict"), c_cos = t.Col("CosineSimilarity"), c_rel = t.Col("MaxRelativeError"), c_index = t.Col("Index"),
            c_name = t.Col("NPUDump"), c_tensor = t.Col("TensorIndex") >= 0 ? t.Col("TensorIndex") : t.Col("GroundTruthPath");
  std::vector<std::string> verdicts(n), labels(n);
  std::vector<double> cosine(n), rel(n);
  std::vector<bool> overflow(n);
  Summary sum(t.header);
  size_t counts[4] = {0, 0, 0, 0};  // SKIP, PASS, WARN, FAIL
  for (size_t r = 0; r < n; ++r) {
    sum.Add(t.rows[r]);
    verdicts[r] = t.Cell(r, c_verdict);
    ++counts[VerdictRank(verdicts[r])];
    labels[r] = "Index " + t.Cell(r, c_index) + " " + t.Cell(r, c_name) + " " + t.Cell(r, c_tensor);
    cosine[r] = Num(t.Cell(r, c_cos));
    rel[r] = Num(t.Cell(r, c_rel));
    overflow[r] = Overflowed(t, r, t.Col("OverFlow"), t.Col("NPUNaN"), t.Col("NPUInf"));
  }
  bool inputs_compared = false;
  const size_t first = sum.FirstDivergentRow(&inputs_compared);
  // The table: every row when there are few, else the worst kMaxTableRows (FAIL first, then by cosine).
  std::vector<size_t> order(n);
  for (size_t r = 0; r < n; ++r) order[r] = r;
  const bool truncated = n > kMaxTableRows;
  if (truncated) {
    auto worse = [&](size_t a, size_t b) {
      const int ra = VerdictRank(verdicts[a]), rb = VerdictRank(verdicts[b]);
      if (ra != rb) return ra > rb;
      const double ca = std::isfinite(cosine[a]) ? cosine[a] : 2, cb = std::isfinite(cosine[b]) ? cosine[b] : 2;
      return ca != cb ? ca < cb : a < b;
    };
    std::partial_sort(order.begin(), order.begin() + kMaxTableRows, order.end(), worse);
    order.resize(kMaxTableRows);
    if (first != std::string::npos && std::find(order.begin(), order.end(), first) == order.end()) order.back() = first;
  }
  std::vector<int> anchor(n, -1);
  for (size_t r : order) anchor[r] = static_cast<int>(r);
  std::vector<size_t> overflow_rows;
  for (size_t r = 0; r < n && overflow_rows.size() < kMaxTableRows; ++r)
    if (overflow[r]) overflow_rows.push_back(r);

  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head>" << kHead << "<title>" << Esc(title) << "</title><style>" << kStyle << "</style></head><body>\n";
  o << "<h1>" << Esc(title) << "</h1>\n<p>" << n << " tensor pair(s): <span class=\"PASS\">PASS " << counts[1] << "</span>, <span class=\"WARN\">WARN "
    << counts[2] << "</span>, <span class=\"FAIL\">FAIL " << counts[3] << "</span>, <span class=\"SKIP\">SKIP " << counts[0] << "</span>";
  if (!overflow_rows.empty()) o << "; " << std::count(overflow.begin(), overflow.end(), true) << " with overflow";
  o << "</p>\n";
  if (first != std::string::npos)
    o << "<p>First divergent op (" << (inputs_compared ? "its inputs pass, its output fails" : "its output fails; its inputs were not dumped, so it may only inherit the error")
      << "): <a href=\"#r" << first << "\">" << Esc(labels[first]) << "</a>, cosine " << Esc(t.Cell(first, c_cos)) << "</p>\n";
  else if (counts[3])
    o << "<p>No op fails with passing inputs: every failure follows a failing input.</p>\n";
  const Marks marks{&verdicts, &anchor, &overflow, &labels, first};
  o << Chart({"Cosine similarity per tensor, in execution order", cosine, false, true}, marks);
  o << Chart({"Max relative error per tensor, in execution order", rel, true, false}, marks);
  if (n > static_cast<size_t>(kPlotWidth))
    o << "<p class=\"note\">" << n << " rows: each pixel column shows its rows' range, in the colour of its worst verdict.</p>\n";
  if (!overflow_rows.empty()) o << "<h2>Overflow</h2>\n" << TableRows(t, overflow_rows, anchor, first, c_verdict);
  o << "<h2>" << (truncated ? "The " + std::to_string(kMaxTableRows) + " worst tensors (FAIL first, then by cosine)" : std::string("Every tensor"))
    << "</h2>\n"
    << TableRows(t, order, anchor, first, c_verdict) << "</body></html>\n";
  if (summary) {
    summary->title = title;
    summary->skip = counts[0], summary->pass = counts[1], summary->warn = counts[2], summary->fail = counts[3];
    summary->first_divergent = first == std::string::npos ? "" : labels[first];
    summary->cosine = Sparkline(cosine);
  }
  return o.str();
}

std::string RenderHtmlIndex(const std::vector<HtmlPageSummary>& pages, const std::string& title) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html><head>" << kHead << "<title>" << Esc(title) << "</title><style>" << kStyle << "</style></head><body>\n<h1>"
    << Esc(title) << "</h1>\n<table><tr><th>result</th><th>PASS</th><th>WARN</th><th>FAIL</th><th>SKIP</th><th>first divergent op</th><th>cosine</th></tr>\n";
  for (const auto& p : pages) {
    o << "<tr><td class=\"t\"><a href=\"" << Esc(p.page) << "\">" << Esc(p.title) << "</a></td><td class=\"PASS\">" << p.pass << "</td><td class=\"WARN\">"
      << p.warn << "</td><td class=\"FAIL\">" << p.fail << "</td><td class=\"SKIP\">" << p.skip << "</td><td class=\"t\">" << Esc(p.first_divergent)
      << "</td><td><svg viewBox=\"0 0 " << kSparkWidth << " " << kSparkHeight << "\" width=\"" << kSparkWidth << "\" height=\"" << kSparkHeight << "\">";
    double lo = 1, hi = 1;
    for (double v : p.cosine)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    if (hi - lo < 1e-6) lo = hi - 1e-3;
    std::string points;
    for (size_t i = 0; i < p.cosine.size(); ++i)
      if (std::isfinite(p.cosine[i]))
        points += Fixed(p.cosine.size() > 1 ? static_cast<double>(i) * (kSparkWidth - 2) / static_cast<double>(p.cosine.size() - 1) + 1 : 1) + "," +
                  Fixed(1 + (hi - p.cosine[i]) / (hi - lo) * (kSparkHeight - 2)) + " ";
    o << "<polyline fill=\"none\" stroke=\"" << (p.fail ? "#d62728" : "#2e9e4f") << "\" stroke-width=\"1\" points=\"" << points << "\"/></svg></td></tr>\n";
  }
  o << "</table></body></html>\n";
  return o.str();
}

Status CheckReportFlag(const std::string& report, const std::string& format, bool shard) {
  if (report.empty()) return Status::Ok();
  if (report != "html") return Status::Error("E10001", "--report", report, "the report format must be html");
  if (format != "csv") return Status::Error("E10001", "--report", report, "the report is made from a CSV result", "Drop --format json, or use csv.");
  if (shard) return Status::Error("E10001", "--report", report, "a shard holds part of the rows", "Give --report html to msaccucmp merge.");
  return Status::Ok();
}

Result<std::string> WriteHtmlReport(const std::string& csv_path, HtmlPageSummary* summary) {
  NPU_ASSIGN_OR_RETURN(std::vector<Row> table, ReadCsv(csv_path));
  const fs::path html = fs::path(csv_path).replace_extension(".html");
  const std::string page = RenderHtmlReport(table, fs::path(csv_path).filename().string(), summary);
  if (summary) summary->page = html.filename().string();
  NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(html.string()));
  NPU_RETURN_IF_ERROR(w->Write(page));
  NPU_RETURN_IF_ERROR(w->Commit());
  return html.string();
}

}  // namespace npu::cmp
