#include "tune/bank.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/file_io.h"
#include "base/json.h"

namespace npu {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr char kFileSuffix[] = "_runtime_kb.json";

json TilingJson(const Tiling& t) {
  return {{"block_dim", t.block_dim}, {"block_batch", t.block_batch}, {"block_m", t.block_m}, {"block_n", t.block_n},
          {"base_m", t.base_m}, {"base_n", t.base_n}, {"base_k", t.base_k}, {"step_m", t.step_m}, {"step_n", t.step_n},
          {"step_k", t.step_k}, {"db_l1", t.db_l1}, {"db_l0", t.db_l0}, {"n_inner", t.n_inner}, {"ub_tile", t.ub_tile}};
}

Tiling TilingFrom(const json& j) {
  Tiling t;
  t.block_dim = j.at("block_dim"), t.block_batch = j.at("block_batch"), t.block_m = j.at("block_m"), t.block_n = j.at("block_n");
  t.base_m = j.at("base_m"), t.base_n = j.at("base_n"), t.base_k = j.at("base_k");
  t.step_m = j.at("step_m"), t.step_n = j.at("step_n"), t.step_k = j.at("step_k");
  t.db_l1 = j.at("db_l1"), t.db_l0 = j.at("db_l0"), t.n_inner = j.at("n_inner"), t.ub_tile = j.at("ub_tile");
  return t;
}


bool IsBankFile(const std::string& name) {
  constexpr size_t n = sizeof(kFileSuffix) - 1;
  return name.size() > n && name.compare(name.size() - n, n, kFileSuffix) == 0;
}

// Each non-empty line of a bank file, parsed: fn(lineno, key, line, record). A line that is not a bank record
// is EG0012 naming the file and line. A missing file has no lines.
template <class Fn>
Status ForEachRecord(const fs::path& path, Fn&& fn) {
  std::ifstream in(path);
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    if (line.empty()) continue;
    json j = npu::ParseJson(line);
    if (j.is_discarded() || !j.is_object() || !j.contains("info_dict") || !j["info_dict"].is_object() ||
        !j["info_dict"].contains("key") || !j["info_dict"]["key"].is_string() || !j.contains("knowledge") || !j.contains("version"))
      return Status::Error("EG0012", "TUNE_BANK_PATH", path.string() + ":" + std::to_string(lineno), "the line is not a bank record",
                           "Run `aoe bank verify` or delete the line.");
    NPU_RETURN_IF_ERROR(fn(lineno, j["info_dict"]["key"].get<std::string>(), line, j));
  }
  return Status::Ok();
}

}  // namespace

// CANN's banks carry a 32-bit hash of the key struct as the record id; ours hashes the key text.
uint32_t TilingKeyHash(const std::string& key) {
  uint32_t h = 2166136261u;
  for (unsigned char c : key) h = (h ^ c) * 16777619u;
  return h;
}

Result<std::vector<BankFile>> ReadBankTree(const std::string& root) {
  std::vector<BankFile> files;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return Status::Error("EG0012", "bank", root, "not a folder");
  std::vector<fs::path> paths;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file() && IsBankFile(it->path().filename().string())) paths.push_back(it->path());
  std::sort(paths.begin(), paths.end());
  for (const auto& path : paths) {
    BankFile f;
    f.relative_path = fs::relative(path, root).string();
    NPU_RETURN_IF_ERROR(ForEachRecord(path, [&](int, const std::string& key, const std::string& line, const json& j) {
      f.lines[key] = line;
      f.after_us[key] = j.value("performance_after_tune(us)", 0.0);
      return Status::Ok();
    }));
    files.push_back(std::move(f));
  }
  return files;
}

Status WriteBankTree(const std::string& root, const std::vector<BankFile>& files) {
  for (const BankFile& f : files) {
    fs::path path = fs::path(root) / f.relative_path;
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) return Status::Error("EG0010", "bank", path.parent_path().string(), "cannot create the directory: " + ec.message());
    NPU_RETURN_IF_ERROR(WriteLinesAtomic(path.string(), f.lines));
  }
  return Status::Ok();
}

