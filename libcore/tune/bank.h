// The tune bank: tilings aoe found better than the built-in ones, laid out as CANN's runtime knowledge bank
// (<root>/<soc>/unified_bank/<soc>_<cores>_AiCore_<OpType>_runtime_kb.json, JSON Lines of
// {id, op, version, info_dict, knowledge}), read by atc through TUNE_BANK_PATH. Saving rewrites a file under a
// temporary name and renames it while holding an exclusive lock, so a reader never sees half a file.
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "cost/cost_model.h"

namespace npu {

struct BankRecord {
  std::string op_type;  // Ascend IR type (one file per type)
  std::string key;      // TilingKey of the work (shapes, dtypes, epilogue)
  Tiling tiling;
  double before_us = 0, after_us = 0;  // cost-model durations with the built-in and the banked tiling
};

// FNV-1a of a tiling key: the record id, and what --shard splits on (stable across machines).
uint32_t TilingKeyHash(const std::string& key);

// One bank file's records, by key, straight from disk (all SoCs and versions; for verify/merge/diff).
struct BankFile {
  std::string relative_path;  // <soc>/unified_bank/<file>
  std::map<std::string, std::string> lines;  // key -> the JSON line
  std::map<std::string, double> after_us;    // key -> performance_after_tune(us)
};
// Every *_runtime_kb.json under root; a malformed line is an error naming file and line.
Result<std::vector<BankFile>> ReadBankTree(const std::string& root);
// Writes files (lines sorted by key) under root, each atomically.
Status WriteBankTree(const std::string& root, const std::vector<BankFile>& files);

class TuneBank {
 public:
  // TUNE_BANK_PATH, else ASCEND_CACHE_PATH/aoe_data, else ~/Ascend/latest/data/aoe/custom/op (CANN's order).
  static std::string DefaultRoot();
  // Loads <root>/<soc>/unified_bank/ (missing is empty). Records of another cost-model version or that no
  // longer fit the SoC are skipped and counted; a malformed line is an error naming the file and line.
  static Result<TuneBank> Open(const std::string& root, const SocSpec& soc);
  const BankRecord* Find(const std::string& key) const;
  void Put(BankRecord r);
  // Writes every op type whose records changed.
  Status Save();
  size_t size() const { return records_.size(); }
  size_t skipped() const { return skipped_; }
  std::string dir() const { return dir_; }

 private:
  std::string dir_, soc_name_;
  int cores_ = 0;
  std::map<std::string, BankRecord> records_;  // by key
  std::set<std::string> dirty_types_;  // op types with records to save
  size_t skipped_ = 0;
  std::string FileFor(const std::string& op_type) const;
};

}  // namespace npu
