// Reading the precision flags and their files (--modify_mixlist JSON, --keep_dtype and --customize_dtypes
// line files, --op_precision_mode ini). Every mistake is a coded error naming the flag, the file and the line.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "base/file_io.h"
#include "base/json.h"
#include "passes/precision.h"

#include <sstream>

namespace npu {

extern const std::pair<std::string_view, std::string_view> kBuiltinMixLists[];
extern const size_t kBuiltinMixListsCount;

namespace {

struct ModeRow {
  std::string_view name;
  bool v2;  // a --precision_mode_v2 value (else --precision_mode)
  PrecisionMode mode;
};

// Source: ATC's parameter reference on hiascend.com (--precision_mode, --precision_mode_v2) and GE's flag checks.
constexpr ModeRow kModes[] = {
    {"force_fp16", false, PrecisionMode::kForceFp16},
    {"allow_fp32_to_fp16", false, PrecisionMode::kAllowFp32ToFp16},
    {"allow_mix_precision", false, PrecisionMode::kMixFp16},
    {"allow_mix_precision_fp16", false, PrecisionMode::kMixFp16},
    {"allow_mix_precision_bf16", false, PrecisionMode::kMixBf16},
    {"allow_fp32_to_bf16", false, PrecisionMode::kAllowFp32ToBf16},
    {"must_keep_origin_dtype", false, PrecisionMode::kOrigin},
    {"force_fp32", false, PrecisionMode::kCubeFp16InFp32Out},
    {"cube_fp16in_fp32out", false, PrecisionMode::kCubeFp16InFp32Out},
    {"fp16", true, PrecisionMode::kForceFp16},
    {"origin", true, PrecisionMode::kOrigin},
    {"cube_fp16in_fp32out", true, PrecisionMode::kCubeFp16InFp32Out},
    {"mixed_float16", true, PrecisionMode::kMixFp16},
    {"mixed_bfloat16", true, PrecisionMode::kMixBf16},
};

constexpr std::string_view kImplModes[] = {"high_performance", "high_precision", "high_precision_for_all",
                                           "high_performance_for_all"};
constexpr std::string_view kOpPrecisionModes[] = {"high_precision", "high_performance", "support_out_of_bound_index",
                                                  "enable_float_32_execution", "enable_hi_float_32_execution", "keep_fp16"};

std::string Trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string() : std::string(s.substr(b, e - b + 1));
}

std::vector<std::string> SplitList(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      if (std::string t = Trim(s.substr(start, i - start)); !t.empty()) out.push_back(std::move(t));
      start = i + 1;
    }
  return out;
}

// A line-based config file given to `flag`, which must exist.
Result<std::vector<std::pair<int, std::string>>> ReadLines(const std::string& flag, const std::string& path) {
  if (!FileExists(path))
    return Status::Error("E10410", flag, path, "the file does not exist", "Give --" + flag.substr(2) + " an existing file.");
  return ReadConfigLines(path);
}

Status LineError(const std::string& flag, const std::string& path, int line, const std::string& text, std::string why,
                 std::string fix) {
  return Status::Error("E10001", flag, path + ":" + std::to_string(line) + " '" + text + "'", std::move(why), std::move(fix));
}

void LoadModifyMixlist(const std::string& path, PrecisionConfig& cfg, std::vector<Status>& errors) {
  MixList& lists = cfg.lists;
  const std::string flag = "--modify_mixlist";
  if (!FileExists(path)) {
    errors.push_back(Status::Error("E10410", flag, path, "the file does not exist"));
    return;
  }
  auto text = ReadFileToString(path);
  if (!text.ok()) return errors.push_back(text.status());
  nlohmann::json j = npu::ParseJson(text.value());
  const std::string form = R"(Write {"black-list":{"to-add":["OpType"],"to-remove":[]},"white-list":{...},"gray-list":{...}} with Ascend IR op types.)";
  if (j.is_discarded() || !j.is_object())
    return errors.push_back(Status::Error("E10032", flag, path, "the file is not a JSON object", form));
  for (const auto& [list, ops] : j.items()) {
    if (list != "black-list" && list != "white-list" && list != "gray-list")
      return errors.push_back(Status::Error("E10001", flag, path, "unknown key '" + list + "': the lists are black-list, white-list and gray-list", form));
    if (!ops.is_object()) return errors.push_back(Status::Error("E10001", flag, path, "'" + list + "' must be an object with to-add / to-remove", form));
    for (const auto& [action, types] : ops.items()) {
      if ((action != "to-add" && action != "to-remove") || !types.is_array())
        return errors.push_back(Status::Error("E10001", flag, path, "'" + list + "." + action + "' must be to-add or to-remove with an array of op types", form));
      for (const auto& t : types) {
        if (!t.is_string()) return errors.push_back(Status::Error("E10001", flag, path, "'" + list + "." + action + "' holds a non-string entry", form));
        std::string op = t.get<std::string>();
        cfg.mixlist_named.insert(op);
        bool add = action == "to-add";
        // Adding to one list takes the op out of the other; removing returns it to gray.
        if (list == "white-list") {
          if (add) lists.white.insert(op), lists.black.erase(op);
          else lists.white.erase(op);
        } else if (list == "black-list") {
          if (add) lists.black.insert(op), lists.white.erase(op);
          else lists.black.erase(op);
        } else if (add) {
          lists.white.erase(op), lists.black.erase(op);
        }
      }
    }
  }
}

