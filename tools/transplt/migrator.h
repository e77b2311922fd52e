// Internal: the per-file migration state shared by migrate.cc (rename, string and import rules) and
// distributed.cc (-s device pinning and single-card -> multi-card rules).
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "migrate.h"
#include "syntax.h"

namespace transplt {

// What a local name refers to when imports or simple aliases (CD = torch.cuda) bind it.
struct Binding {
  std::string qualified;     // e.g. "torch.cuda" for `from torch import cuda`
  int imports = 0;           // how many import statements bind it
  bool conflicting = false;  // bound to different things, or also bound by def/param/assignment
  std::string rename_to, rename_rule;  // set when its import was renamed and uses must follow
};

// A dotted reference as written: base identifier (or another expression) followed by attribute names.
struct Chain {
  TSNode node{};                 // the outermost attribute/identifier
  TSNode base{};                 // first component when pure, else the non-name object expression
  bool pure = false;             // base is an identifier
  std::vector<TSNode> names;     // identifiers: base (when pure) then each attribute
};

class Migrator {
 public:
  Migrator(std::string_view src, TSNode root, const RuleSet& rules, const MigrateOptions& opts);
  Migration Run();

 private:
  // Binding collection (first pass).
  void CollectBindings();
  void BindImport(TSNode stmt, TSNode parent);
  void BindOther(TSNode target);
  const Binding* Lookup(std::string_view name) const;

  // Rewriting (second pass), in migrate.cc.
  void Walk();
  void RewriteImport(TSNode stmt);
  void RewriteImportFrom(TSNode stmt);
  void RewriteChain(const Chain& c, bool is_callee);
  void RewriteString(TSNode str, TSNode parent);
  std::vector<TSNode> RewriteCall(uint32_t row);  // returns arguments it replaced (not to be visited)
  void NoteCall(const std::string& callee, std::string_view last, bool method, TSNode fn, TSNode args);
  void InsertTorchNpuImport();
  bool IsReference(uint32_t row, uint32_t parent_row) const;

  // Device arguments that may hold a CUDA device index, in device_args.cc.
  std::vector<TSNode> WrapDeviceIndexArgs(TSNode args, const std::string& callee, std::string_view last, bool method);
  bool ProvablyNotAnIndex(TSNode v);

  // -s and distributed rules, in distributed.cc.
  std::vector<TSNode> RewriteCallForDevice(TSNode call, const std::string& callee);
  void InsertDeviceIdBlock();
  void RewriteDataLoaders();
  int PlaceGuardedSetEpoch();
  void RewriteModelForDdp();
  void LoadIntoDdpModule();
  bool device_mode() const { return opts_.specify_device || opts_.distributed; }

  // Helpers.
  Chain Flatten(TSNode n) const;
  Chain FlattenAt(uint32_t row) const;  // the same, read from rows_ (the walk's fast path)
  std::string Qualified(const Chain& c) const;  // "" unless pure with a bound head
  std::string_view Text(TSNode n) const { return transplt::Text(n, src_); }
  void AddEdit(uint32_t start, uint32_t end, std::string text, const std::string& rule, OpType op, std::string message);
  void AddFinding(TSNode at, const ApiRule& r, std::string_view api);
  void ReplaceComponents(const std::vector<TSNode>& old_names, const std::vector<std::string>& new_names,
                         const std::string& rule, const std::string& message);
  void DeleteArgument(TSNode args, TSNode arg, const std::string& rule, std::string message);
  std::vector<TSNode> PositionalArgs(TSNode args) const;
  TSNode KeywordArg(TSNode args, std::string_view name) const;
  std::string LineIndent(uint32_t offset) const;  // whitespace before `offset` on its line ("" if code precedes)
  uint32_t LineEndAfter(uint32_t offset) const;   // offset just past the end of the line holding `offset`
  void ForEachNode(TSNode from, const std::function<bool(TSNode)>& visit) const;  // pre-order; false = skip children
  bool FileImportsTorch() const { return first_torch_import_.id != nullptr; }
  bool Binds(std::string_view name) const { return binds_.count(std::string(name)) || other_.count(std::string(name)); }

  std::string_view src_;
  TSNode root_;
  std::vector<NodeRow> rows_;  // the tree's named nodes in pre-order, walked by both passes
  const RuleSet& rules_;
  MigrateOptions opts_;
  std::string eol_ = "\n";
  std::unordered_map<std::string, Binding> binds_;
  std::unordered_set<std::string> other_;  // names bound by def, class, parameters, loops, assignments
  TSNode first_torch_import_{};
  TSNode last_top_import_{};
  bool has_torch_npu_import_ = false;
  std::unordered_set<std::string> unknown_seen_;  // unknown torch APIs already noted in this file
  std::unordered_map<std::string, bool> non_index_names_;  // name -> every assignment gives a str or a torch.device
  bool non_index_names_ready_ = false;
  Migration out_;
};

}  // namespace transplt
