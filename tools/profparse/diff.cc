// `profparse diff A B`: where B's time differs from A's, per op (aligned by op sequence) and per op type.
#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "base/cli.h"
#include "profparse.h"
#include "raw_profile.h"

namespace npu::profparse {
namespace {

struct OpTime {
  std::string name, type;
  double total_us = 0;
  uint64_t count = 0;
  double mean() const { return count ? total_us / static_cast<double>(count) : 0; }
};

// Mean duration of each task over the profile's iterations, in task order.
Result<std::vector<OpTime>> OpTimes(const std::string& output, const std::string& param) {
  NPU_ASSIGN_OR_RETURN(auto dirs, FindProfDirs(output, param));
  NPU_ASSIGN_OR_RETURN(RawProfile p, LoadProfile(dirs.front()));
  NPU_ASSIGN_OR_RETURN(TaskStream tasks, TaskStream::Open(p, false));
  NoteIncomplete(p, tasks.incomplete());
  std::map<std::pair<uint32_t, uint32_t>, OpTime> by_task;
  const PmuSample* none = nullptr;
  for (DeviceTask h; tasks.Next(h, none);) {
    const NodeInfo* n = p.Node(h.stream_id, h.task_id);
    if (!n) continue;  // the runtime's own tasks are not ops
    OpTime& t = by_task[{h.stream_id, h.task_id}];
    if (t.count == 0) t.name = n->op_name, t.type = n->op_type;
    t.total_us += static_cast<double>(h.end_ticks - h.start_ticks) * 1000 / p.device.hwts_mhz / 1000;
    ++t.count;
  }
  NPU_RETURN_IF_ERROR(tasks.status());
  std::vector<OpTime> v;
  for (auto& [k, t] : by_task) v.push_back(std::move(t));
  return v;
}

// Pairs (i in a, j in b) of a longest common subsequence of op types; by index when the product is too
// large for the table (the same guard msprof-analyze documents for its compare).
std::vector<std::pair<int, int>> Align(const std::vector<OpTime>& a, const std::vector<OpTime>& b) {
  size_t n = a.size(), m = b.size();
  std::vector<std::pair<int, int>> pairs;
  constexpr double kMaxCells = 5e7;
  if (static_cast<double>(n) * static_cast<double>(m) > kMaxCells) {
    for (size_t i = 0; i < std::min(n, m); ++i) pairs.emplace_back(static_cast<int>(i), static_cast<int>(i));
    return pairs;
  }
  std::vector<uint32_t> dp((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint32_t& { return dp[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = a[i].type == b[j].type ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
  for (size_t i = 0, j = 0; i < n && j < m;) {
    if (a[i].type == b[j].type) pairs.emplace_back(static_cast<int>(i++), static_cast<int>(j++));
    else if (at(i + 1, j) >= at(i, j + 1)) ++i;
    else ++j;
  }
  return pairs;
}

}  // namespace

int DiffProfiles(const std::string& a_dir, const std::string& b_dir, std::ostream& out) {
  auto a = OpTimes(a_dir, "diff A"), b = OpTimes(b_dir, "diff B");
  if (!a.ok() || !b.ok()) {  // both folders' problems at once
    for (auto* r : {&a, &b})
      if (!r->ok()) cli::PrintError(out, r->status());
    return 1;
  }
  auto pairs = Align(a.value(), b.value());
  struct Row { std::string name, type; double a, b; };
  std::vector<Row> rows;
  for (auto [i, j] : pairs) rows.push_back({b.value()[j].name, b.value()[j].type, a.value()[i].mean(), b.value()[j].mean()});
  std::map<std::string, std::pair<double, double>> types;
  double ta = 0, tb = 0;
  for (const auto& t : a.value()) types[t.type].first += t.mean(), ta += t.mean();
  for (const auto& t : b.value()) types[t.type].second += t.mean(), tb += t.mean();
  out.setf(std::ios::fixed);
  out.precision(3);
  out << "Total per iteration: A " << ta << " us, B " << tb << " us, delta " << tb - ta << " us ("
      << (ta > 0 ? 100 * (tb - ta) / ta : 0) << "%); " << pairs.size() << " ops aligned of " << a.value().size() << " / " << b.value().size() << "\n\n";
  out << "OP Type,A Total(us),B Total(us),Delta(us),Diff Ratio\n";
  std::vector<std::pair<std::string, std::pair<double, double>>> tv(types.begin(), types.end());
  std::sort(tv.begin(), tv.end(), [](const auto& x, const auto& y) { return std::abs(x.second.second - x.second.first) > std::abs(y.second.second - y.second.first); });
  for (const auto& [type, v] : tv) out << type << "," << v.first << "," << v.second << "," << v.second - v.first << "," << (v.first > 0 ? v.second / v.first : 0) << "\n";
  std::sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) { return y.b - y.a < x.b - x.a; });
  out << "\nTop regressions (B slower than A)\nOp Name,OP Type,A(us),B(us),Delta(us)\n";
  for (size_t i = 0; i < rows.size() && i < 10 && rows[i].b > rows[i].a; ++i)
    out << rows[i].name << "," << rows[i].type << "," << rows[i].a << "," << rows[i].b << "," << rows[i].b - rows[i].a << "\n";
  return 0;
}

}  // namespace npu::profparse
