// -s (pin the device from DEVICE_ID) and `distributed` (single card -> multi card with DDP over hccl).
#include <algorithm>
#include <cctype>

#include "migrator.h"

namespace transplt {
namespace {

constexpr std::string_view kDeviceString = "f'npu:{DEVICE_ID}'";

bool Contains(std::string_view s, std::string_view what) { return s.find(what) != std::string_view::npos; }

bool ContainsNoCase(std::string_view s, std::string_view what) {
  std::string l(s);
  for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Contains(l, what);
}

// The top-level assignment `name = ...`, if the module has one.
bool HasTopLevelAssignment(TSNode module, std::string_view src, std::string_view name) {
  for (uint32_t i = 0, n = ts_node_named_child_count(module); i < n; ++i) {
    TSNode s = ts_node_named_child(module, i);
    if (!Is(s, sym::expression_statement)) continue;
    TSNode a = ts_node_named_child(s, 0);
    if (Is(a, sym::assignment) && Text(Field(a, fld::left), src) == name) return true;
  }
  return false;
}

// `for epoch in ...` or `for i in range(n_epochs)`: a loop over epochs, whose body starts each epoch.
bool IsEpochLoop(TSNode n, std::string_view src) {
  TSNode left = Field(n, fld::left), iter = Field(n, fld::right);
  return Is(n, sym::for_statement) && Is(left, sym::identifier) && !ts_node_is_null(Field(n, fld::body)) && !ts_node_is_null(iter) &&
         (Contains(Text(left, src), "epoch") || Contains(Text(iter, src), "epoch"));
}

TSNode Enclosing(TSNode n, TSSymbol type) {
  for (TSNode p = Parent(n); !ts_node_is_null(p); p = Parent(p))
    if (Is(p, type)) return p;
  return TSNode{};
}

}  // namespace

std::vector<TSNode> Migrator::RewriteCallForDevice(TSNode call, const std::string& callee) {
  std::vector<TSNode> replaced;
  TSNode fn = Field(call, fld::function), args = Field(call, fld::arguments);
  Chain c = Flatten(fn);
  std::vector<TSNode> pos = PositionalArgs(args);
  if (pos.empty()) return replaced;
  if (Is(fn, sym::attribute) && Text(c.names.back()) == "cuda" && callee.empty()) {
    DeleteArgument(args, pos[0], rules_.cuda_arg_rule_id, "delete the arg at position 0 of function cuda (DEVICE_ID is set)");
    replaced.push_back(pos[0]);
  }
  std::string mapped = rules_.Map(callee);
  if ((mapped == "torch.npu.set_device" || mapped == "torch_npu.npu.set_device") && !Contains(Text(pos[0]), "rank") &&
      !Contains(Text(pos[0]), "DEVICE_ID")) {
    AddEdit(Start(pos[0]), End(pos[0]), std::string(kDeviceString), rules_.set_device_rule_id, OpType::kModify,
            "change the arg at position 0 of function set_device to " + std::string(kDeviceString));
    replaced.push_back(pos[0]);
  }
  if (callee == "torch.device" && pos.size() >= 2 && Is(pos[0], sym::string) && Contains(Text(pos[0]), "cuda")) {
    DeleteArgument(args, pos[1], rules_.cuda_arg_rule_id, "delete the arg at position 1 of function torch.device (DEVICE_ID is set)");
    replaced.push_back(pos[1]);
  }
  return replaced;
}

void Migrator::InsertDeviceIdBlock() {
  if (!FileImportsTorch() || ts_node_is_null(last_top_import_)) return;
  uint32_t at = LineEndAfter(End(last_top_import_));
  std::string lead = (at == src_.size() && (src_.empty() || src_.back() != '\n')) ? eol_ : "";
  const std::string& e = eol_;
  if (!HasTopLevelAssignment(root_, src_, "DEVICE_ID")) {
    std::string npu_import = (Lookup("torch_npu") || !has_torch_npu_import_) ? "" : "import torch_npu" + e;
    AddEdit(at, at,
            lead + (Lookup("os") && Lookup("os")->qualified == "os" ? "" : "import os" + e) + npu_import + "DEVICE_ID = 0" + e +
                "if os.getenv('DEVICE_ID') and str.isdigit(os.getenv('DEVICE_ID')):" + e +
                "    DEVICE_ID = int(os.getenv('DEVICE_ID'))" + e + "torch_npu.npu.set_device(f'npu:{DEVICE_ID}')" + e,
            rules_.device_id_rule_id, OpType::kInsert, "insert DEVICE_ID from the environment and set the device");
    lead.clear();
  }
  if (opts_.distributed && opts_.main_file && !HasTopLevelAssignment(root_, src_, "RANK_SIZE")) {
    AddEdit(at, at,
            lead + "import torch.distributed" + e + "RANK_SIZE = int(os.getenv('RANK_SIZE', '1'))" + e +
                "RANK_ID = int(os.getenv('RANK_ID', '0'))" + e +
                "if RANK_SIZE > 1 and not torch.distributed.is_initialized():" + e +
                "    torch.distributed.init_process_group('hccl', rank=RANK_ID, world_size=RANK_SIZE)" + e,
            rules_.init_group_rule_id, OpType::kInsert, "init statement of the hccl process group (RANK_ID, RANK_SIZE)");
  }
}

// Where the loader is made in one function and iterated in another (returned by a helper), the epoch loops of the
// file that iterate something named like a loader call its sampler's set_epoch, guarded by the sampler's type.
// Returns how many loops got one (each loop once, however many loaders lead here).
int Migrator::PlaceGuardedSetEpoch() {
  int placed = 0;
  ForEachNode(root_, [&](TSNode n) {
    if (!IsEpochLoop(n, src_)) return true;
    TSNode left = Field(n, fld::left), body = Field(n, fld::body);
    std::string loader;
    ForEachNode(body, [&](TSNode x) {
      if (!loader.empty()) return false;
      if (!Is(x, sym::for_statement) || ts_node_is_null(Field(x, fld::right))) return true;
      ForEachNode(Field(x, fld::right), [&](TSNode y) {
        if (loader.empty() && (Is(y, sym::identifier) || Is(y, sym::attribute)) && ContainsNoCase(Text(y), "loader")) loader = Text(y);
        return loader.empty();
      });
      return loader.empty();
    });
    TSNode first = ts_node_named_child(body, 0);
    while (Is(first, sym::comment)) first = ts_node_next_named_sibling(first);
    if (loader.empty() || ts_node_is_null(first) || Contains(Text(body), loader + ".sampler.set_epoch(")) return true;
    std::string indent = LineIndent(Start(first));
    if (indent == "\x01") return true;
    std::string unit = indent.find('\t') != std::string::npos ? "\t" : "    ";
    std::string call = loader + ".sampler.set_epoch(" + std::string(Text(left)) + ")";
    uint32_t at = Start(first) - static_cast<uint32_t>(indent.size());
    AddEdit(at, at, indent + "if isinstance(" + loader + ".sampler, torch.utils.data.distributed.DistributedSampler):" + eol_ + indent + unit + call + eol_,
            rules_.set_epoch_rule_id, OpType::kInsert, "add statement of " + call + " (for a loader made elsewhere)");
    ++placed;
    return true;
  });
  return placed;
}

void Migrator::RewriteDataLoaders() {
  struct Loader {
    TSNode stmt, target, args;
    std::string name, dataset;
  };
  std::vector<Loader> loaders;
  ForEachNode(root_, [&](TSNode n) {
    if (!Is(n, sym::assignment)) return true;
    TSNode rhs = Field(n, fld::right);
    if (!Is(rhs, sym::call) || !Is(Field(rhs, fld::arguments), sym::argument_list)) return true;
    std::string q = Qualified(Flatten(Field(rhs, fld::function)));
    if (q != "torch.utils.data.DataLoader" && q != "torch.utils.data.dataloader.DataLoader") return true;
    TSNode args = Field(rhs, fld::arguments);
    std::vector<TSNode> pos = PositionalArgs(args);
    TSNode ds = pos.empty() ? KeywordArg(args, "dataset") : pos[0];
    if (Is(ds, sym::keyword_argument)) ds = Field(ds, fld::value);
    loaders.push_back({n, Field(n, fld::left), args, std::string(Text(Field(n, fld::left))),
                       ts_node_is_null(ds) ? "" : std::string(Text(ds))});
    return true;
  });
  auto training = [](const Loader& l) { return ContainsNoCase(l.name, "train") || ContainsNoCase(l.dataset, "train"); };
  bool any_training = std::any_of(loaders.begin(), loaders.end(), training);
  for (const Loader& l : loaders) {
    uint32_t line = 1 + static_cast<uint32_t>(std::count(src_.begin(), src_.begin() + Start(l.stmt), '\n'));
    if (any_training ? !training(l) : loaders.size() > 1) {
      out_.notes.push_back("line " + std::to_string(line) + ": DataLoader '" + l.name +
                           "' does not look like the training loader; it keeps its sampler (add a DistributedSampler by hand if every rank should see a shard)");
      continue;
    }
    TSNode sampler = KeywordArg(l.args, "sampler");
    if (!ts_node_is_null(sampler) && Contains(Text(sampler), "DistributedSampler")) continue;  // already distributed
    if (l.dataset.empty()) {
      out_.notes.push_back("line " + std::to_string(line) + ": DataLoader '" + l.name + "' has no dataset argument; add a DistributedSampler by hand");
      continue;
    }
    const std::string& id = rules_.dataloader_rule_id;
    if (!ts_node_is_null(sampler)) DeleteArgument(l.args, sampler, id, "delete the arg sampler of DataLoader " + l.name);
    std::string append;
    for (auto [kw, want] : {std::pair{"shuffle", "False"}, std::pair{"drop_last", "True"}}) {
      TSNode a = KeywordArg(l.args, kw);
      if (ts_node_is_null(a)) append += std::string(", ") + kw + "=" + want;
      else if (Text(Field(a, fld::value)) != want)
        AddEdit(Start(Field(a, fld::value)), End(Field(a, fld::value)), want, id, OpType::kModify,
                std::string("set ") + kw + "=" + want + " for DataLoader " + l.name);
    }
    append += ", sampler=torch.utils.data.distributed.DistributedSampler(" + l.dataset + ")";
    TSNode last{};
    for (uint32_t i = 0, n = ts_node_named_child_count(l.args); i < n; ++i)
      if (!Is(ts_node_named_child(l.args, i), sym::comment)) last = ts_node_named_child(l.args, i);
    AddEdit(End(last), End(last), append, id, OpType::kModify, "add a DistributedSampler to DataLoader " + l.name);
    if (!Lookup("torch") || Lookup("torch")->qualified != "torch") {
      uint32_t at = Start(first_torch_import_);
      std::string indent = LineIndent(at);
      if (indent != "\x01")
        AddEdit(at - indent.size(), at - indent.size(), indent + "import torch.utils.data.distributed" + eol_, id,
                OpType::kInsert, "import torch.utils.data.distributed for DistributedSampler");
    }
    // set_epoch at the top of every epoch loop that can see the loader.
    TSNode scope = Is(l.target, sym::attribute) ? Enclosing(l.stmt, sym::class_definition) : Enclosing(l.stmt, sym::function_definition);
    if (ts_node_is_null(scope)) scope = root_;
    int placed = 0;
    ForEachNode(scope, [&](TSNode n) {
      if (!IsEpochLoop(n, src_)) return true;
      TSNode left = Field(n, fld::left), body = Field(n, fld::body);
      TSNode first = ts_node_named_child(body, 0);
      while (Is(first, sym::comment)) first = ts_node_next_named_sibling(first);
      if (ts_node_is_null(first)) return true;
      std::string call = l.name + ".sampler.set_epoch(" + std::string(Text(left)) + ")";
      if (Contains(Text(first), call)) {
        ++placed;
        return true;
      }
      std::string indent = LineIndent(Start(first));
      if (indent == "\x01") return true;
      uint32_t at = Start(first) - indent.size();
      AddEdit(at, at, indent + call + eol_, rules_.set_epoch_rule_id, OpType::kInsert, "add statement of " + call);
      ++placed;
      return true;
    });
    if (!placed) placed = PlaceGuardedSetEpoch();
    if (!placed)
      out_.notes.push_back("line " + std::to_string(line) + ": no epoch loop found next to DataLoader '" + l.name +
                           "'; call " + l.name + ".sampler.set_epoch(epoch) at the start of every epoch");
  }
}

// A checkpoint saved from the unwrapped model has no "module." prefix, so `model.load_state_dict(sd)` must load
// into the module DDP wraps. The wrap transplt inserts is conditional (one process runs unwrapped), so the call
// picks the module only when there is one, where the official tool writes model.module unconditionally.
void Migrator::LoadIntoDdpModule() {
  const std::string& t = opts_.target_model;
  ForEachNode(root_, [&](TSNode n) {
    if (!Is(n, sym::call)) return true;
    TSNode fn = Field(n, fld::function);
    if (!Is(fn, sym::attribute)) return true;
    TSNode obj = Field(fn, fld::object), name = Field(fn, fld::attribute);
    if (ts_node_is_null(obj) || ts_node_is_null(name)) return true;
    std::string_view method = Text(name);
    if (Text(obj) != t || (method != "load_state_dict" && method != "load_from")) return true;
    AddEdit(Start(obj), End(obj), "(" + t + ".module if isinstance(" + t + ", torch.nn.parallel.DistributedDataParallel) else " + t + ")",
            rules_.ddp_load_rule_id, OpType::kModify, "load into " + t + ".module when " + t + " is wrapped in DistributedDataParallel");
    return true;
  });
}

void Migrator::RewriteModelForDdp() {
  const std::string& t = opts_.target_model;
  const std::string& e = eol_;
  int created = 0;
  ForEachNode(root_, [&](TSNode n) {
    if (!Is(n, sym::assignment) || Text(Field(n, fld::left)) != t) return true;
    TSNode stmt = Parent(n), rhs = Field(n, fld::right);
    if (!Is(stmt, sym::expression_statement) || !Is(rhs, sym::call)) return true;
    bool wraps_dp = false, uses_model = false;
    std::vector<TSNode> dp_calls;  // DataParallel(x) creating the model: x is what DDP wraps
    ForEachNode(rhs, [&](TSNode x) {
      if (!Is(x, sym::call)) return true;
      std::string q = Qualified(Flatten(Field(x, fld::function)));
      auto args = PositionalArgs(Field(x, fld::arguments));
      bool model_arg = std::any_of(args.begin(), args.end(), [&](TSNode a) { return Text(a) == t; });
      bool dp = q == "torch.nn.DataParallel" || q == "torch.nn.parallel.DataParallel";
      if (dp) wraps_dp |= model_arg;
      if (dp && !model_arg && !args.empty()) dp_calls.push_back(x);
      uses_model |= model_arg || Contains(Text(Field(x, fld::function)), t + ".");
      return !dp;
    });
    std::string indent = LineIndent(Start(stmt));
    if (indent == "\x01") return true;
    uint32_t line_start = Start(stmt) - indent.size(), line_end = LineEndAfter(End(stmt));
    if (wraps_dp) {
      // The statement goes; a block that would be left empty keeps a `pass`.
      bool alone = Is(Parent(stmt), sym::block) && ts_node_named_child_count(Parent(stmt)) == 1;
      std::erase_if(out_.edits, [&](const Edit& x) { return x.start >= Start(stmt) && x.end <= End(stmt); });
      AddEdit(Start(stmt), End(stmt), alone ? "pass" : "", rules_.remove_dp_rule_id, OpType::kDelete,
              "delete statement " + std::string(Text(stmt)) + " (DistributedDataParallel replaces DataParallel)");
      if (!alone) out_.edits.back().start = line_start, out_.edits.back().end = line_end;
      std::erase_if(out_.findings, [&](const Finding& f) { return f.offset >= Start(stmt) && f.offset < End(stmt); });
      return false;
    }
    if (uses_model || Contains(Text(rhs), "DistributedDataParallel")) return false;
    for (TSNode dp : dp_calls) {  // model = DataParallel(Net()).cuda() -> model = Net().cuda()
      TSNode arg = PositionalArgs(Field(dp, fld::arguments))[0];
      auto outside_arg = [&](uint32_t from, uint32_t to) { return from >= Start(dp) && to <= End(dp) && !(from >= Start(arg) && to <= End(arg)); };
      std::erase_if(out_.edits, [&](const Edit& x) { return outside_arg(x.start, x.end); });
      std::erase_if(out_.findings, [&](const Finding& f) { return outside_arg(f.offset, f.offset); });
      const std::string why = "delete DataParallel around " + std::string(Text(arg)) + " (DistributedDataParallel replaces DataParallel)";
      AddEdit(Start(dp), Start(arg), "", rules_.remove_dp_rule_id, OpType::kDelete, why);
      AddEdit(End(arg), End(dp), "", rules_.remove_dp_rule_id, OpType::kDelete, why);
    }
    TSNode next = ts_node_next_named_sibling(stmt);
    if (!ts_node_is_null(next) && Text(next) == t + " = " + t + ".npu()") {
      ++created;
      return false;
    }
    std::string unit = indent.find('\t') != std::string::npos ? "\t" : "    ";
    std::string lead = (line_end == src_.size() && src_.back() != '\n') ? e : "";
    AddEdit(line_end, line_end,
            lead + indent + t + " = " + t + ".npu()" + e + indent +
                "if torch.distributed.is_initialized() and not isinstance(" + t +
                ", torch.nn.parallel.DistributedDataParallel):" + e + indent + unit + t +
                " = torch.nn.parallel.DistributedDataParallel(" + t + ", device_ids=[DEVICE_ID], broadcast_buffers=False)" + e,
            rules_.ddp_rule_id, OpType::kInsert, "init statement of DistributedDataParallel for " + t);
    ++created;
    return false;
  });
  if (created) LoadIntoDdpModule();
  if (!created)
    out_.notes.push_back("no assignment creating '" + t + "' in the main file; move the model to the NPU and wrap it in "
                         "DistributedDataParallel by hand (or pass the right name with -t)");
}

}  // namespace transplt
