// A Python source through transplt: parse, migrate with the built-in rules (and -s), apply the edits.
#include <string_view>

#include "migrate.h"
#include "rules.h"
#include "syntax.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const transplt::RuleSet rules = transplt::RuleSet::Builtin(true);
  std::string_view src(reinterpret_cast<const char*>(data), size);
  transplt::Tree tree = transplt::ParsePython(src);
  if (!tree) return 0;
  transplt::MigrateOptions opts;
  opts.specify_device = size % 2;  // both the plain and the device-pinning rewrite paths
  opts.main_file = size % 3 == 0;
  transplt::Migration m = transplt::Migrate(src, ts_tree_root_node(tree.get()), rules, opts);
  (void)transplt::ApplyEdits(src, m.edits);
  return 0;
}
