#include "tune/apply.h"

namespace npu {

int ApplyTuneBank(const Graph& g, std::vector<Task>& tasks, const SocSpec& soc, const TuneBank& bank) {
  int applied = 0;
  for (Task& t : tasks) {
    if (!t.on_device() || t.core_cap > 0) continue;  // a core-split share: banked tilings assume the whole chip
    Work w = TaskWork(g, t, &soc);
    const BankRecord* r = bank.Find(TilingKey(w));
    if (!r || !CheckTiling(w, r->tiling, soc).ok()) continue;
    t.tiling = r->tiling;
    t.block_dim = static_cast<uint32_t>(r->tiling.block_dim);
    t.tiling_source = "tune_bank";
    ++applied;
  }
  return applied;
}

}  // namespace npu