void LoadKeepDtype(const std::string& path, PrecisionConfig& cfg, std::vector<Status>& errors) {
  auto lines = ReadLines("--keep_dtype", path);
  if (!lines.ok()) return errors.push_back(lines.status());
  for (const auto& [no, line] : lines.value()) {
    if (line.rfind("OpType::", 0) == 0) {
      std::string type = Trim(line.substr(8));
      if (type.empty())
        return errors.push_back(LineError("--keep_dtype", path, no, line, "OpType:: names no op type", "Write OpType::Relu (an Ascend IR op type)."));
      cfg.keep_types.insert(type);
    } else if (line.find("::") != std::string::npos || line.find_first_of(" \t,;") != std::string::npos) {
      return errors.push_back(LineError("--keep_dtype", path, no, line, "a line holds one op name or OpType::<type>",
                                        "Put one op name per line, or OpType::Relu for every op of a type."));
    } else {
      cfg.keep_names.insert(line);
    }
  }
}

Result<std::vector<std::optional<DType>>> ParseDtypeList(const std::vector<std::string>& names) {
  std::vector<std::optional<DType>> out;
  for (const auto& n : names) {
    auto t = DTypeFromName(n);
    if (!t) return Status::Error("E10001", "dtype", n, "not a dtype name (float16, float32, bfloat16, int8, ...)");
    out.push_back(t);
  }
  return out;
}

// "InputDtype:float16,float16,OutputDtype:float32" (either part may be absent).
Result<DtypeOverride> ParseOverride(std::string_view spec) {
  DtypeOverride o;
  std::vector<std::string> in, out;
  std::vector<std::string>* cur = nullptr;
  for (std::string item : SplitList(spec, ',')) {
    if (item.rfind("InputDtype:", 0) == 0) cur = &in, item = item.substr(11);
    else if (item.rfind("OutputDtype:", 0) == 0) cur = &out, item = item.substr(12);
    if (!cur) return Status::Error("E10001", "entry", std::string(spec), "the list must start with InputDtype: or OutputDtype:");
    cur->push_back(Trim(item));
  }
  if (in.empty() && out.empty()) return Status::Error("E10001", "entry", std::string(spec), "no InputDtype or OutputDtype given");
  NPU_ASSIGN_OR_RETURN(o.inputs, ParseDtypeList(in));
  NPU_ASSIGN_OR_RETURN(o.outputs, ParseDtypeList(out));
  return o;
}

void LoadCustomizeDtypes(const std::string& path, PrecisionConfig& cfg, std::vector<Status>& errors) {
  auto lines = ReadLines("--customize_dtypes", path);
  if (!lines.ok()) return errors.push_back(lines.status());
  const std::string fix = "Write OpName::InputDtype:float16,float16,OutputDtype:float16 or OpType::Relu:InputDtype:float16,OutputDtype:float16.";
  for (const auto& [no, line] : lines.value()) {
    size_t sep = line.find("::");
    if (sep == std::string::npos || sep == 0) return errors.push_back(LineError("--customize_dtypes", path, no, line, "no '::' after the op name", fix));
    std::string head = line.substr(0, sep), rest = line.substr(sep + 2);
    bool by_type = head == "OpType";
    std::string key = head;
    if (by_type) {
      size_t colon = rest.find(':');
      if (colon == std::string::npos || colon == 0) return errors.push_back(LineError("--customize_dtypes", path, no, line, "OpType:: needs a type and then the dtypes", fix));
      key = rest.substr(0, colon);
      rest = rest.substr(colon + 1);
    }
    auto o = ParseOverride(rest);
    if (!o.ok()) return errors.push_back(LineError("--customize_dtypes", path, no, line, o.status().reason(), fix));
    (by_type ? cfg.custom_by_type : cfg.custom_by_name)[key] = std::move(o).value();
  }
}