std::string TuneBank::DefaultRoot() {
  if (const char* p = std::getenv("TUNE_BANK_PATH"); p && *p) return p;
  if (const char* p = std::getenv("ASCEND_CACHE_PATH"); p && *p) return std::string(p) + "/aoe_data";
  const char* home = std::getenv("HOME");
  return std::string(home ? home : ".") + "/Ascend/latest/data/aoe/custom/op";
}

std::string TuneBank::FileFor(const std::string& op_type) const {
  return dir_ + "/" + soc_name_ + "_" + std::to_string(cores_) + "_AiCore_" + op_type + kFileSuffix;
}

Result<TuneBank> TuneBank::Open(const std::string& root, const SocSpec& soc) {
  TuneBank b;
  b.soc_name_ = soc.name;
  b.cores_ = soc.ai_cores;
  b.dir_ = root + "/" + soc.name + "/unified_bank";
  std::error_code ec;
  if (!fs::is_directory(b.dir_, ec)) return b;
  std::string prefix = soc.name + "_" + std::to_string(soc.ai_cores) + "_AiCore_";
  for (const auto& e : fs::directory_iterator(b.dir_, ec)) {
    std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) != 0 || !IsBankFile(name)) continue;
    NPU_RETURN_IF_ERROR(ForEachRecord(e.path(), [&](int lineno, const std::string& key, const std::string&, const json& j) -> Status {
      if (!j["version"].is_number_integer() || j["version"].get<int>() != kCostModelVersion) {
        ++b.skipped_;  // another cost-model version: its tilings were chosen by other formulas
        return Status::Ok();
      }
      BankRecord r;
      try {
        r.op_type = j.at("op");
        r.key = key;
        r.tiling = TilingFrom(j.at("knowledge"));
        r.before_us = j.value("performance_before_tune(us)", 0.0);
        r.after_us = j.value("performance_after_tune(us)", 0.0);
      } catch (const std::exception& ex) {
        return Status::Error("EG0012", "TUNE_BANK_PATH", e.path().string() + ":" + std::to_string(lineno),
                             std::string("a bank record is malformed: ") + ex.what(), "Run `aoe bank verify` or delete the line.");
      }
      b.records_[key] = std::move(r);
      return Status::Ok();
    }));
  }
  return b;
}

const BankRecord* TuneBank::Find(const std::string& key) const {
  auto it = records_.find(key);
  return it == records_.end() ? nullptr : &it->second;
}

void TuneBank::Put(BankRecord r) {
  dirty_types_.insert(r.op_type);
  records_[r.key] = std::move(r);
}

Status TuneBank::Save() {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) return Status::Error("EG0010", "TUNE_BANK_PATH", dir_, "cannot create the bank directory: " + ec.message());
  for (const std::string& type : dirty_types_) {
    std::string path = FileFor(type);
    FileLock lock(path);
    if (!lock.ok()) return Status::Error("EG0010", "TUNE_BANK_PATH", path + ".lock", "cannot lock the bank file");
    // Another process may have added records since we loaded: merge theirs (ours win on the same key).
    std::map<std::string, std::string> lines;
    NPU_RETURN_IF_ERROR(ForEachRecord(path, [&](int, const std::string& key, const std::string& line, const json&) {
      lines[key] = line;
      return Status::Ok();
    }));
    for (const auto& [key, r] : records_) {
      if (r.op_type != type) continue;
      json j = {{"id", TilingKeyHash(key)}, {"op", type}, {"version", kCostModelVersion}, {"info_dict", {{"key", key}, {"soc", soc_name_}, {"core_num", cores_}}},
                {"knowledge", TilingJson(r.tiling)}, {"performance_before_tune(us)", r.before_us}, {"performance_after_tune(us)", r.after_us}};
      lines[key] = DumpJson(j);
    }
    NPU_RETURN_IF_ERROR(WriteLinesAtomic(path, lines));
  }
  dirty_types_.clear();
  return Status::Ok();
}

}  // namespace npu
