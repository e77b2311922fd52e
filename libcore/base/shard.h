// Work split into N shards, shard K of them run by this process (1 <= K <= N): `--shard K/N` as typed, or
// `--shard auto` / `auto/N` taken from the scheduler that started the process. msaccucmp compare, aoe
// --job_type=2 and msame --input DIR take it; their merges put the shards' results back together.
//
// From a Slurm array task (sbatch --array): SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT
// (and SLURM_ARRAY_TASK_STEP). `auto` numbers the array's tasks 1..N in order, so an array that starts
// anywhere, or steps (1-15:2), still covers shards 1..N. `auto/N` takes the task id itself as K: arrays numbered
// 1..N, so that resubmitting only failed shards (--array=3,5) reruns exactly those.
// From a Kubernetes Indexed Job: JOB_COMPLETION_INDEX (0-based) is K - 1, with the count given as `auto/N`.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace npu {

struct Shard {
  size_t k = 1, n = 1;  // this process runs shard k of n
  bool operator==(const Shard&) const = default;
};

// Reads an environment variable (null when unset); std::getenv by default, a table in tests.
using EnvLookup = std::function<const char*(const char*)>;

// The tool's error codes: for a bad value of the flag, and for a usage error (exit 2): `auto` outside a scheduler.
struct ShardErrorCodes {
  std::string_view bad_value, usage;
};
// Parses the value of `flag` (e.g. "--shard").
Result<Shard> ParseShard(std::string_view value, std::string_view flag, ShardErrorCodes codes, const EnvLookup& env = {});

// Shard k of n's items out of `count`, by index: the contiguous run [begin, end) of a near-even split.
std::pair<size_t, size_t> ShardRange(const Shard& s, size_t count);

}  // namespace npu
