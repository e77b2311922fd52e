// Pairing NPU tensors with golden tensors.
#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>

#include "compare.h"
#include "dump/dump_names.h"
#include "fusion_rule.h"
#include "h5_reader.h"

namespace npu::cmp {
namespace fs = std::filesystem;
namespace {

bool IsDir(const std::string& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

TensorRef DumpRef(const std::string& path, bool input, int index, uint64_t bytes) {
  return {TensorRef::kDump, path, input, index, "", bytes};
}

TensorRef NpyRef(const std::map<std::string, std::string>& goldens, const std::string& key) {
  auto it = goldens.find(key);
  if (it == goldens.end()) return {};
  return {TensorRef::kNpy, it->second, false, 0, "", FileSize(it->second)};
}

// "-r start,end,step" or "-s i,j,k" -> selected 1-based op sequence numbers.
Result<std::set<int64_t>> Selection(const CompareOptions& o, size_t op_count) {
  std::set<int64_t> sel;
  auto nums = [](const std::string& s) {
    std::vector<int64_t> v;
    size_t b = 0;
    while (b <= s.size()) {
      size_t e = s.find(',', b);
      std::string t = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
      char* end = nullptr;
      long long x = std::strtoll(t.c_str(), &end, 10);
      if (t.empty() || *end) return std::vector<int64_t>{};
      v.push_back(x);
      if (e == std::string::npos) break;
      b = e + 1;
    }
    return v;
  };
  int64_t n = static_cast<int64_t>(op_count);
  if (!o.range.empty()) {
    auto v = nums(o.range);
    int64_t start = v.size() == 3 ? v[0] : 0, end = v.size() == 3 ? (v[1] == -1 ? n : v[1]) : 0, step = v.size() == 3 ? v[2] : 0;
    if (v.size() != 3 || start < 1 || start > n || end < start || end > n || step < 1 || (n > 1 && step >= n && step != 1))
      return Status::Error("E10001", "-r", o.range, "must be start,end,step with 1 <= start <= end <= " + std::to_string(n) + " (end -1 = last) and step >= 1");
    for (int64_t i = start; i <= end; i += step) sel.insert(i);
  } else {
    auto v = nums(o.select);
    if (v.empty()) return Status::Error("E10001", "-s", o.select, "must be a comma-separated list of op sequence numbers");
    for (int64_t i : v) {
      if (i < 1 || i > n) return Status::Error("E10001", "-s", o.select, std::to_string(i) + " is outside 1.." + std::to_string(n));
      sel.insert(i);
    }
  }
  return sel;
}

// Golden key ("{op}.{output}") of output `idx` of fusion op `op`, preferring what the NPU dump says (a name
// in the quantized model when there is a quantization record).
std::string GoldenKeyOf(const FusionOp& op, size_t idx, const DumpTensor* dumped, const FusionRule* record) {
  if (dumped && !dumped->original_name.empty()) {
    std::string name = record ? NameBeforeQuant(*record, dumped->original_name) : dumped->original_name;
    return SanitizeDumpName(name) + "." + std::to_string(std::max(dumped->original_output_index, 0));
  }
  if (op.original_names.empty()) return "";
  return SanitizeDumpName(op.original_names.back()) + "." + std::to_string(idx);
}

// The framework layout (original_op.format) the producing op's dump gives its output `index`: input descs
// do not carry one, and a TensorFlow tensor is NHWC where the device computes it channels-first.
int ProducerFormat(const std::map<std::string, DumpEntry>& dumps, const std::string& producer, size_t index) {
  auto d = dumps.find(SanitizeDumpName(producer));
  if (d == dumps.end()) return -1;
  auto f = ReadDumpFile(d->second.path);
  if (!f.ok() || index >= f.value().outputs.size()) return -1;
  return f.value().outputs[index].original_format;
}

// `rule`: -f (with `record`, -q, mapping its names to the model before quantization) or the record alone.
Result<Plan> WithFusionRule(const CompareOptions& o, const FusionRule& rule, const FusionRule* record,
                            const std::map<std::string, DumpEntry>& dumps, const std::map<std::string, std::string>& goldens) {
  Plan plan;
  plan.with_sequence = !o.range.empty() || !o.select.empty();
  std::set<int64_t> selected;
  if (plan.with_sequence) {
    NPU_ASSIGN_OR_RETURN(selected, Selection(o, rule.ops.size()));
  }
  size_t weights = 0, integer = 0;
  for (size_t k = 0; k < rule.ops.size(); ++k) {
    const FusionOp& op = rule.ops[k];
    if (plan.with_sequence && !selected.count(static_cast<int64_t>(k) + 1)) continue;
    if (op.integer) {
      ++integer;
      continue;
    }
    auto d = dumps.find(SanitizeDumpName(op.name));
    std::optional<DumpFile> file;
    if (d != dumps.end()) {
      auto f = ReadDumpFile(d->second.path);
      if (f.ok()) file = std::move(f).value();
      else plan.notes.push_back(f.status().message());
    }
    auto base = [&](const std::string& io, size_t i) {
      CompareItem it;
      it.index = std::to_string(op.id);
      it.sequence = std::to_string(k + 1);
      it.op_type = op.type;
      it.npu_name = d != dumps.end() ? op.name : "*";
      it.tensor_index = op.name + ":" + io + ":" + std::to_string(i);
      return it;
    };
    if (file) {  // inputs: golden of whatever produced them; weights have none and are not compared
      size_t i = 0;
      for (const std::string& src : op.inputs) {
        if (src.empty()) continue;
        size_t colon = src.rfind(':');
        std::string key;
        auto p = colon == std::string::npos ? rule.by_name.end() : rule.by_name.find(src.substr(0, colon));
        if (p != rule.by_name.end()) key = GoldenKeyOf(rule.ops[p->second], std::strtoul(src.c_str() + colon + 1, nullptr, 10), nullptr, record);
        else key = SanitizeDumpName(src) + ".0";
        TensorRef g = key.empty() ? TensorRef{} : NpyRef(goldens, key);
        if (i < file->inputs.size() && g.present()) {
          CompareItem it = base("input", i);
          it.golden_name = p != rule.by_name.end() ? Join(rule.ops[p->second].original_names) : src;
          it.npu = DumpRef(d->second.path, true, static_cast<int>(i), file->inputs[i].data.size());
          if (p != rule.by_name.end()) it.npu.framework_format = ProducerFormat(dumps, rule.ops[p->second].name, std::strtoul(src.c_str() + colon + 1, nullptr, 10));
          it.golden = g;
          it.is_input = true;
          plan.items.push_back(std::move(it));
        } else if (i < file->inputs.size()) {
          ++weights;
        }
        ++i;
      }
    }
    size_t outs = std::max(op.num_outputs, file ? file->outputs.size() : 0);
    for (size_t j = 0; j < outs; ++j) {
      const DumpTensor* t = file && j < file->outputs.size() ? &file->outputs[j] : nullptr;
      CompareItem it = base("output", j);
      std::string key = GoldenKeyOf(op, j, t, record);
      it.golden = key.empty() ? TensorRef{} : NpyRef(goldens, key);
      it.golden_name = it.golden.present() ? Join(op.original_names) : "*";
      if (t) it.npu = DumpRef(d->second.path, false, static_cast<int>(j), t->data.size());
      else if (d != dumps.end() && !file) it.npu = DumpRef(d->second.path, false, static_cast<int>(j), 0);  // unreadable: the row says why
      if (!it.npu.present() && !it.golden.present()) continue;
      plan.items.push_back(std::move(it));
    }
  }
  if (weights) plan.notes.push_back(std::to_string(weights) + " op input(s) fed by weights or constants have no golden data and were not compared");
  if (integer)
    plan.notes.push_back(std::to_string(integer) + " quantize op(s) and op(s) between a quantize and its dequantize hold integer data that no float golden matches and were not compared");
  return plan;
}

// -f, -q or both: the offline model's ops, named after the model before quantization when there is a record.
// A fusion rule is of the model that made the dumps when it names their ops. None named: it is another model's
// (refused, since every match through it would be wrong); under half: a warning in the summary.
Status CheckRuleFitsDumps(const FusionRule& rule, const std::string& path, const std::map<std::string, DumpEntry>& dumps,
                          std::vector<std::string>& notes) {
  std::set<std::string> names;
  for (const FusionOp& op : rule.ops) names.insert(SanitizeDumpName(op.name));
  size_t named = 0;
  for (const auto& [name, e] : dumps) named += names.count(name);
  if (named == 0)
    return Status::Error("E10001", "-f", path,
                         "it names none of the " + std::to_string(dumps.size()) + " dumped ops (such as '" + dumps.begin()->first +
                             "'): it is the fusion rule of another model",
                         "Give the JSON atc --mode=1 wrote for the .om that made these dumps.");
  if (2 * named < dumps.size())
    notes.push_back("the fusion rule -f names only " + std::to_string(named) + " of the " + std::to_string(dumps.size()) +
                    " dumped ops: is it the rule of the model that was dumped?");
  return Status::Ok();
}

Result<Plan> WithRules(const CompareOptions& o, const std::map<std::string, DumpEntry>& dumps,
                       const std::map<std::string, std::string>& goldens) {
  std::optional<FusionRule> record;
  if (!o.quant_fusion.empty()) {
    NPU_ASSIGN_OR_RETURN(record, ReadFusionRule(o.quant_fusion, "-q"));
  }
  if (o.fusion.empty()) return WithFusionRule(o, *record, &*record, dumps, goldens);  // dumps of the quantized model itself
  NPU_ASSIGN_OR_RETURN(FusionRule rule, ReadFusionRule(o.fusion, "-f"));
  std::vector<std::string> fit_notes;
  NPU_RETURN_IF_ERROR(CheckRuleFitsDumps(rule, o.fusion, dumps, fit_notes));
  if (!record) {
    NPU_ASSIGN_OR_RETURN(Plan plan, WithFusionRule(o, rule, nullptr, dumps, goldens));
    plan.notes.insert(plan.notes.end(), fit_notes.begin(), fit_notes.end());
    return plan;
  }
  size_t unknown = MapThroughQuantRecord(rule, *record);
  NPU_ASSIGN_OR_RETURN(Plan plan, WithFusionRule(o, rule, &*record, dumps, goldens));
  if (unknown) plan.notes.push_back(std::to_string(unknown) + " op name(s) of -f are not in the quantization record -q and kept their own names");
  return plan;
}

// Dumps in execution order (task id, then time).
std::vector<const DumpEntry*> InOrder(const std::map<std::string, DumpEntry>& dumps) {
  std::vector<const DumpEntry*> v;
  for (const auto& [k, e] : dumps) v.push_back(&e);
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return std::tie(a->task_id, a->timestamp) < std::tie(b->task_id, b->timestamp); });
  return v;
}

// No fusion rule: an NPU output is matched with the golden of the framework op its dump names.
Plan ByName(const std::map<std::string, DumpEntry>& dumps, const std::map<std::string, std::string>& goldens) {
  Plan plan;
  for (const DumpEntry* e : InOrder(dumps)) {
    auto f = ReadDumpFile(e->path);
    if (!f.ok()) {  // a row whose CompareFailReason says what is wrong with the file
      CompareItem it;
      it.index = std::to_string(e->task_id);
      it.op_type = e->op_type;
      it.npu_name = e->op_name;
      it.golden_name = "*";
      it.tensor_index = e->op_name + ":output:0";
      it.npu = DumpRef(e->path, false, 0, 0);
      plan.items.push_back(std::move(it));
      continue;
    }
    for (const DumpTensor& t : f.value().outputs) {
      std::string orig = t.original_name.empty() ? e->op_name : SanitizeDumpName(t.original_name);
      int idx = t.original_name.empty() ? t.index : std::max(t.original_output_index, 0);
      CompareItem it;
      it.index = std::to_string(e->task_id);
      it.op_type = e->op_type;
      it.npu_name = f.value().op_name.empty() ? e->op_name : f.value().op_name;
      it.tensor_index = it.npu_name + ":output:" + std::to_string(t.index);
      it.npu = DumpRef(e->path, false, t.index, t.data.size());
      it.golden = NpyRef(goldens, orig + "." + std::to_string(idx));
      it.golden_name = it.golden.present() ? (t.original_name.empty() ? it.npu_name : t.original_name) : "*";
      plan.items.push_back(std::move(it));
    }
  }
  return plan;
}

// NPU dumps against NPU dumps: same op name, every input and output.
Plan DumpsAgainstDumps(const std::map<std::string, DumpEntry>& a, const std::map<std::string, DumpEntry>& b) {
  Plan plan;
  plan.golden_address = true;
  for (const DumpEntry* e : InOrder(a)) {
    auto fa = ReadDumpFile(e->path);
    auto gb = b.find(e->op_name);
    std::optional<DumpFile> fb;
    if (gb != b.end())
      if (auto f = ReadDumpFile(gb->second.path); f.ok()) fb = std::move(f).value();
    if (!fa.ok()) {
      plan.notes.push_back(fa.status().message());
      continue;
    }
    for (bool input : {true, false}) {
      const auto& list = input ? fa.value().inputs : fa.value().outputs;
      for (const DumpTensor& t : list) {
        CompareItem it;
        it.index = std::to_string(e->task_id);
        it.op_type = e->op_type;
        it.npu_name = fa.value().op_name;
        it.tensor_index = it.npu_name + (input ? ":input:" : ":output:") + std::to_string(t.index);
        it.npu = DumpRef(e->path, input, t.index, t.data.size());
        const auto* other = fb ? &(input ? fb->inputs : fb->outputs) : nullptr;
        if (other && t.index < static_cast<int>(other->size()))
          it.golden = DumpRef(gb->second.path, input, t.index, (*other)[t.index].data.size());
        it.golden_name = it.golden.present() ? fb->op_name : "*";
        it.is_input = input;
        plan.items.push_back(std::move(it));
      }
    }
  }
  return plan;
}

// -cf: the fused model's dumps (-m, -f) against the same model converted with fusion off (-g, -cf). A fused
// op's output is the output of the last framework op it absorbed, which the fusion-off model computes in
// the op that holds that framework op (or, for ops atc added, the op of the same name).
Result<Plan> FusionOnAgainstOff(const CompareOptions& o, const std::map<std::string, DumpEntry>& on_dumps,
                                const std::map<std::string, DumpEntry>& off_dumps) {
  NPU_ASSIGN_OR_RETURN(FusionRule on, ReadFusionRule(o.fusion, "-f"));
  NPU_ASSIGN_OR_RETURN(FusionRule off, ReadFusionRule(o.close_fusion, "-cf"));
  std::map<std::string, size_t> holder;  // framework op name -> the fusion-off op computing it
  for (size_t k = 0; k < off.ops.size(); ++k)
    for (const std::string& n : off.ops[k].original_names) holder[n] = k;
  Plan plan;
  plan.golden_address = true;
  plan.with_sequence = !o.range.empty() || !o.select.empty();
  std::set<int64_t> selected;
  if (plan.with_sequence) {
    NPU_ASSIGN_OR_RETURN(selected, Selection(o, on.ops.size()));
  }
  for (size_t k = 0; k < on.ops.size(); ++k) {
    const FusionOp& op = on.ops[k];
    if (plan.with_sequence && !selected.count(static_cast<int64_t>(k) + 1)) continue;
    auto h = op.original_names.empty() ? holder.end() : holder.find(op.original_names.back());
    auto same = off.by_name.find(op.name);
    const FusionOp* twin = h != holder.end() ? &off.ops[h->second] : same != off.by_name.end() ? &off.ops[same->second] : nullptr;
    auto d = on_dumps.find(SanitizeDumpName(op.name));
    auto g = twin ? off_dumps.find(SanitizeDumpName(twin->name)) : off_dumps.end();
    std::optional<DumpFile> fd, fg;
    if (d != on_dumps.end())
      if (auto f = ReadDumpFile(d->second.path); f.ok()) fd = std::move(f).value();
    if (g != off_dumps.end())
      if (auto f = ReadDumpFile(g->second.path); f.ok()) fg = std::move(f).value();
    size_t outs = std::max(op.num_outputs, fd ? fd->outputs.size() : 0);
    for (size_t j = 0; j < outs; ++j) {
      CompareItem it;
      it.index = std::to_string(op.id);
      it.sequence = std::to_string(k + 1);
      it.op_type = op.type;
      it.npu_name = fd ? op.name : "*";
      it.tensor_index = op.name + ":output:" + std::to_string(j);
      if (fd && j < fd->outputs.size()) it.npu = DumpRef(d->second.path, false, static_cast<int>(j), fd->outputs[j].data.size());
      if (fg && j < fg->outputs.size()) it.golden = DumpRef(g->second.path, false, static_cast<int>(j), fg->outputs[j].data.size());
      it.golden_name = it.golden.present() ? twin->name : "*";
      if (it.npu.present() || it.golden.present()) plan.items.push_back(std::move(it));
    }
  }
  return plan;
}

Result<Plan> H5AgainstH5(const CompareOptions& o) {
  NPU_ASSIGN_OR_RETURN(auto npu, ListH5DatasetsIsolated(o.npu));
  NPU_ASSIGN_OR_RETURN(auto golden, ListH5DatasetsIsolated(o.golden));
  std::map<std::string, const H5Dataset*> by_path;
  for (const auto& d : npu) by_path[d.path] = &d;
  bool npu_has_inputs = std::any_of(npu.begin(), npu.end(), [](const H5Dataset& d) { return d.io == "input"; });
  std::vector<const H5Dataset*> order;
  for (const auto& d : golden)
    if (d.io != "input" || npu_has_inputs) order.push_back(&d);
  std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->seq < b->seq; });
  Plan plan;
  plan.layout = Layout::kH5;
  size_t k = 0;
  for (const H5Dataset* g : order) {
    CompareItem it;
    it.index = std::to_string(k++);
    it.op_type = g->op;
    it.npu_name = g->op + ":" + std::to_string(g->seq);
    it.tensor_index = g->path;
    it.golden = {TensorRef::kH5, o.golden, false, 0, g->path, g->bytes};
    it.golden_name = g->path;
    it.is_input = g->io == "input";
    if (auto m = by_path.find(g->path); m != by_path.end()) it.npu = {TensorRef::kH5, o.npu, false, 0, g->path, m->second->bytes};
    plan.items.push_back(std::move(it));
  }
  return plan;
}