void LoadOpPrecisionMode(const std::string& path, PrecisionConfig& cfg, std::vector<Status>& errors) {
  auto lines = ReadLines("--op_precision_mode", path);
  if (!lines.ok()) return errors.push_back(lines.status());
  auto* section = &cfg.op_mode_by_type;  // plain key=value lines mean op types (the older form)
  for (const auto& [no, line] : lines.value()) {
    if (line == "[ByOpType]") { section = &cfg.op_mode_by_type; continue; }
    if (line == "[ByNodeName]") { section = &cfg.op_mode_by_name; continue; }
    size_t eq = line.find('=');
    std::string key = eq == std::string::npos ? "" : Trim(line.substr(0, eq)), mode = eq == std::string::npos ? "" : Trim(line.substr(eq + 1));
    bool known = std::find(std::begin(kOpPrecisionModes), std::end(kOpPrecisionModes), mode) != std::end(kOpPrecisionModes);
    if (key.empty() || !known)
      return errors.push_back(LineError("--op_precision_mode", path, no, line,
                                        key.empty() ? "expected [ByOpType], [ByNodeName] or OpType=mode" : "unknown mode '" + mode + "'",
                                        "Modes: high_precision, high_performance, support_out_of_bound_index, enable_float_32_execution, "
                                        "enable_hi_float_32_execution, keep_fp16."));
    (*section)[key] = mode;
  }
}

void LoadImplMode(const PrecisionFlags& f, PrecisionConfig& cfg, std::vector<Status>& errors) {
  if (!f.op_select_implmode.empty()) {
    if (std::find(std::begin(kImplModes), std::end(kImplModes), f.op_select_implmode) == std::end(kImplModes))
      errors.push_back(Status::Error("E10001", "--op_select_implmode", f.op_select_implmode,
                                     "the value must be high_performance, high_precision, high_precision_for_all or high_performance_for_all"));
    else cfg.implmode = f.op_select_implmode;
  }
  if (f.optypelist_for_implmode.empty()) return;
  if (f.op_select_implmode != "high_precision" && f.op_select_implmode != "high_performance")
    errors.push_back(Status::Error("E10001", "--optypelist_for_implmode", f.optypelist_for_implmode,
                                   "it applies --op_select_implmode to the listed types, so that must be high_precision or high_performance",
                                   "Add --op_select_implmode=high_precision (or high_performance)."));
  for (auto& t : SplitList(f.optypelist_for_implmode, ',')) cfg.implmode_types.insert(t);
}

void LoadMode(const PrecisionFlags& f, const SocSpec& soc, PrecisionConfig& cfg, std::vector<Status>& errors) {
  if (!f.precision_mode.empty() && !f.precision_mode_v2.empty())
    return errors.push_back(Status::Error("E10047", "--precision_mode, --precision_mode_v2", f.precision_mode + ", " + f.precision_mode_v2,
                                          "--precision_mode and --precision_mode_v2 are mutually exclusive",
                                          "Keep one: --precision_mode_v2 is the newer spelling of the same choice."));
  bool v2 = !f.precision_mode_v2.empty();
  std::string value = v2 ? f.precision_mode_v2 : f.precision_mode.empty() ? "force_fp16" : f.precision_mode;
  const ModeRow* row = nullptr;
  std::string names;
  for (const ModeRow& r : kModes)
    if (r.v2 == v2) {
      if (r.name == value) row = &r;
      names += (names.empty() ? "" : ", ") + std::string(r.name);
    }
  std::string flag = v2 ? "--precision_mode_v2" : "--precision_mode";
  if (!row) return errors.push_back(Status::Error("E10001", flag, value, "the value must be one of " + names));
  cfg.mode = row->mode;
  cfg.mode_name = value;
  bool bf16 = row->mode == PrecisionMode::kMixBf16 || row->mode == PrecisionMode::kAllowFp32ToBf16;
  if (bf16 && !soc.has_bf16)
    errors.push_back(Status::Error("E10001", flag, value, soc.name + " has no bfloat16 support (only the Ascend910B* SoCs do)",
                                   "Use a float16 mode (e.g. allow_mix_precision) on " + soc.name + ", or target an Ascend910B SoC."));
}

}  // namespace

