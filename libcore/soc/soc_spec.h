// SoC specs as data: what the simulated NPU needs to know about each chip. The numerics half lives here
// today (overflow mode, which dtypes the AI Core has); the timing half (cores, clocks, buffers, bandwidths)
// joins it with the cost model. Every figure cites its source in soc_spec.cc.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace npu {

// What the AI Core does when a floating-point result leaves the range of its dtype.
enum class OverflowMode {
  kSaturation,  // ±overflow -> ±max finite (65504 for fp16), NaN -> 0, integers clamp
  kInfNan,      // IEEE 754: ±inf and NaN
};
std::string_view OverflowModeName(OverflowMode m);

struct SocSpec {
  std::string name;             // --soc_version, e.g. "Ascend310P3"
  std::string ops_family;       // CANN's opp config folder: ascend310, ascend310p, ascend910, ascend910b
  OverflowMode default_overflow;
  bool overflow_switchable;     // INF_NAN_MODE_ENABLE may change the mode
  bool has_bf16;                // bf16 in cube and vector units
  bool cube_fp32;               // the cube unit takes fp32 operands (else fp32 cube ops fall back to AI CPU)
};

const std::vector<SocSpec>& AllSocs();
const SocSpec* FindSoc(std::string_view name);
// "Ascend310, Ascend310P3, ..." for error messages.
std::string SocNames();
// The overflow mode a run uses: the SoC's default, or what INF_NAN_MODE_ENABLE selects where it can.
OverflowMode EffectiveOverflowMode(const SocSpec& soc);

}  // namespace npu
