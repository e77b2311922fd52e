#include "debug/dump_config.h"
#include "base/json.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "base/file_io.h"

namespace npu::debug {
namespace {

using nlohmann::json;

std::optional<uint64_t> Number(std::string_view s) {
  uint64_t v;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Reads an optional string member; a present non-string is an error.
std::string Str(const json& d, const char* key, const std::string& dflt, std::vector<std::string>& errs) {
  if (!d.contains(key)) return dflt;
  if (!d[key].is_string()) {
    errs.push_back(std::string("\"") + key + "\" must be a string");
    return dflt;
  }
  return d[key].get<std::string>();
}

}  // namespace

bool DumpConfig::StepSelected(uint64_t step) const {
  if (all_steps) return true;
  for (auto [a, b] : steps)
    if (step >= a && step <= b) return true;
  return false;
}

const DumpConfig::Entry* DumpConfig::EntryFor(const std::string& model_name) const {
  for (const Entry& e : list)
    if (e.model_name.empty() || e.model_name == model_name) return &e;
  return nullptr;
}

Result<std::vector<std::pair<uint64_t, uint64_t>>> ParseDumpStep(const std::string& s) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find('|', b);
    std::string item = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    size_t dash = item.find('-');
    auto lo = Number(item.substr(0, dash));
    auto hi = dash == std::string::npos ? lo : Number(item.substr(dash + 1));
    if (!lo || !hi || *lo > *hi)
      return Status::Error("EC0013", "dump_step", s,
                           "\"" + item + "\" is not a step or an ascending range like 3-5",
                           "Use steps and ranges separated by '|', e.g. \"0|3-5|10\".");
    out.emplace_back(*lo, *hi);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  if (out.size() > 100)
    return Status::Error("EC0013", "dump_step", s, "more than 100 step entries", "Merge steps into ranges such as 0-199.");
  return out;
}

Result<DumpConfig> ParseDumpConfig(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  std::string why;
  json j = npu::ParseJson(text, &why);
  if (j.is_discarded() || !j.is_object())
    return Status::Error("EC0013", "--acl_json_path", path, "the file is not a JSON object" + (why.empty() ? "" : ": " + why),
                         "Write acl.json as {\"dump\": {...}}; check quotes and commas.");
  DumpConfig c;
  if (!j.contains("dump")) return c;  // an acl.json without a dump section dumps nothing
  const json& d = j["dump"];
  if (!d.is_object()) return Status::Error("EC0013", "--acl_json_path", path, "\"dump\" must be an object");
  std::vector<std::string> errs;
  static const std::set<std::string> kKnown = {"dump_path", "dump_list", "dump_mode", "dump_op_switch", "dump_step", "dump_debug",
                                               "dump_scene"};
  for (const auto& [k, v] : d.items())
    if (!kKnown.count(k)) c.warnings.push_back("unknown key \"" + k + "\" in the dump section is ignored");

  c.path = Str(d, "dump_path", "", errs);
  std::string mode = Str(d, "dump_mode", "output", errs);
  if (mode == "input") c.inputs = true, c.outputs = false;
  else if (mode == "all") c.inputs = true;
  else if (mode != "output") errs.push_back("dump_mode \"" + mode + "\" must be input, output or all");
  std::string sw = Str(d, "dump_op_switch", "off", errs);
  if (sw != "on" && sw != "off") errs.push_back("dump_op_switch \"" + sw + "\" must be on or off");
  std::string dbg = Str(d, "dump_debug", "off", errs);
  if (dbg != "on" && dbg != "off") errs.push_back("dump_debug \"" + dbg + "\" must be on or off");
  c.dump_debug = dbg == "on";
  if (std::string scene = Str(d, "dump_scene", "", errs); !scene.empty()) {
    if (scene != "lite_exception") errs.push_back("dump_scene \"" + scene + "\" must be lite_exception (the exception dump)");
    c.exception = scene == "lite_exception";
  }
  if (std::string step = Str(d, "dump_step", "", errs); !step.empty()) {
    auto r = ParseDumpStep(step);
    if (r.ok()) c.steps = r.value(), c.all_steps = false;
    else errs.push_back(r.status().reason());
  }
  if (d.contains("dump_list")) {
    c.dump_data = true;
    if (!d["dump_list"].is_array()) errs.push_back("\"dump_list\" must be an array");
    else
      for (const json& e : d["dump_list"]) {
        if (!e.is_object()) {
          errs.push_back("every dump_list entry must be an object with model_name and layer");
          continue;
        }
        DumpConfig::Entry entry;
        entry.model_name = Str(e, "model_name", "", errs);
        if (e.contains("layer")) {
          if (!e["layer"].is_array()) errs.push_back("\"layer\" must be an array of op names");
          else
            for (const json& l : e["layer"]) {
              if (l.is_string()) entry.layers.push_back(l.get<std::string>());
              else errs.push_back("\"layer\" entries must be op names (strings)");
            }
        }
        c.list.push_back(std::move(entry));
      }
    if (c.list.empty()) c.list.push_back({});  // "dump_list": [] dumps every op of every model
  }
  if (c.dump_data && c.dump_debug)
    errs.push_back("operator dumps (dump_list) and overflow detection (dump_debug on) cannot be enabled together");
  if ((c.dump_data || c.dump_debug) && c.path.empty()) errs.push_back("\"dump_path\" is required when dumping");
  if (!errs.empty()) {
    std::string all;
    for (const auto& e : errs) all += (all.empty() ? "" : "; ") + e;
    return Status::Error("EC0013", "--acl_json_path", path, all);
  }
  return c;
}

}  // namespace npu::debug
