#include "dump/dump_names.h"

#include <xxhash.h>

#include <charconv>
#include <fstream>
#include <vector>

#include "base/file_io.h"

namespace npu {
namespace {

std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t b = 0;
  for (size_t e; (e = s.find('.', b)) != std::string_view::npos; b = e + 1) parts.push_back(s.substr(b, e - b));
  parts.push_back(s.substr(b));
  return parts;
}

std::optional<uint64_t> Number(std::string_view s) {
  uint64_t v;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

std::string SanitizeDumpName(std::string_view name) {
  std::string s(name);
  for (char& c : s)
    if (c == '.' || c == '/' || c == '\\' || c == ' ') c = '_';
  return s;
}

std::optional<DumpFileName> ParseDumpFileName(std::string_view file) {
  auto p = SplitDots(file);
  if (p.size() != 5 && p.size() != 4) return std::nullopt;
  DumpFileName n{std::string(p[0]), std::string(p[1])};
  auto task = Number(p[2]), last = Number(p.back());
  auto stream = p.size() == 5 ? Number(p[3]) : std::optional<uint64_t>(0);
  if (n.op_type.empty() || n.op_name.empty() || !task || !stream || !last) return std::nullopt;
  n.task_id = *task;
  n.stream_id = *stream;
  n.timestamp = *last;
  return n;
}

std::optional<GoldenFileName> ParseGoldenFileName(std::string_view file) {
  auto p = SplitDots(file);
  if (p.size() != 4 || p[3] != "npy" || p[0].empty()) return std::nullopt;
  auto idx = Number(p[1]), ts = Number(p[2]);
  if (!idx || !ts || *idx > 1000000) return std::nullopt;
  return GoldenFileName{std::string(p[0]), static_cast<int>(*idx), *ts};
}

Result<std::string> LongNameMap::OnDisk(const std::string& name) {
  if (name.size() <= kMaxFileName) return name;
  // Keep a recognisable extension so readers still know a .npy from a dump.
  std::string ext = name.ends_with(".npy") ? ".npy" : "";
  std::string hashed = std::to_string(XXH3_64bits(name.data(), name.size())) + ext;
  std::lock_guard lock(mu_);
  std::ofstream m(dir_ + "/mapping.csv", std::ios::app);
  m << hashed << "," << name << "\n";
  if (!m.flush()) return Status::Error("E13004", "mapping.csv", dir_ + "/mapping.csv", "cannot append the long-name mapping");
  return hashed;
}

std::map<std::string, std::string> ReadNameMapping(const std::string& dir) {
  std::map<std::string, std::string> m;
  std::ifstream f(dir + "/mapping.csv");
  for (std::string line; std::getline(f, line);) {
    auto c = line.find(',');
    if (c != std::string::npos) m[line.substr(0, c)] = line.substr(c + 1);
  }
  return m;
}

}  // namespace npu