bool IsMixedMode(PrecisionMode m) { return m == PrecisionMode::kMixFp16 || m == PrecisionMode::kMixBf16; }

Result<MixList> BuiltinMixList(std::string_view family) {
  for (size_t i = 0; i < kBuiltinMixListsCount; ++i) {
    if (kBuiltinMixLists[i].first != family) continue;
    nlohmann::json j = nlohmann::json::parse(kBuiltinMixLists[i].second);
    MixList m;
    for (const auto& t : j.at("white-list")) m.white.insert(t.get<std::string>());
    for (const auto& t : j.at("black-list")) m.black.insert(t.get<std::string>());
    return m;
  }
  std::string known;
  for (size_t i = 0; i < kBuiltinMixListsCount; ++i) known += (i ? ", " : "") + std::string(kBuiltinMixLists[i].first);
  return Status::Error("E10001", "Short_SoC_version", std::string(family), "no SoC family of this name has mixed-precision lists (" + known + ")",
                       "In a --soc_spec file, set [version] Short_SoC_version to the family of a built-in SoC, e.g. Ascend310P.");
}

// --output_type: one dtype for every net output ("FP16"), or "node:idx:FP16;node2:0:FP32" per output.
void LoadOutputType(const std::string& spec, PrecisionConfig& cfg, std::vector<Status>& errors) {
  static const std::map<std::string, DType, std::less<>> kOutputTypes = {{"FP32", DType::kF32}, {"FP16", DType::kF16}, {"UINT8", DType::kU8}};
  auto type = [&](const std::string& t) -> std::optional<DType> {
    auto it = kOutputTypes.find(t);
    if (it != kOutputTypes.end()) return it->second;
    errors.push_back(Status::Error("E10001", "--output_type", spec, "'" + t + "' is not FP32, FP16 or UINT8"));
    return std::nullopt;
  };
  if (spec.find(':') == std::string::npos) {
    cfg.output_type = type(spec);
    return;
  }
  std::stringstream ss(spec);
  for (std::string item; std::getline(ss, item, ';');) {
    if (item.empty()) continue;
    size_t a = item.find(':'), b = item.rfind(':');
    char* end = nullptr;
    long long idx = a == b ? -1 : std::strtoll(item.c_str() + a + 1, &end, 10);
    if (a == b || a == 0 || end != item.c_str() + b || idx < 0) {
      errors.push_back(Status::Error("E10001", "--output_type", spec, "'" + item + "' is not of the form node:index:TYPE"));
      continue;
    }
    if (auto t = type(item.substr(b + 1))) cfg.output_type_by_node[{item.substr(0, a), idx}] = *t;
  }
}

PrecisionConfig LoadPrecisionConfig(const PrecisionFlags& f, const SocSpec& soc, std::vector<Status>& errors) {
  PrecisionConfig cfg;
  cfg.soc = &soc;
  LoadMode(f, soc, cfg, errors);
  if (auto lists = BuiltinMixList(soc.ops_family); lists.ok()) cfg.lists = std::move(lists).value();
  else errors.push_back(lists.status());
  if (!f.modify_mixlist.empty()) {
    if (!IsMixedMode(cfg.mode))
      errors.push_back(Status::Error("E10001", "--modify_mixlist", f.modify_mixlist,
                                     "the lists only apply in a mixed mode, and --precision_mode is " + cfg.mode_name,
                                     "Add --precision_mode=allow_mix_precision (or --precision_mode_v2=mixed_float16), or drop --modify_mixlist."));
    LoadModifyMixlist(f.modify_mixlist, cfg, errors);
  }
  if (!f.keep_dtype.empty()) LoadKeepDtype(f.keep_dtype, cfg, errors);
  if (!f.customize_dtypes.empty()) LoadCustomizeDtypes(f.customize_dtypes, cfg, errors);
  if (!f.op_precision_mode.empty()) LoadOpPrecisionMode(f.op_precision_mode, cfg, errors);
  LoadImplMode(f, cfg, errors);
  if (!f.output_type.empty()) LoadOutputType(f.output_type, cfg, errors);
  return cfg;
}

}  // namespace npu
