#include "soc/soc_spec.h"

#include <cstdlib>

namespace npu {

// Sources (shared/reference/):
//  [OVF] simulator.md §2, from aclrtFloatOverflowMode / aclrtSetDeviceSatMode docs: Atlas training (910A) and
//        inference (310, 310P) products saturate only; Atlas A2 (910B*) support both modes, default INF/NaN,
//        switched with INF_NAN_MODE_ENABLE.
//  [BF16] atc.md §1.5: allow_mix_precision_bf16 / allow_fp32_to_bf16 / mixed_bfloat16 are Atlas A2 (910B*) modes;
//        the 310/310P/910A ops-info configs (ascend_ir.md §3.1) carry no bf16 cube kernels.
//  [CUBE32] atc.md §1.5 (must_keep_origin_dtype: "if an fp32 op only has an fp16 AI Core implementation, fall
//        back to an fp32 AI CPU op") and --allow_hf32 / enable_float_32_execution, which exist for the A2 cube
//        only: the cube of 310/310P/910A takes fp16 and int8 [U: the 910A entry is inferred from the same docs].
//  [FAM] ascend_ir.md §3: Ascend310P3 uses the ascend310p configs, 910A the ascend910 ones, 910B* ascend910b.
const std::vector<SocSpec>& AllSocs() {
  static const std::vector<SocSpec> socs = {
      {"Ascend310", "ascend310", OverflowMode::kSaturation, false, false, false},
      {"Ascend310P3", "ascend310p", OverflowMode::kSaturation, false, false, false},
      {"Ascend910A", "ascend910", OverflowMode::kSaturation, false, false, false},
      {"Ascend910B1", "ascend910b", OverflowMode::kInfNan, true, true, true},
      {"Ascend910B2", "ascend910b", OverflowMode::kInfNan, true, true, true},
      {"Ascend910B3", "ascend910b", OverflowMode::kInfNan, true, true, true},
      {"Ascend910B4", "ascend910b", OverflowMode::kInfNan, true, true, true},
  };
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
