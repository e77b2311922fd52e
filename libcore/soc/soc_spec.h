// SoC specs as data: what the simulated NPU knows about each chip, read from CANN-style platform .ini files
// (soc/specs/<SoC>.ini, compiled in; every figure cites its source there). The numerics half (overflow mode,
// bf16, fp32 cube) and the timing half (cores, clock, buffers, per-path bandwidths) live in one struct.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "ir/dtype.h"

namespace npu {

// What the AI Core does when a floating-point result leaves the range of its dtype.
enum class OverflowMode {
  kSaturation,  // ±overflow -> ±max finite (65504 for fp16), NaN -> 0, integers clamp
  kInfNan,      // IEEE 754: ±inf and NaN
};
std::string_view OverflowModeName(OverflowMode m);

// Bytes per cycle per core on each data path ([AICoreMemoryRates]).
struct MemoryRates {
  double ddr = 0, l2_read = 0, l2_write = 0, l1_to_l0a = 0, l1_to_l0b = 0, l1_to_ub = 0, l0c_to_ub = 0, ub_to_l1 = 0,
         ub_to_ddr = 0, ub_to_l2 = 0;
};

struct SocSpec {
  std::string name;        // --soc_version, e.g. "Ascend310P3" ([version] SoC_version)
  std::string ops_family;  // CANN's opp config folder: lower-case Short_SoC_version (ascend310p, ascend910b, ...)
  std::string origin;      // "built-in" or the file it was read from
  OverflowMode default_overflow = OverflowMode::kSaturation;
  bool overflow_switchable = false;  // INF_NAN_MODE_ENABLE may change the mode (support_inf_nan)
  bool has_bf16 = false;             // bf16 in cube and vector units (support_bf16)
  bool cube_fp32 = false;            // the cube takes fp32 operands ([DtypeMKN] has DT_FLOAT)

  int ai_cores = 1, vector_cores = 0, aicpu_cores = 1;
  double freq_mhz = 1000;  // AI Core clock (cube_freq)
  int cube_m = 16, cube_n = 16, cube_k = 16;  // fp16 fractal; other dtypes scale K (see CubeK)
  int cube_k_int8 = 32, cube_k_fp32 = 0;      // 0: no fp32 cube
  int vec_lanes_fp16 = 128;                    // elements per vector repeat for 16-bit types
  int64_t l0a = 0, l0b = 0, l0c = 0, l1 = 0, ub = 0, l2 = 0;
  MemoryRates rates;
  double memory_bandwidth_gbps = 0;  // chip DRAM/HBM bandwidth shared by all cores
  double task_launch_ns = 0, aicpu_launch_ns = 0, aicpu_freq_mhz = 0, aicpu_flops_per_cycle = 0;

  double cycles_per_ns() const { return freq_mhz * 1e-3; }
  // K of one cube fractal for an operand dtype (16 for fp16/bf16, 32 for int8, 8 for fp32); 0 if unsupported.
  int CubeK(DType operand) const;
};

const std::vector<SocSpec>& AllSocs();
const SocSpec* FindSoc(std::string_view name);
// "Ascend310, Ascend310P3, ..." for error messages.
std::string SocNames();
// Parses a platform .ini (CANN's layout; unknown keys ignored). `origin` names it in errors.
Result<SocSpec> ParseSocSpec(std::string_view text, const std::string& origin);
// --soc_spec=FILE: a user's own chip. Errors name the flag, the file and the line.
Result<SocSpec> LoadSocSpecFile(const std::string& path);
// The overflow mode a run uses: the SoC's default, or what INF_NAN_MODE_ENABLE selects where it can.
OverflowMode EffectiveOverflowMode(const SocSpec& soc);

}  // namespace npu
