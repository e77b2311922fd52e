// atc's side of the tune bank: tasks whose work the bank knows take the banked tiling.
#pragma once
#include "lower/lower.h"
#include "tune/bank.h"

namespace npu {

// Replaces the tiling of every task the bank has a record for (and that still fits the SoC); marks those
// tasks' tiling_source "tune_bank". Tasks tiled for a core-split share keep it. Returns how many tasks changed.
int ApplyTuneBank(const Graph& g, std::vector<Task>& tasks, const SocSpec& soc, const TuneBank& bank);

}  // namespace npu