// A dump's output is that of the last framework op fused into it (a Conv with its Relu gives the Relu's
// output): against another op's golden it would fail for no fault of the NPU, so the pair says which golden fits.
void FusedOutputNote(const DumpTensor& t, const std::string& dump_op, const std::string& golden, std::vector<std::string>& notes) {
  NameMaps maps;
  auto g = ParseGoldenFileName(RealFileName(golden, maps));
  if (t.original_name.empty() || !g) return;
  const std::string fits = SanitizeDumpName(t.original_name);
  if (g->op_name == fits) return;
  notes.push_back("the dump of '" + dump_op + "' holds the output of framework op '" + t.original_name +
                  "' (the last op fused into it), not of '" + g->op_name + "': compare it with " + fits + "." +
                  std::to_string(std::max(t.original_output_index, 0)) + ".*.npy from the golden dump");
}

// A single file against a single file: .npy or a dump (every input/output pair, or output 0 against a .npy).
Result<Plan> FileAgainstFile(const CompareOptions& o) {
  Plan plan;
  auto is_npy = [](const std::string& p) { return p.ends_with(".npy"); };
  auto add = [&](const std::string& name, TensorRef a, TensorRef b) {
    CompareItem it;
    it.index = std::to_string(plan.items.size());
    it.op_type = "*";
    it.npu_name = fs::path(o.npu).filename().string();
    it.golden_name = fs::path(o.golden).filename().string();
    it.tensor_index = name;
    it.npu = a;
    it.golden = b;
    plan.items.push_back(std::move(it));
  };
  if (is_npy(o.npu) && is_npy(o.golden)) {
    add("0", {TensorRef::kNpy, o.npu, false, 0, "", FileSize(o.npu)}, {TensorRef::kNpy, o.golden, false, 0, "", FileSize(o.golden)});
    return plan;
  }
  if (is_npy(o.npu)) return Status::Error("E10001", "-m", o.npu, "a .npy on the NPU side needs a .npy golden");
  NPU_ASSIGN_OR_RETURN(DumpFile a, ReadDumpFile(o.npu));
  if (is_npy(o.golden)) {
    bool input = !o.input_index.empty();
    int idx = std::atoi((input ? o.input_index : o.output_index.empty() ? "0" : o.output_index).c_str());
    add(a.op_name + (input ? ":input:" : ":output:") + std::to_string(idx), DumpRef(o.npu, input, idx, FileSize(o.npu)),
        {TensorRef::kNpy, o.golden, false, 0, "", FileSize(o.golden)});
    if (!input && idx >= 0 && static_cast<size_t>(idx) < a.outputs.size()) FusedOutputNote(a.outputs[static_cast<size_t>(idx)], a.op_name, o.golden, plan.notes);
    return plan;
  }
  NPU_ASSIGN_OR_RETURN(DumpFile b, ReadDumpFile(o.golden));
  plan.golden_address = true;
  for (bool input : {true, false}) {
    const auto& la = input ? a.inputs : a.outputs;
    const auto& lb = input ? b.inputs : b.outputs;
    for (size_t i = 0; i < la.size(); ++i)
      add(a.op_name + (input ? ":input:" : ":output:") + std::to_string(i), DumpRef(o.npu, input, static_cast<int>(i), la[i].data.size()),
          i < lb.size() ? DumpRef(o.golden, input, static_cast<int>(i), lb[i].data.size()) : TensorRef{});
  }
  return plan;
}

}  // namespace

