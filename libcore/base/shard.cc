#include "base/shard.h"

#include <charconv>
#include <cstdlib>
#include <optional>

namespace npu {
namespace {

constexpr size_t kMaxShards = 100000;  // far past any cluster's array size; keeps K/N arithmetic small

std::optional<size_t> Number(std::string_view s) {
  size_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::optional<size_t> EnvNumber(const EnvLookup& env, const char* name) {
  const char* v = env(name);
  return v ? Number(v) : std::nullopt;
}

constexpr const char* kSlurmVars = "SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_COUNT (a Slurm array job: sbatch --array)";
constexpr const char* kK8sVar = "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job, with the count as --shard auto/N)";

}  // namespace

Result<Shard> ParseShard(std::string_view value, std::string_view flag, ShardErrorCodes codes, const EnvLookup& lookup) {
  const EnvLookup env = lookup ? lookup : EnvLookup([](const char* name) -> const char* { return std::getenv(name); });
  auto bad = [&](std::string why, std::string fix) {
    return Status::Error(std::string(codes.bad_value), std::string(flag), std::string(value), std::move(why), std::move(fix));
  };
  const auto slash = value.find('/');
  const std::string_view head = value.substr(0, slash);
  std::optional<size_t> n;
  if (slash != std::string_view::npos) {
    n = Number(value.substr(slash + 1));
    if (!n || *n < 1 || *n > kMaxShards) return bad("N must be a number from 1 to " + std::to_string(kMaxShards), "Give K/N, auto or auto/N.");
  }
  if (head != "auto") {
    const auto k = Number(head);
    if (!k || !n || *k < 1 || *k > *n) return bad("must be K/N with 1 <= K <= N, auto or auto/N", "Run shards 1/N .. N/N, then merge their results.");
    return Shard{*k, *n};
  }
  if (const auto id = EnvNumber(env, "SLURM_ARRAY_TASK_ID")) {
    if (n) {  // the task id is the shard: an array numbered 1..N
      if (*id < 1 || *id > *n)
        return bad("SLURM_ARRAY_TASK_ID is " + std::to_string(*id) + ", outside 1.." + std::to_string(*n), "Number the array's tasks 1..N (sbatch --array=1-N).");
      return Shard{*id, *n};
    }
    const auto min = EnvNumber(env, "SLURM_ARRAY_TASK_MIN"), count = EnvNumber(env, "SLURM_ARRAY_TASK_COUNT");
    const size_t step = EnvNumber(env, "SLURM_ARRAY_TASK_STEP").value_or(1);
    const auto max = EnvNumber(env, "SLURM_ARRAY_TASK_MAX");
    if (!min || !count || !max || *count < 1 || *count > kMaxShards || step < 1)
      return bad(std::string("a Slurm array task needs ") + kSlurmVars, "Run it as an array task, or give --shard K/N.");
    // Tasks min, min + step, ..., max: the i-th is shard i + 1. Anything else (a list such as 1,4,9) has no
    // order the variables tell; the count must be given.
    if (*max < *min || (*max - *min) % step != 0 || (*max - *min) / step + 1 != *count || *id < *min || (*id - *min) % step != 0)
      return bad("the array's task ids (" + std::to_string(*min) + ".." + std::to_string(*max) + ", " + std::to_string(*count) +
                     " tasks) are not an even range", "Number the array's tasks 1..N and give --shard auto/N.");
    return Shard{(*id - *min) / step + 1, *count};
  }
  if (const auto index = EnvNumber(env, "JOB_COMPLETION_INDEX")) {
    if (!n) return bad("a Kubernetes Indexed Job does not tell the count", "Give it: --shard auto/N (N = the Job's completions).");
    if (*index >= *n) return bad("JOB_COMPLETION_INDEX is " + std::to_string(*index) + ", outside 0.." + std::to_string(*n - 1), "Give N = the Job's completions.");
    return Shard{*index + 1, *n};
  }
  return Status::Error(std::string(codes.usage), std::string(flag), std::string(value),
                       std::string("no scheduler found: looked for ") + kSlurmVars + " and " + kK8sVar,
                       "Run it as a Slurm array task or a Kubernetes Indexed Job, or give --shard K/N.");
}

std::pair<size_t, size_t> ShardRange(const Shard& s, size_t count) {
  return {count * (s.k - 1) / s.n, count * s.k / s.n};
}

}  // namespace npu
