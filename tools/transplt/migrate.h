// Migrates one Python file: finds every change the rules call for (as byte-range edits on the concrete
// syntax tree) and every unsupported API (as findings). Nothing here touches the file system.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rules.h"
#include "syntax.h"

namespace transplt {

enum class OpType { kInsert, kModify, kDelete };
std::string_view OpTypeName(OpType op);  // INSERT, MODIFY, DELETE (change_list.csv "Operation Type")

struct Edit {
  uint32_t start = 0, end = 0;  // byte range of the UTF-8 text replaced (start == end: insertion)
  std::string text;             // replacement
  std::string rule;             // rule id
  OpType op = OpType::kModify;
  std::string message;
};

struct Finding {
  uint32_t offset = 0;  // where the API is used
  std::string rule, api, reason, suggestion;
};

// Reported, not changed: a torch API no rule names (CANN's unknown_api.csv), or advice on a call.
struct Notice {
  enum Kind { kUnknownApi, kPrecision, kPerformance };
  Kind kind = kUnknownApi;
  uint32_t offset = 0;
  std::string rule, api, tip;  // rule and tip empty for an unknown API
};

struct MigrateOptions {
  bool specify_device = false;  // -s, or distributed mode
  bool distributed = false;
  bool main_file = false;       // this is the distributed -m file
  std::string target_model = "model";
  // Names a `from M import *` of this file brings in, by M as written ("models", ".models"): M's own module-level
  // imports, as the project pass found them (name -> qualified name).
  using StarImports = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;
  StarImports star_imports;
};

struct Migration {
  std::vector<Edit> edits;          // sorted by position, never overlapping
  std::vector<Finding> findings;    // sorted by position
  std::vector<Notice> notices;      // sorted by position; an unknown API once per file
  bool imports_torch = false;
  std::vector<std::string> notes;   // things a human should look at (e.g. set_epoch not placed)
  // For the project pass: the module-level imports (name -> qualified name) other files can star-import, and
  // the modules this file star-imports, as written.
  std::vector<std::pair<std::string, std::string>> top_imports;
  std::vector<std::string> star_modules;
};

// `utf8` must be what `root` was parsed from, without syntax errors.
Migration Migrate(std::string_view utf8, TSNode root, const RuleSet& rules, const MigrateOptions& opts);

// Whether a module's first name is torch's own (torch, torchvision, ...; not torch_npu): a file importing one
// gets `import torch_npu`.
bool IsTorchRoot(std::string_view root);

// Splices sorted, non-overlapping edits into `text`.
std::string ApplyEdits(std::string_view text, const std::vector<Edit>& edits);

}  // namespace transplt