Result<Plan> BuildPlan(const CompareOptions& o) {
  for (const auto& [flag, p] : {std::pair{"-m", o.npu}, std::pair{"-g", o.golden}}) {
    std::error_code ec;
    if (p.empty()) return Status::Error("E10004", flag, "", "the path is empty");
    if (!fs::exists(p, ec)) return Status::Error("E13001", flag, p, "the path does not exist");
  }
  if (o.npu.ends_with(".h5") || o.golden.ends_with(".h5")) {
    if (!o.npu.ends_with(".h5") || !o.golden.ends_with(".h5"))
      return Status::Error("E10001", "-g", o.golden, "an .h5 dump compares only with another .h5 dump");
    if (!o.fusion.empty() || !o.quant_fusion.empty())
      return Status::Error("E10001", o.fusion.empty() ? "-q" : "-f", o.fusion.empty() ? o.quant_fusion : o.fusion, "the h5 comparison does not take a fusion rule");
    return H5AgainstH5(o);
  }
  if (!IsDir(o.npu) && !IsDir(o.golden)) return FileAgainstFile(o);
  if (!IsDir(o.npu) || !IsDir(o.golden))
    return Status::Error("E10001", "-g", o.golden, "-m and -g must both be folders or both be files");
  std::vector<std::string> skipped;
  auto dumps = ScanDumps(o.npu, &skipped);
  if (dumps.empty()) return Status::Error("EC0002", "-m", o.npu, "no NPU dump files ({op_type}.{op_name}.{task}.{stream}.{time}) below it");
  auto goldens = ScanGoldens(o.golden);
  Plan plan;
  if (!o.close_fusion.empty()) {
    if (!o.quant_fusion.empty()) return Status::Error("E10001", "-q", o.quant_fusion, "-q and -cf exclude each other: give one of them");
    if (o.fusion.empty()) return Status::Error("E10057", "-cf", o.close_fusion, "-cf compares the fused model (-f) with it; give -f too");
    auto other = ScanDumps(o.golden, nullptr);
    if (other.empty()) return Status::Error("EC0002", "-g", o.golden, "with -cf, -g is the NPU dump of the fusion-off model; no dump files below it");
    NPU_ASSIGN_OR_RETURN(plan, FusionOnAgainstOff(o, dumps, other));
  } else if (goldens.empty()) {
    auto other = ScanDumps(o.golden, nullptr);
    if (other.empty()) return Status::Error("EC0002", "-g", o.golden, "no golden .npy files ({op}.{output}.{time}.npy) or NPU dumps below it");
    if (!o.fusion.empty()) return Status::Error("E10001", "-f", o.fusion, "NPU-against-NPU comparison matches ops by name and takes no fusion rule");
    if (!o.quant_fusion.empty()) return Status::Error("E10001", "-q", o.quant_fusion, "NPU-against-NPU comparison matches ops by name and takes no quantization record");
    plan = DumpsAgainstDumps(dumps, other);
  } else if (!o.fusion.empty() || !o.quant_fusion.empty()) {
    NPU_ASSIGN_OR_RETURN(plan, WithRules(o, dumps, goldens));
  } else {
    if (!o.range.empty() || !o.select.empty()) return Status::Error("E10007", "-f", "", "-r and -s select ops of a fusion rule; give -f");
    plan = ByName(dumps, goldens);
  }
  if (!skipped.empty()) plan.notes.push_back(std::to_string(skipped.size()) + " file(s) below -m are not dump files and were skipped");
  return plan;
}

}  // namespace npu::cmp
