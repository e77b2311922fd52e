#include "soc/soc_spec.h"

#include <ini.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <cstdlib>
#include <functional>
#include <map>

#include "base/file_io.h"

namespace npu {

extern const std::pair<std::string_view, std::string_view> kBuiltinSocSpecs[];  // soc/specs/*.ini, compiled in
extern const size_t kBuiltinSocSpecsCount;

namespace {

// Defaults for [Npukit] keys a CANN ini lacks. Sources: soc/specs/*.ini carry the same figures with their
// reasoning; a launch of a few µs per task is the order msprof shows between back-to-back small AI Core
// tasks ("Task Wait Time") [U].
constexpr double kDefaultTaskLaunchNs = 2500, kDefaultAicpuLaunchNs = 20000, kDefaultAicpuFreqMhz = 1900,
                 kDefaultAicpuFlopsPerCycle = 4;

struct IniParse {
  std::map<std::string, std::string> kv;  // "section.key" -> value
};

int OnIniEntry(void* user, const char* section, const char* name, const char* value) {
  static_cast<IniParse*>(user)->kv[std::string(section) + "." + name] = value;
  return 1;
}

// Reads the fields of one parsed file; collects every bad or missing value.
class SpecReader {
 public:
  SpecReader(const IniParse& p, const std::string& origin) : p_(p), origin_(origin) {}
  std::string Text(const std::string& key, const std::string& fallback = "") {
    auto it = p_.kv.find(key);
    return it == p_.kv.end() ? fallback : it->second;
  }
  template <typename T>
  void Number(const std::string& key, T& out, bool required, double min = 0) {
    auto it = p_.kv.find(key);
    if (it == p_.kv.end()) {
      if (required) Fail(key, "", "the key is missing");
      return;
    }
    double v = 0;
    const std::string& s = it->second;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || v < min) {
      Fail(key, s, "expected a number >= " + std::to_string(static_cast<int64_t>(min)));
      return;
    }
    if (!(v <= static_cast<double>(std::numeric_limits<T>::max()))) {  // also NaN; converting would be undefined
      Fail(key, s, "out of range for this field");
      return;
    }
    out = static_cast<T>(v);
  }
  // "16,32,16" -> K (the middle figure).
  void FractalK(const std::string& key, int& k) {
    std::string s = Text(key);
    if (s.empty()) return;
    auto a = s.find(','), b = s.rfind(',');
    int v = 0;
    if (a == std::string::npos || a == b || std::from_chars(s.data() + a + 1, s.data() + b, v).ec != std::errc() || v <= 0)
      return Fail(key, s, "expected M,K,N");
    k = v;
  }
  Status status() const { return error_; }

 private:
  void Fail(const std::string& key, const std::string& value, const std::string& why) {
    if (error_.ok())
      error_ = Status::Error("E10001", "--soc_spec", origin_ + " [" + key + "] = '" + value + "'", why,
                             "See libcore/soc/specs/README.md for the keys and units.");
  }
  const IniParse& p_;
  std::string origin_;
  Status error_;
};

SocSpec ReadSpec(SpecReader& r) {
  SocSpec s;
  s.name = r.Text("version.SoC_version");
  std::string family = r.Text("version.Short_SoC_version", s.name);
  std::transform(family.begin(), family.end(), family.begin(), [](unsigned char c) { return std::tolower(c); });
  s.ops_family = family;
  int inf_nan = 0, bf16 = 0;
  r.Number("SoCInfo.support_inf_nan", inf_nan, false);
  r.Number("SoCInfo.support_bf16", bf16, false);
  s.default_overflow = inf_nan ? OverflowMode::kInfNan : OverflowMode::kSaturation;
  s.overflow_switchable = inf_nan != 0;
  s.has_bf16 = bf16 != 0;
  r.Number("SoCInfo.ai_core_cnt", s.ai_cores, true, 1);
  r.Number("SoCInfo.vector_core_cnt", s.vector_cores, false);
  r.Number("SoCInfo.ai_cpu_cnt", s.aicpu_cores, false, 1);
  r.Number("SoCInfo.l2_size", s.l2, true);
  r.Number("AICoreSpec.cube_freq", s.freq_mhz, true, 1);
  r.Number("AICoreSpec.cube_m_size", s.cube_m, true, 1);
  r.Number("AICoreSpec.cube_n_size", s.cube_n, true, 1);
  r.Number("AICoreSpec.cube_k_size", s.cube_k, true, 1);
  r.Number("AICoreSpec.vec_calc_size", s.vec_lanes_fp16, true, 1);
  r.Number("AICoreSpec.l0_a_size", s.l0a, true, 1);
  r.Number("AICoreSpec.l0_b_size", s.l0b, true, 1);
  r.Number("AICoreSpec.l0_c_size", s.l0c, true, 1);
  r.Number("AICoreSpec.l1_size", s.l1, true, 1);
  r.Number("AICoreSpec.ub_size", s.ub, true, 1);
  MemoryRates& m = s.rates;
  r.Number("AICoreMemoryRates.ddr_rate", m.ddr, true, 1);
  m.l2_read = m.l2_write = m.ddr;
  r.Number("AICoreMemoryRates.l2_rate", m.l2_read, false);
  r.Number("AICoreMemoryRates.l2_read_rate", m.l2_read, false);
  r.Number("AICoreMemoryRates.l2_write_rate", m.l2_write, false);
  r.Number("AICoreMemoryRates.l1_to_l0_a_rate", m.l1_to_l0a, true, 1);
  r.Number("AICoreMemoryRates.l1_to_l0_b_rate", m.l1_to_l0b, true, 1);
  r.Number("AICoreMemoryRates.l1_to_ub_rate", m.l1_to_ub, true, 1);
  r.Number("AICoreMemoryRates.l0_c_to_ub_rate", m.l0c_to_ub, true, 1);
  m.ub_to_l1 = m.l1_to_ub;
  r.Number("AICoreMemoryRates.ub_to_l1_rate", m.ub_to_l1, false);
  r.Number("AICoreMemoryRates.ub_to_ddr_rate", m.ub_to_ddr, true, 1);
  m.ub_to_l2 = m.ub_to_ddr;
  r.Number("AICoreMemoryRates.ub_to_l2_rate", m.ub_to_l2, false);
  r.FractalK("DtypeMKN.DT_INT8", s.cube_k_int8);
  r.FractalK("DtypeMKN.DT_FLOAT", s.cube_k_fp32);
  s.cube_fp32 = s.cube_k_fp32 > 0;
  // Without a chip figure, all cores at their own DDR path rate is the most the memory can be asked for.
  s.memory_bandwidth_gbps = m.ddr * s.ai_cores * s.freq_mhz * 1e-3;
  r.Number("Npukit.memory_bandwidth_gbps", s.memory_bandwidth_gbps, false, 0.001);
  s.task_launch_ns = kDefaultTaskLaunchNs;
  s.aicpu_launch_ns = kDefaultAicpuLaunchNs;
  s.aicpu_freq_mhz = kDefaultAicpuFreqMhz;
  s.aicpu_flops_per_cycle = kDefaultAicpuFlopsPerCycle;
  r.Number("Npukit.task_launch_ns", s.task_launch_ns, false);
  r.Number("Npukit.aicpu_launch_ns", s.aicpu_launch_ns, false);
  r.Number("Npukit.aicpu_freq", s.aicpu_freq_mhz, false, 1);
  r.Number("Npukit.aicpu_flops_per_cycle", s.aicpu_flops_per_cycle, false, 0.001);
  return s;
}

}  // namespace

