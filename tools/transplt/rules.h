// The migration rules, kept as data: built-in rules come from builtin_rules.json (compiled in),
// custom rules from the user's -r/--rule JSON (ArgsModifyRule, FuncNameModifyRule, ModuleNameModifyRule).
// Every rule has a stable id that appears in change_list.csv and the JSON report.
#pragma once
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"

namespace transplt {

// A rule on a fully qualified API (a module, function, class or attribute), matched by longest dotted prefix.
struct ApiRule {
  std::string id, old_name, new_name;  // new_name empty: the API is unsupported
  std::string kind;                    // "module", "function" or "attribute" (for messages)
  std::string reason, suggestion;      // unsupported APIs: why, and what to do instead
  std::string similar;                 // unsupported APIs: the similar API -sim substitutes
  bool replaced_by_similar = false;    // set when -sim turned this unsupported API into a rename
  bool unsupported() const { return new_name.empty(); }
};

// A rule on the last name of an attribute or call whatever its object is (x.cuda(), t.is_cuda, custom func()).
struct NameRule {
  std::string id, old_name, new_name;
  bool call_only = true;
};

struct KeywordRule {  // function(old=...) -> function(new=...)
  std::string id, function, old_name, new_name;
};

struct StringRule {  // device: 'cuda', 'cuda:0', 'cuda:{}', f'cuda:{i}'; exact: the whole literal
  std::string id, old_text, new_text;
  bool device = false;
};

struct ArgsRule {  // custom ArgsModifyRule: the positional argument arg_idx of func_name becomes arg_new
  std::string id, function;
  int index = 0;
  std::string new_arg;
};

// Advice on a call that still works on the NPU but could be more accurate or faster: matched by the callee's
// qualified name (`api`) or, for methods on any object, its last name (`method`). With `keyword`, it applies
// only when the call lacks that keyword (or, with `value`, passes another value).
struct AdviceRule {
  enum Kind { kPrecision, kPerformance };
  std::string id, api, method, keyword, value, tip;
  Kind kind = kPerformance;
};

struct ConfigAdvice {  // advice on the run's configuration, not on a line (File/Start Line/End Line "NA")
  std::string id, setting, tip;
};

struct RuleSet {
  std::unordered_map<std::string, ApiRule> apis;  // by old qualified name
  std::vector<NameRule> names;
  std::vector<KeywordRule> keywords;
  std::vector<StringRule> strings;
  std::vector<ArgsRule> args;
  std::vector<AdviceRule> advice;
  std::vector<ConfigAdvice> config_advice;
  std::string import_rule_id, device_id_rule_id, dataloader_rule_id, set_epoch_rule_id, ddp_rule_id,
      init_group_rule_id, remove_dp_rule_id, device_string_rule_id, cuda_arg_rule_id, set_device_rule_id, device_index_rule_id, ddp_load_rule_id;
  std::vector<std::pair<std::string, std::string>> code_rules;  // id, what (rules implemented in code)
  std::vector<std::string> custom_ids;  // the -r file's rules, to report those that matched nothing

  // The rule whose old name is the longest dotted prefix of `qualified`, or null.
  const ApiRule* Match(std::string_view qualified) const;
  // What `qualified` denotes after migration (unchanged when no rename applies).
  std::string Map(std::string_view qualified) const;

  // The built-in rules; with `similar`, unsupported APIs that have a similar API become renames.
  static RuleSet Builtin(bool similar);
  // Adds the rules of a custom rule file; every problem in it is reported in one ET0003 error.
  npu::Status AddCustom(const std::string& path);
  // One line per rule ("id  kind  old -> new"), for --list-rules.
  std::string Describe() const;
};

// "a.b.c" with every part a Python identifier.
bool IsDottedName(std::string_view s);
bool IsIdentifier(std::string_view s);

}  // namespace transplt
