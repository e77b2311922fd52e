#include "rules.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "base/file_io.h"
#include "base/json.h"
#include "syntax.h"

namespace transplt {
namespace {

#include "builtin_rules.inc"

using nlohmann::json;

std::string Str(const json& j, const char* key) { return j.contains(key) ? j[key].get<std::string>() : std::string(); }

}  // namespace

bool IsIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

bool IsDottedName(std::string_view s) {
  for (size_t start = 0;;) {
    size_t dot = s.find('.', start);
    if (!IsIdentifier(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

const ApiRule* RuleSet::Match(std::string_view qualified) const {
  for (std::string_view q = qualified;;) {
    if (auto it = apis.find(std::string(q)); it != apis.end()) return &it->second;
    size_t dot = q.rfind('.');
    if (dot == std::string_view::npos) return nullptr;
    q = q.substr(0, dot);
  }
}

std::string RuleSet::Map(std::string_view qualified) const {
  const ApiRule* r = Match(qualified);
  if (!r || r->unsupported()) return std::string(qualified);
  return r->new_name + std::string(qualified.substr(r->old_name.size()));
}

RuleSet RuleSet::Builtin(bool similar) {
  const json j = json::parse(kBuiltinRulesJson);
  RuleSet rs;
  const json& code = j["code_rules"];
  rs.import_rule_id = code["import_torch_npu"]["id"];
  rs.device_id_rule_id = code["device_id"]["id"];
  rs.init_group_rule_id = code["init_process_group"]["id"];
  rs.dataloader_rule_id = code["dataloader"]["id"];
  rs.set_epoch_rule_id = code["set_epoch"]["id"];
  rs.ddp_rule_id = code["ddp"]["id"];
  rs.remove_dp_rule_id = code["remove_dataparallel"]["id"];
  rs.device_string_rule_id = code["device_id_strings"]["id"];
  rs.cuda_arg_rule_id = code["device_id_cuda_arg"]["id"];
  rs.set_device_rule_id = code["device_id_set"]["id"];
  rs.device_index_rule_id = code["device_index"]["id"];
  rs.ddp_load_rule_id = code["ddp_module_load"]["id"];
  for (auto it = code.begin(); it != code.end(); ++it) rs.code_rules.emplace_back((*it)["id"], (*it)["what"]);
  std::sort(rs.code_rules.begin(), rs.code_rules.end());
  for (const json& a : j["apis"])
    rs.apis[a["old"]] = ApiRule{a["id"], a["old"], a["new"], a["kind"], "", "", "", false};
  for (const json& f : j["api_families"])  // one rule id for a family of functions that move together
    for (const json& name : f["names"]) {
      std::string n = name;
      rs.apis[f["old"].get<std::string>() + "." + n] = ApiRule{f["id"], f["old"].get<std::string>() + "." + n, f["new"].get<std::string>() + "." + n, f["kind"], "", "", "", false};
    }
  for (const json& u : j["unsupported"]) {
    ApiRule r{u["id"], u["api"], "", "api", u["reason"], u["suggestion"], Str(u, "similar"), false};
    if (similar && !r.similar.empty()) {
      r.new_name = r.similar;
      r.replaced_by_similar = true;
    }
    rs.apis[r.old_name] = r;
  }
  for (const json& n : j["names"]) rs.names.push_back({n["id"], n["old"], n["new"], n["call_only"]});
  for (const json& k : j["keywords"]) rs.keywords.push_back({k["id"], k["function"], k["old"], k["new"]});
  for (const json& s : j["strings"]) rs.strings.push_back({s["id"], s["old"], s["new"], s["device"]});
  for (const json& a : j["advice"])
    rs.advice.push_back({a["id"], Str(a, "api"), Str(a, "method"), Str(a, "keyword"), Str(a, "value"), a["tip"],
                         a["kind"] == "precision" ? AdviceRule::kPrecision : AdviceRule::kPerformance});
  for (const json& c : j["config_advice"]) rs.config_advice.push_back({c["id"], c["setting"], c["tip"]});
  return rs;
}

namespace {

// Collects every problem of a custom rule file so the user fixes them in one go.
class RuleFileChecker {
 public:
  void Problem(const std::string& where, const std::string& what) { problems_ << "\n  " << where << ": " << what; }
  bool ok() const { return problems_.str().empty(); }
  std::string text() const { return problems_.str(); }

  // Returns the field as a string, or records why it is not one.
  std::string Field(const json& rule, const std::string& where, const char* key, bool dotted, bool allow_empty = false) {
    if (!rule.contains(key)) {
      Problem(where + "." + key, "missing (required)");
      return {};
    }
    if (!rule[key].is_string()) {
      Problem(where + "." + key, std::string("must be a string, not ") + rule[key].type_name());
      return {};
    }
    std::string v = rule[key];
    if (v.empty() && allow_empty) return v;
    if (dotted ? !IsDottedName(v) : !IsIdentifier(v))
      Problem(where + "." + key, "'" + v + "' is not a Python " + (dotted ? "dotted name (like torch.cuda.amp)" : "identifier"));
    return v;
  }
  void Keys(const json& rule, const std::string& where, std::initializer_list<const char*> allowed) {
    for (auto it = rule.begin(); it != rule.end(); ++it) {
      bool known = false;
      for (const char* a : allowed) known |= it.key() == a;
      if (!known) Problem(where, "unknown field '" + it.key() + "'");
    }
  }

 private:
  std::ostringstream problems_;
};

bool IsExpression(const std::string& text) {
  std::string wrapped = "(" + text + "\n)\n";
  Tree t = ParsePython(wrapped);
  TSNode root = ts_tree_root_node(t.get());
  if (ts_node_has_error(root) || ts_node_named_child_count(root) != 1) return false;
  TSNode stmt = ts_node_named_child(root, 0);
  return Is(stmt, sym::expression_statement) && ts_node_named_child_count(stmt) == 1;
}

}  // namespace

npu::Status RuleSet::AddCustom(const std::string& path) {
  auto text = npu::ReadFileToString(path);
  if (!text.ok()) {
    npu::Status s = text.status();
    return s.with_param("-r/--rule");
  }
  auto bad = [&](const std::string& why) {
    return npu::Status::Error("ET0003", "--rule", path, why,
                              "Write {\"rules\": {\"ArgsModifyRule\": [...], \"FuncNameModifyRule\": [...], "
                              "\"ModuleNameModifyRule\": [...]}} as the porting guide shows.");
  };
  std::string why;
  json j = npu::ParseJson(*text, &why);
  if (j.is_discarded()) return bad("not valid JSON: " + why);
  if (!j.is_object()) return bad("the top level must be an object with a \"rules\" member");
  RuleFileChecker c;
  for (auto it = j.begin(); it != j.end(); ++it)
    if (it.key() != "rules") c.Problem(it.key(), "unknown top-level member (only \"rules\" is allowed)");
  if (!j.contains("rules") || !j["rules"].is_object()) return bad("missing the \"rules\" object" + c.text());
  const json& rules = j["rules"];
  std::vector<ApiRule> new_apis;
  std::vector<NameRule> new_names;
  std::vector<ArgsRule> new_args;
  for (auto it = rules.begin(); it != rules.end(); ++it) {
    const std::string kind = it.key();
    if (kind != "ArgsModifyRule" && kind != "FuncNameModifyRule" && kind != "ModuleNameModifyRule") {
      c.Problem("rules." + kind, "unknown rule kind (use ArgsModifyRule, FuncNameModifyRule or ModuleNameModifyRule)");
      continue;
    }
    if (!it->is_array()) {
      c.Problem("rules." + kind, std::string("must be a list of rules, not ") + it->type_name());
      continue;
    }
    for (size_t i = 0; i < it->size(); ++i) {
      const json& r = (*it)[i];
      const std::string where = "rules." + kind + "[" + std::to_string(i) + "]";
      const std::string id = "custom." + kind + "[" + std::to_string(i) + "]";
      if (!r.is_object()) {
        c.Problem(where, std::string("must be an object, not ") + r.type_name());
        continue;
      }
      if (kind == "ArgsModifyRule") {
        c.Keys(r, where, {"func_name", "arg_idx", "arg_new"});
        std::string fn = c.Field(r, where, "func_name", true);
        int idx = -1;
        if (!r.contains("arg_idx")) c.Problem(where + ".arg_idx", "missing (required)");
        else if (!r["arg_idx"].is_number_integer() || r["arg_idx"].get<long long>() < 0 || r["arg_idx"].get<long long>() > 255)
          c.Problem(where + ".arg_idx", "must be an integer from 0 to 255, not " + npu::DumpJson(r["arg_idx"]));
        else idx = r["arg_idx"].get<int>();
        std::string arg;
        if (!r.contains("arg_new")) c.Problem(where + ".arg_new", "missing (required)");
        else if (!r["arg_new"].is_string()) c.Problem(where + ".arg_new", std::string("must be a string, not ") + r["arg_new"].type_name());
        else if (arg = r["arg_new"]; !IsExpression(arg)) c.Problem(where + ".arg_new", "'" + arg + "' is not a Python expression");
        new_args.push_back({id, fn, idx, arg});
      } else if (kind == "FuncNameModifyRule") {
        c.Keys(r, where, {"old_name", "new_name"});
        std::string o = c.Field(r, where, "old_name", true), n = c.Field(r, where, "new_name", true);
        if (o.find('.') == std::string::npos) {
          if (n.find('.') != std::string::npos) c.Problem(where + ".new_name", "a plain old_name needs a plain new_name");
          new_names.push_back({id, o, n, true});
        } else {
          new_apis.push_back({id, o, n, "function", "", "", "", false});
        }
      } else {
        c.Keys(r, where, {"old_name", "new_name", "parent_module"});
        std::string o = c.Field(r, where, "old_name", false), n = c.Field(r, where, "new_name", false);
        std::string p = c.Field(r, where, "parent_module", true, /*allow_empty=*/true);
        std::string prefix = p.empty() ? "" : p + ".";
        new_apis.push_back({id, prefix + o, prefix + n, "module", "", "", "", false});
      }
    }
  }
  for (const ApiRule& a : new_apis)
    if (a.old_name == a.new_name && !a.old_name.empty()) c.Problem(a.id, "old and new names are the same ('" + a.old_name + "')");
  if (!c.ok()) return bad("the rule file has mistakes:" + c.text());
  for (const auto& a : new_args) custom_ids.push_back(a.id);
  for (const auto& n : new_names) custom_ids.push_back(n.id);
  for (const auto& a : new_apis) custom_ids.push_back(a.id);
  std::sort(custom_ids.begin(), custom_ids.end());
  // Custom rules win over built-in ones with the same old name: the user asked for them explicitly.
  for (ApiRule& a : new_apis) apis[a.old_name] = std::move(a);
  for (NameRule& n : new_names) names.push_back(std::move(n));
  for (ArgsRule& a : new_args) args.push_back(std::move(a));
  return {};
}

std::string RuleSet::Describe() const {
  std::ostringstream os;
  for (const auto& [id, what] : code_rules) os << id << "  code      " << what << "\n";
  std::vector<const ApiRule*> sorted;
  for (const auto& [k, v] : apis) sorted.push_back(&v);
  std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->id < b->id; });
  for (const ApiRule* a : sorted) {
    if (a->unsupported()) os << a->id << "  report    " << a->old_name << "  (" << a->reason << ")\n";
    else os << a->id << "  " << (a->replaced_by_similar ? "similar " : "rename  ") << "  " << a->old_name << " -> " << a->new_name << "\n";
  }
  for (const NameRule& n : names) os << n.id << "  rename    ." << n.old_name << (n.call_only ? "()" : "") << " -> ." << n.new_name << "\n";
  for (const KeywordRule& k : keywords) os << k.id << "  keyword   " << k.function << "(" << k.old_name << "=) -> " << k.new_name << "=\n";
  for (const StringRule& s : strings) os << s.id << "  string    '" << s.old_text << (s.device ? "[:N]" : "") << "' -> '" << s.new_text << "'\n";
  for (const ArgsRule& a : args) os << a.id << "  argument  " << a.function << " arg " << a.index << " -> " << a.new_arg << "\n";
  for (const AdviceRule& a : advice)
    os << a.id << "  advice    " << (a.api.empty() ? "." + a.method : a.api) << "()" << (a.keyword.empty() ? "" : " without " + a.keyword + (a.value.empty() ? "" : "=" + a.value))
       << "  (" << (a.kind == AdviceRule::kPrecision ? "precision" : "performance") << ": " << a.tip << ")\n";
  for (const ConfigAdvice& c : config_advice) os << c.id << "  advice    " << c.setting << "  (configuration: " << c.tip << ")\n";
  return os.str();
}

}  // namespace transplt