int SocSpec::CubeK(DType operand) const {
  switch (operand) {
    case DType::kF16: case DType::kBF16: return cube_k;
    case DType::kI8: case DType::kU8: return cube_k_int8;
    case DType::kF32: return cube_k_fp32;
    default: return 0;
  }
}

Result<SocSpec> ParseSocSpec(std::string_view text, const std::string& origin) {
  IniParse p;
  std::string buf(text);
  int line = ini_parse_string(buf.c_str(), OnIniEntry, &p);
  if (line != 0)
    return Status::Error("E10001", "--soc_spec", origin + ":" + std::to_string(line), "the line is not 'key=value', '[section]' or a comment",
                         "Lines are at most 199 characters; see libcore/soc/specs/README.md.");
  SpecReader r(p, origin);
  SocSpec s = ReadSpec(r);
  NPU_RETURN_IF_ERROR(r.status());
  if (s.name.empty())
    return Status::Error("E10001", "--soc_spec", origin, "[version] SoC_version is missing", "Name the chip, e.g. SoC_version=Ascend310P3.");
  s.origin = origin;
  return s;
}

Result<SocSpec> LoadSocSpecFile(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseSocSpec(text, path);
}

const std::vector<SocSpec>& AllSocs() {
  static const std::vector<SocSpec> socs = [] {
    std::vector<SocSpec> v;
    for (size_t i = 0; i < kBuiltinSocSpecsCount; ++i) {
      auto s = ParseSocSpec(kBuiltinSocSpecs[i].second, "built-in " + std::string(kBuiltinSocSpecs[i].first) + ".ini");
      if (!s.ok()) std::abort();  // a broken compiled-in spec is a build bug; the unit tests parse every one
      s.value().origin = "built-in";
      v.push_back(std::move(s).value());
    }
    return v;
  }();
  return socs;
}

std::string_view OverflowModeName(OverflowMode m) { return m == OverflowMode::kSaturation ? "saturation" : "inf_nan"; }

const SocSpec* FindSoc(std::string_view name) {
  for (const SocSpec& s : AllSocs())
    if (s.name == name) return &s;
  return nullptr;
}

std::string SocNames() {
  std::string list;
  for (const SocSpec& s : AllSocs()) list += (list.empty() ? "" : ", ") + s.name;
  return list;
}

OverflowMode EffectiveOverflowMode(const SocSpec& soc) {
  if (!soc.overflow_switchable) return soc.default_overflow;
  const char* env = std::getenv("INF_NAN_MODE_ENABLE");
  if (env && std::string_view(env) == "0") return OverflowMode::kSaturation;
  if (env && std::string_view(env) == "1") return OverflowMode::kInfNan;
  return soc.default_overflow;
}

}  // namespace npu
