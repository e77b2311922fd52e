#include "msprof_tables.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "prof/platform.h"

namespace npu::profparse {
namespace {

struct EventName {
  uint16_t event;
  const char* name;
};

void AddPipes(std::vector<PmuColumn>& cols, const std::string& prefix, std::initializer_list<EventName> pipes, CoreKind core) {
  for (const auto& [event, name] : pipes) {
    cols.push_back({prefix + name + "_time(us)", Quantity::kEventTime, event, 0, core});
    cols.push_back({prefix + name + "_ratio", Quantity::kEventRatio, event, 0, core});
  }
}

void AddPaths(std::vector<PmuColumn>& cols, const std::string& prefix, std::initializer_list<EventName> paths, CoreKind core) {
  for (const auto& [event, name] : paths) cols.push_back({prefix + name + "_bw(GB/s)", Quantity::kBandwidth, event, 0, core});
}

void AddRatio(std::vector<PmuColumn>& cols, const std::string& name, uint16_t event, uint16_t event2, CoreKind core) {
  cols.push_back({name, Quantity::kEventRatio, event, event2, core});
}

void AddCore(std::vector<PmuColumn>& cols, CoreKind core) {
  const bool aiv = core == CoreKind::kAiv;
  cols.push_back({aiv ? "aiv_time(us)" : "aicore_time(us)", Quantity::kCoreTime, 0, 0, core});
  cols.push_back({core == CoreKind::kAny ? "total_cycles" : aiv ? "aiv_total_cycles" : "aic_total_cycles", Quantity::kTotalCycles, 0, 0, core});
}

std::vector<PmuColumn> SplitCoreColumns(std::string_view group) {
  using namespace prof;
  std::vector<PmuColumn> c;
  const CoreKind aic = CoreKind::kAic, aiv = CoreKind::kAiv;
  if (group == "ArithmeticUtilization") {
    AddCore(c, aic);
    AddRatio(c, "aic_mac_fp16_ratio", kCubeFp16Exec, 0, aic);
    AddRatio(c, "aic_mac_int8_ratio", kCubeInt8Exec, 0, aic);
    c.push_back({"aic_cube_fops", Quantity::kCubeFops, 0, 0, aic});
    AddCore(c, aiv);
    AddRatio(c, "aiv_vec_fp32_ratio", kVecFp32Exec, 0, aiv);
    AddRatio(c, "aiv_vec_fp16_ratio", kVecFp16Exec, kVecFp16HalfExec, aiv);
    AddRatio(c, "aiv_vec_int32_ratio", kVecInt32Exec, 0, aiv);
    AddRatio(c, "aiv_vec_misc_ratio", kVecMiscExec, 0, aiv);
    c.push_back({"aiv_vector_fops", Quantity::kVectorFops, 0, 0, aiv});
    return c;
  }
  if (group == "Memory") {
    AddCore(c, aic);
    AddPaths(c, "aic_", {{kL1ReadReq, "l1_read"}, {kL1WriteReq, "l1_write"}, {kMainReadReq, "main_mem_read"}, {kMainWriteReq, "main_mem_write"},
                         {kL2ReadReq, "l2_read"}, {kL2WriteReq, "l2_write"}}, aic);
    AddCore(c, aiv);
    AddPaths(c, "aiv_", {{kUbReadReq, "ub_read"}, {kUbWriteReq, "ub_write"}, {kMainReadReq, "main_mem_read"}, {kMainWriteReq, "main_mem_write"},
                         {kL2ReadReq, "l2_read"}, {kL2WriteReq, "l2_write"}}, aiv);
    return c;
  }
  // PipeUtilization: the AIC's pipes (no vector, no MTE3) and the AIV's (no cube, no MTE1).
  AddCore(c, aic);
  AddPipes(c, "aic_", {{kCubeBusy, "mac"}, {kScalarBusy, "scalar"}, {kMte1Busy, "mte1"}, {kMte2Busy, "mte2"}, {kFixpipeBusy, "fixpipe"}}, aic);
  c.push_back({"aic_icache_miss_rate", Quantity::kIcacheMiss, kIcacheMiss, kIcacheReq, aic});
  AddCore(c, aiv);
  AddPipes(c, "aiv_", {{kVecBusy, "vec"}, {kScalarBusy, "scalar"}, {kMte2Busy, "mte2"}, {kMte3Busy, "mte3"}}, aiv);
  c.push_back({"aiv_icache_miss_rate", Quantity::kIcacheMiss, kIcacheMiss, kIcacheReq, aiv});
  c.push_back({"cube_utilization(%)", Quantity::kCubeUtilization, kCubeBusy, 0, aic});
  return c;
}

std::vector<PmuColumn> OneCoreColumns(bool chip_v1, std::string_view group) {
  using namespace prof;
  std::vector<PmuColumn> c;
  const CoreKind any = CoreKind::kAny;
  AddCore(c, any);
  if (group == "ArithmeticUtilization") {
    AddRatio(c, "mac_fp16_ratio", kCubeFp16Exec, 0, any);
    AddRatio(c, "mac_int8_ratio", kCubeInt8Exec, 0, any);
    if (!chip_v1) {
      AddRatio(c, "vec_fp32_ratio", kVecFp32Exec, 0, any);
      AddRatio(c, "vec_fp16_ratio", kVecFp16Exec, kVecFp16HalfExec, any);
      AddRatio(c, "vec_int32_ratio", kVecInt32Exec, 0, any);
      AddRatio(c, "vec_misc_ratio", kVecMiscExec, 0, any);
    }
    c.push_back({"cube_fops", Quantity::kCubeFops});
    c.push_back({"vector_fops", Quantity::kVectorFops});
    return c;
  }
  if (group == "Memory") {
    if (!chip_v1) AddPaths(c, "", {{kUbReadReq, "ub_read"}, {kUbWriteReq, "ub_write"}}, any);
    AddPaths(c, "", {{kL1ReadReq, "l1_read"}, {kL1WriteReq, "l1_write"}, {kL2ReadReq, "l2_read"}}, any);
    if (!chip_v1) AddPaths(c, "", {{kL2WriteReq, "l2_write"}}, any);
    AddPaths(c, "", {{kMainReadReq, "main_mem_read"}, {kMainWriteReq, "main_mem_write"}}, any);
    return c;
  }
  if (!chip_v1) AddPipes(c, "", {{kVecBusy, "vec"}}, any);
  AddPipes(c, "", {{kCubeBusy, "mac"}, {kScalarBusy, "scalar"}, {kMte1Busy, "mte1"}, {kMte2Busy, "mte2"}, {kMte3Busy, "mte3"}}, any);
  c.push_back({"icache_miss_rate", Quantity::kIcacheMiss, kIcacheMiss, kIcacheReq});
  if (!chip_v1) c.push_back({"memory_bound", Quantity::kMemoryBound});  // needs the vector ratio
  c.push_back({"cube_utilization(%)", Quantity::kCubeUtilization, kCubeBusy});
  return c;
}

}  // namespace

std::optional<CannVersion> ParseCannVersion(std::string_view s) {
  if (s == "8.5" || s.starts_with("8.5.")) return CannVersion::k8_5;
  if (s == "latest") return CannVersion::kLatest;
  return std::nullopt;
}

ChipClass ChipClassOf(std::string_view soc) {
  const prof::ProfPlatform& p = prof::PlatformOf(soc);
  return p.split_cores ? ChipClass::kAtlasA2 : p.chip_v1 ? ChipClass::kAscend310 : ChipClass::kHwts;
}

std::vector<std::string> TaskColumns(CannVersion v, ChipClass c) {
  const bool stars = c == ChipClass::kAtlasA2;
  const bool newest = v == CannVersion::kLatest;
  std::vector<std::string> cols = {"Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
                                   "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", newest ? "Block Num" : "Block Dim"};
  if (stars) cols.push_back(newest ? "Mix Block Num" : "Mix Block Dim");
  for (const char* s : {"HF32 Eligible", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes", "Output Data Types", "Output Formats"})
    cols.push_back(s);
  if (stars) cols.push_back("Context ID");
  return cols;
}

std::vector<PmuColumn> PmuColumns(ChipClass c, std::string_view group) {
  return c == ChipClass::kAtlasA2 ? SplitCoreColumns(group) : OneCoreColumns(c == ChipClass::kAscend310, group);
}

const std::vector<std::string>& RooflineColumns() {
  static const std::vector<std::string> cols = {"achieved_flops(TFLOPS)", "achieved_bandwidth(GB/s)", "roofline_bound"};
  return cols;
}

std::optional<double> PmuValue(const PmuColumn& col, const PmuSample& p, const DeviceInfo& d, const PmuContext& ctx) {
  const bool aiv = col.core == CoreKind::kAiv;
  if (aiv ? !p.aiv : !p.aic) return 0.0;  // the other core kind of a split-core task: msprof writes 0
  const std::vector<uint16_t>& events = aiv ? d.aiv_events : d.aic_events;
  const auto& counts = aiv ? p.aiv_events : p.aic_events;
  auto count = [&](uint16_t event) -> std::optional<double> {
    for (size_t i = 0; i < events.size() && i < counts.size(); ++i)
      if (events[i] == event) return static_cast<double>(counts[i]);
    return std::nullopt;  // not collected
  };
  const double total = static_cast<double>(aiv ? p.aiv_cycles : p.aic_cycles);
  // msprof's core time: the cycles of all blocks over the frequency, per block, times the waves a block count
  // takes on the cores (the AIV blocks of a mix task are its Mix Block Dim).
  const double blocks = std::max<double>(aiv && ctx.mix_block_dim ? ctx.mix_block_dim : ctx.block_dim, 1);
  const double cores = std::max(aiv ? d.aiv_cores : d.ai_cores, 1);
  const double waves = std::ceil(blocks / cores);
  auto us = [&](double cycles) { return cycles / d.aic_mhz / blocks * waves; };
  auto ratio = [&](double x) -> std::optional<double> { return total > 0 ? std::optional(x / total) : std::nullopt; };
  auto sum = [&](std::initializer_list<uint16_t> evs, bool ops) -> std::optional<double> {
    double s = 0;
    bool any = false;
    for (uint16_t e : evs)
      if (auto c = count(e)) s += *c * (ops ? prof::OpsPerCount(e) : 1), any = true;
    return any ? std::optional(s) : std::nullopt;
  };
  switch (col.quantity) {
    case Quantity::kCoreTime: return us(total);
    case Quantity::kTotalCycles: return total;
    case Quantity::kEventTime: {
      auto c = count(col.event);
      return c ? std::optional(us(*c)) : std::nullopt;
    }
    case Quantity::kEventRatio: {
      auto c = count(col.event);
      if (c && col.event2) c = *c + count(col.event2).value_or(0);
      return c ? ratio(*c) : std::nullopt;
    }
    case Quantity::kIcacheMiss: {
      auto miss = count(col.event), req = count(col.event2);
      return miss && req && *req > 0 ? std::optional(*miss / *req) : std::nullopt;
    }
    case Quantity::kBandwidth: {
      auto c = count(col.event);
      const double seconds = us(total) * 1e-6;
      constexpr double kGiB = 1024.0 * 1024 * 1024;
      return !c ? std::nullopt : seconds > 0 ? std::optional(*c * prof::BytesPerRequest(col.event) / seconds / kGiB) : std::optional(0.0);
    }
    case Quantity::kCubeFops: return sum({prof::kCubeFp16Exec, prof::kCubeInt8Exec}, true);
    case Quantity::kVectorFops:
      return sum({prof::kVecFp32Exec, prof::kVecFp16Exec, prof::kVecFp16HalfExec, prof::kVecInt32Exec, prof::kVecMiscExec}, true);
    case Quantity::kMemoryBound: {
      auto mte2 = count(prof::kMte2Busy), mac = count(prof::kCubeBusy), vec = count(prof::kVecBusy);
      const double busy = std::max(mac.value_or(0), vec.value_or(0));
      return mte2 && busy > 0 ? std::optional(*mte2 / busy) : std::nullopt;
    }
    case Quantity::kCubeUtilization:
      if (!count(prof::kCubeBusy)) return std::nullopt;  // msprof computes it where mac_ratio is
      if (ctx.duration_us <= 0) return 0.0;
      return 100 * total / (d.aic_mhz * std::max(d.ai_cores, 1)) / ctx.duration_us;
  }
  return std::nullopt;
}

void AppendTrimmed(std::string& out, double v) {
  const size_t at = out.size();
  AppendMetric(out, v);
  if (out.size() > at + 2 && out.ends_with(".0")) out.resize(out.size() - 2);
}

void AppendMetric(std::string& out, double v) {
  const double milli = std::round(v * 1000);
  if (!std::isfinite(milli) || std::fabs(milli) >= 9e15) {  // past int64's exact range: printf's digits
    char buf[64];
    int n = std::isfinite(v) ? std::snprintf(buf, sizeof buf, "%.3f", v) : 0;
    out.append(n > 0 && n < static_cast<int>(sizeof buf) ? std::string_view(buf, static_cast<size_t>(n)) : std::string_view("N/A"));
    return;
  }
  // Integer digits: this runs for every metric of every task (printf was a third of an export's time).
  int64_t m = static_cast<int64_t>(milli);
  if (m < 0) out += '-', m = -m;
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, m / 1000);
  out.append(buf, end);
  out += '.';
  int frac = static_cast<int>(m % 1000);
  if (frac == 0) {
    out += '0';
    return;
  }
  char digits[3] = {static_cast<char>('0' + frac / 100), static_cast<char>('0' + frac / 10 % 10), static_cast<char>('0' + frac % 10)};
  size_t keep = 3;
  while (digits[keep - 1] == '0') --keep;
  out.append(digits, keep);
}

}  // namespace npu::profparse
