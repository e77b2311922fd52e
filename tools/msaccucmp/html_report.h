// A comparison's result as a page people can look at: one self-contained HTML file (inline CSS and SVG, nothing
// fetched), per op in execution order the cosine similarity and the max relative error (log scale) in verdict
// colours, the first divergent op marked, the overflow rows, and a table of the worst ops with every metric and
// their dump files; chart points link to their table rows. Long runs stay light: past one point per pixel the
// charts draw each pixel column's min..max, and the table keeps the worst kMaxTableRows.
#pragma once
#include <string>
#include <vector>

#include "base/status.h"
#include "report.h"

namespace npu::cmp {

constexpr size_t kMaxTableRows = 1000;

// What an index page shows of one comparison.
struct HtmlPageSummary {
  std::string title, page;                       // the page's title and file name
  size_t pass = 0, warn = 0, fail = 0, skip = 0;
  std::string first_divergent;                   // "Index N name", or empty
  std::vector<double> cosine;                    // a few hundred points, for the sparkline
};

// The page of one result table (header first), titled `title`.
std::string RenderHtmlReport(const std::vector<Row>& table, const std::string& title, HtmlPageSummary* summary = nullptr);
// An index of several pages, one row each.
std::string RenderHtmlIndex(const std::vector<HtmlPageSummary>& pages, const std::string& title);
// --report's value: empty or "html", on a CSV result that is not a shard's (the merge makes the shards' page).
Status CheckReportFlag(const std::string& report, const std::string& format, bool shard);
// Reads a CSV result and writes its page beside it (<stem>.html); returns the page's path.
Result<std::string> WriteHtmlReport(const std::string& csv_path, HtmlPageSummary* summary = nullptr);

}  // namespace npu::cmp
