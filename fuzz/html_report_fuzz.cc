// msaccucmp's result reader and HTML report over arbitrary bytes (any CSV a user hands `msaccucmp report`), and
// --shard's parser with the scheduler's variables read from the same bytes (line 1 the value, the next lines
// SLURM_ARRAY_TASK_ID, _MIN, _MAX, _COUNT, _STEP and JOB_COMPLETION_INDEX; an empty line leaves one unset).
#include <array>
#include <string>
#include <string_view>

#include "base/shard.h"
#include "fuzz_input.h"
#include "html_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  npu::fuzz::MemFile f({data, size});
  if (auto table = npu::cmp::ReadCsv(f.path()); table.ok()) {
    npu::cmp::HtmlPageSummary summary;
    (void)npu::cmp::RenderHtmlReport(*table, "fuzz", &summary);
    (void)npu::cmp::RenderHtmlIndex({summary, summary}, "fuzz");
  }
  constexpr std::array<const char*, 6> kVars = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX",
                                                "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_STEP", "JOB_COMPLETION_INDEX"};
  std::array<std::string, 7> lines;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (std::string& line : lines) {
    const size_t end = text.find('\n');
    line = std::string(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }
  auto env = [&](const char* name) -> const char* {
    for (size_t i = 0; i < kVars.size(); ++i)
      if (std::string_view(name) == kVars[i]) return lines[i + 1].empty() ? nullptr : lines[i + 1].c_str();
    return nullptr;
  };
  if (auto s = npu::ParseShard(lines[0], "--shard", {"E10001", "E10057"}, env); s.ok()) (void)npu::ShardRange(*s, size);
  return 0;
}
