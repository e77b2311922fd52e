#include "msprof_tables.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "prof/platform.h"

namespace npu::profparse {
namespace {

// The cube fractal and vector repeat of the chips npukit simulates: a 16x16x16 fp16 (16x32x16 int8) MAC per
// fractal, two operations per MAC; a 256-byte vector repeat is 128 fp16 or 64 fp32 lanes (the DtypeMKN of
// CANN's platform files, libcore/soc/specs).
constexpr double kFp16FractalOps = 16.0 * 16 * 16 * 2, kInt8FractalOps = 16.0 * 32 * 16 * 2;
constexpr double kFp16RepeatOps = 128, kFp32RepeatOps = 64;

struct PipeName {
  Pipe pipe;
  const char* name;
};

void AddPipes(std::vector<PmuColumn>& cols, const std::string& prefix, std::initializer_list<PipeName> pipes, CoreKind core) {
  for (const auto& [pipe, name] : pipes) {
    cols.push_back({prefix + name + "_time(us)", Quantity::kPipeTime, pipe, MemPath::kNone, core});
    cols.push_back({prefix + name + "_ratio", Quantity::kPipeRatio, pipe, MemPath::kNone, core});
  }
}

struct PathName {
  MemPath path;
  const char* name;
};

void AddPaths(std::vector<PmuColumn>& cols, const std::string& prefix, std::initializer_list<PathName> paths, CoreKind core) {
  for (const auto& [path, name] : paths) cols.push_back({prefix + name + "_bw(GB/s)", Quantity::kBandwidth, Pipe::kNone, path, core});
}

void AddCore(std::vector<PmuColumn>& cols, CoreKind core) {
  const bool aiv = core == CoreKind::kAiv;
  cols.push_back({aiv ? "aiv_time(us)" : "aicore_time(us)", Quantity::kCoreTime, Pipe::kNone, MemPath::kNone, core});
  cols.push_back({core == CoreKind::kAny ? "total_cycles" : aiv ? "aiv_total_cycles" : "aic_total_cycles", Quantity::kTotalCycles,
                  Pipe::kNone, MemPath::kNone, core});
}

std::vector<PmuColumn> SplitCoreColumns(std::string_view group) {
  std::vector<PmuColumn> c;
  if (group == "ArithmeticUtilization") {
    AddCore(c, CoreKind::kAic);
    c.push_back({"aic_mac_fp16_ratio", Quantity::kCubeFp16Ratio, Pipe::kNone, MemPath::kNone, CoreKind::kAic});
    c.push_back({"aic_mac_int8_ratio", Quantity::kCubeInt8Ratio, Pipe::kNone, MemPath::kNone, CoreKind::kAic});
    c.push_back({"aic_cube_fops", Quantity::kCubeFops, Pipe::kNone, MemPath::kNone, CoreKind::kAic});
    AddCore(c, CoreKind::kAiv);
    c.push_back({"aiv_vec_fp32_ratio", Quantity::kVecFp32Ratio, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
    c.push_back({"aiv_vec_fp16_ratio", Quantity::kVecFp16Ratio, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
    c.push_back({"aiv_vec_int32_ratio", Quantity::kVecInt32Ratio, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
    c.push_back({"aiv_vec_misc_ratio", Quantity::kVecMiscRatio, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
    c.push_back({"aiv_vector_fops", Quantity::kVectorFops, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
    return c;
  }
  if (group == "Memory") {
    AddCore(c, CoreKind::kAic);
    AddPaths(c, "aic_", {{MemPath::kL1Read, "l1_read"}, {MemPath::kL1Write, "l1_write"}, {MemPath::kMainRead, "main_mem_read"},
                         {MemPath::kMainWrite, "main_mem_write"}, {MemPath::kL2Read, "l2_read"}, {MemPath::kL2Write, "l2_write"}},
             CoreKind::kAic);
    AddCore(c, CoreKind::kAiv);
    AddPaths(c, "aiv_", {{MemPath::kUbRead, "ub_read"}, {MemPath::kUbWrite, "ub_write"}, {MemPath::kMainRead, "main_mem_read"},
                         {MemPath::kMainWrite, "main_mem_write"}, {MemPath::kL2Read, "l2_read"}, {MemPath::kL2Write, "l2_write"}},
             CoreKind::kAiv);
    return c;
  }
  // PipeUtilization: the AIC's pipes (PipeUtilizationExct: no vector, no MTE3) and the AIV's (no cube, no MTE1).
  AddCore(c, CoreKind::kAic);
  AddPipes(c, "aic_", {{Pipe::kCube, "mac"}, {Pipe::kScalar, "scalar"}, {Pipe::kMte1, "mte1"}, {Pipe::kMte2, "mte2"}, {Pipe::kFixpipe, "fixpipe"}},
           CoreKind::kAic);
  c.push_back({"aic_icache_miss_rate", Quantity::kIcacheMiss, Pipe::kNone, MemPath::kNone, CoreKind::kAic});
  AddCore(c, CoreKind::kAiv);
  AddPipes(c, "aiv_", {{Pipe::kVector, "vec"}, {Pipe::kScalar, "scalar"}, {Pipe::kMte2, "mte2"}, {Pipe::kMte3, "mte3"}}, CoreKind::kAiv);
  c.push_back({"aiv_icache_miss_rate", Quantity::kIcacheMiss, Pipe::kNone, MemPath::kNone, CoreKind::kAiv});
  c.push_back({"cube_utilization(%)", Quantity::kCubeUtilization, Pipe::kNone, MemPath::kNone, CoreKind::kAic});
  return c;
}

std::vector<PmuColumn> OneCoreColumns(bool chip_v1, std::string_view group) {
  std::vector<PmuColumn> c;
  AddCore(c, CoreKind::kAny);
  if (group == "ArithmeticUtilization") {
    c.push_back({"mac_fp16_ratio", Quantity::kCubeFp16Ratio});
    c.push_back({"mac_int8_ratio", Quantity::kCubeInt8Ratio});
    if (!chip_v1) {
      c.push_back({"vec_fp32_ratio", Quantity::kVecFp32Ratio});
      c.push_back({"vec_fp16_ratio", Quantity::kVecFp16Ratio});
      c.push_back({"vec_int32_ratio", Quantity::kVecInt32Ratio});
      c.push_back({"vec_misc_ratio", Quantity::kVecMiscRatio});
    }
    c.push_back({"cube_fops", Quantity::kCubeFops});
    c.push_back({"vector_fops", Quantity::kVectorFops});
    return c;
  }
  if (group == "Memory") {
    if (!chip_v1) AddPaths(c, "", {{MemPath::kUbRead, "ub_read"}, {MemPath::kUbWrite, "ub_write"}}, CoreKind::kAny);
    AddPaths(c, "", {{MemPath::kL1Read, "l1_read"}, {MemPath::kL1Write, "l1_write"}, {MemPath::kL2Read, "l2_read"}}, CoreKind::kAny);
    if (!chip_v1) AddPaths(c, "", {{MemPath::kL2Write, "l2_write"}}, CoreKind::kAny);
    AddPaths(c, "", {{MemPath::kMainRead, "main_mem_read"}, {MemPath::kMainWrite, "main_mem_write"}}, CoreKind::kAny);
    return c;
  }
  if (!chip_v1) AddPipes(c, "", {{Pipe::kVector, "vec"}}, CoreKind::kAny);
  AddPipes(c, "", {{Pipe::kCube, "mac"}, {Pipe::kScalar, "scalar"}, {Pipe::kMte1, "mte1"}, {Pipe::kMte2, "mte2"}, {Pipe::kMte3, "mte3"}},
           CoreKind::kAny);
  c.push_back({"icache_miss_rate", Quantity::kIcacheMiss});
  if (!chip_v1) c.push_back({"memory_bound", Quantity::kMemoryBound});  // needs the vector ratio
  c.push_back({"cube_utilization(%)", Quantity::kCubeUtilization});
  return c;
}

double PipeCycles(const prof::PmuRecord& p, Pipe pipe) {
  switch (pipe) {
    case Pipe::kVector: return static_cast<double>(p.vector_cycles);
    case Pipe::kCube: return static_cast<double>(p.cube_cycles);
    case Pipe::kScalar: return static_cast<double>(p.scalar_cycles);
    case Pipe::kMte1: return static_cast<double>(p.mte1_cycles);
    case Pipe::kMte2: return static_cast<double>(p.mte2_cycles);
    case Pipe::kMte3: return static_cast<double>(p.mte3_cycles);
    case Pipe::kFixpipe: return static_cast<double>(p.fixpipe_cycles);
    case Pipe::kNone: break;
  }
  return 0;
}

double PathBytes(const prof::PmuRecord& p, MemPath path) {
  switch (path) {
    case MemPath::kUbRead: return static_cast<double>(p.ub_read_bytes);
    case MemPath::kUbWrite: return static_cast<double>(p.ub_write_bytes);
    case MemPath::kL1Read: return static_cast<double>(p.l1_read_bytes);
    case MemPath::kL1Write: return static_cast<double>(p.l1_write_bytes);
    case MemPath::kL2Read: return static_cast<double>(p.l2_read_bytes);
    case MemPath::kL2Write: return 0;  // outputs leave through MTE3 to GM: counted as main-memory writes
    case MemPath::kMainRead: return static_cast<double>(p.main_read_bytes);
    case MemPath::kMainWrite: return static_cast<double>(p.main_write_bytes);
    case MemPath::kNone: break;
  }
  return 0;
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

std::optional<double> PmuValue(const PmuColumn& col, const prof::PmuRecord& p, const PmuContext& ctx) {
  if (col.core != CoreKind::kAny) {  // the other core kind of a split-core task: msprof writes 0
    const bool mix = ctx.task_type == prof::TaskType::kMixAic;
    const bool aiv = ctx.task_type == prof::TaskType::kAiVectorCore;
    if ((col.core == CoreKind::kAic && aiv) || (col.core == CoreKind::kAiv && !aiv && !mix)) return 0.0;
  }
  const double core_cycles = static_cast<double>(p.total_cycles);  // the slowest block's
  const double block_dim = std::max<double>(ctx.block_dim, 1);
  const double core_us = core_cycles / ctx.aic_mhz;
  auto ratio = [&](double x) -> std::optional<double> { return core_cycles > 0 ? std::min(x / core_cycles, 1.0) : std::optional<double>(); };
  switch (col.quantity) {
    case Quantity::kCoreTime: return core_us;  // msprof: total cycles of all blocks / frequency / block dim
    case Quantity::kTotalCycles: return core_cycles * block_dim;
    case Quantity::kPipeRatio: return ratio(PipeCycles(p, col.pipe));
    case Quantity::kPipeTime: return PipeCycles(p, col.pipe) / ctx.aic_mhz;
    case Quantity::kIcacheMiss: return std::nullopt;
    case Quantity::kBandwidth: return core_us > 0 ? PathBytes(p, col.path) / (core_us * 1e3) : 0.0;
    case Quantity::kCubeFp16Ratio: return ratio(static_cast<double>(p.cube_fp16_fractals));
    case Quantity::kCubeInt8Ratio: return ratio(static_cast<double>(p.cube_int8_fractals));
    case Quantity::kVecFp32Ratio: return ratio(static_cast<double>(p.vector_fp32_repeats));
    case Quantity::kVecFp16Ratio: return ratio(static_cast<double>(p.vector_fp16_repeats));
    case Quantity::kVecInt32Ratio:
    case Quantity::kVecMiscRatio: return 0.0;  // the simulator counts fp16 and fp32 repeats only
    case Quantity::kCubeFops:
      return static_cast<double>(p.cube_fp16_fractals) * kFp16FractalOps + static_cast<double>(p.cube_int8_fractals) * kInt8FractalOps;
    case Quantity::kVectorFops:
      return static_cast<double>(p.vector_fp16_repeats) * kFp16RepeatOps + static_cast<double>(p.vector_fp32_repeats) * kFp32RepeatOps;
    case Quantity::kMemoryBound: {
      const uint64_t cube = p.cube_cycles, vector = p.vector_cycles;  // copies: the packed record's fields are unaligned
      const double busy = static_cast<double>(std::max(cube, vector));
      return busy > 0 ? std::optional<double>(static_cast<double>(p.mte2_cycles) / busy) : std::nullopt;
    }
    case Quantity::kCubeUtilization:
      if (ctx.duration_us <= 0 || ctx.ai_cores <= 0) return 0.0;
      return 100 * core_cycles * block_dim / (ctx.aic_mhz * ctx.ai_cores) / ctx.duration_us;
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
