#include "frontend/layout.h"

#include <set>
#include <string_view>

#include "frontend/graph_builder.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

const std::set<std::string_view> kUnary = {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "Exp", "Log", "Sqrt", "Neg",
                                           "Abs", "Reciprocal", "Floor", "Ceil", "Cast", "Erf", "Softplus", "Round", "Sign"};
const std::set<std::string_view> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow", "PRelu"};

std::vector<int64_t> PermOf(const Node& n) { return n.attr_ints("perm"); }

bool Inverse(const std::vector<int64_t>& p, const std::vector<int64_t>& q) {
  if (p.size() != q.size()) return false;
  for (size_t i = 0; i < q.size(); ++i)
    if (q[i] < 0 || q[i] >= static_cast<int64_t>(p.size()) || p[static_cast<size_t>(q[i])] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> Invert(const std::vector<int64_t>& p) {
  std::vector<int64_t> q(p.size());
  for (size_t i = 0; i < p.size(); ++i) q[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return q;
}

class Sinker {
 public:
  explicit Sinker(Graph& g) : g_(g), dead_(g.nodes.size(), false) {}

  Status Run() {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t k = 0; k < g_.nodes.size(); ++k)
        if (!dead_[k] && g_.nodes[k].op_type == "Transpose" && Step(static_cast<int>(k))) changed = true;
    }
    EraseNodes(g_, dead_);
    return SortTopologically(g_);
  }

 private:
  Graph& g_;
  std::vector<bool> dead_;

  bool Step(int t) {
    const int out = g_.nodes[t].outputs[0];
    const int reader = SoleConsumer(g_, out);
    if (reader < 0 || dead_[reader]) return false;
    Node& r = g_.nodes[reader];
    const auto perm = PermOf(g_.nodes[t]);
    if (r.op_type == "Transpose" && Inverse(perm, PermOf(r))) {  // x -> T -> T^-1 is x
      const int x = g_.nodes[t].inputs[0], y = r.outputs[0];
      if (IsGraphOutput(g_, y)) {  // x takes the output's name
        if (g_.values[x].producer < 0 || IsGraphOutput(g_, x)) return false;
        std::string name = g_.values[y].name;
        g_.RenameValue(y, UniqueValueName(g_, name + "_cancelled"));
        g_.RenameValue(x, name);
      }
      ReplaceAllUses(g_, y, x);
      dead_[reader] = dead_[t] = true;
      return true;
    }
    if (kUnary.count(r.op_type) && r.inputs.size() >= 1 && r.inputs[0] == out && OnlyScalarsAfterFirst(r)) return Swap(t, reader, {});
    if (kBinary.count(r.op_type) && r.inputs.size() == 2) {
      int other = r.inputs[0] == out ? 1 : 0;
      if (r.inputs[1 - other] != out || r.inputs[other] == out) return false;
      const Value& c = g_.values[r.inputs[other]];
      if (!c.constant || c.shape.size() > perm.size()) return false;
      return Swap(t, reader, {other});
    }
    return false;
  }

  bool OnlyScalarsAfterFirst(const Node& n) const {
    for (size_t j = 1; j < n.inputs.size(); ++j)
      if (n.inputs[j] >= 0 && (!g_.values[n.inputs[j]].constant || g_.values[n.inputs[j]].constant->numel() != 1)) return false;
    return true;
  }

  // Node e read T's output; now e reads T's input and T transposes e's result. Constant operands of e
  // (`permute`) are brought to T's input layout: T's inverse applied to them, as a node constant folding removes.
  bool Swap(int t, int e, std::vector<int> permute) {
    Node& tn = g_.nodes[t];
    const int x = tn.inputs[0], t_out = tn.outputs[0];
    const auto perm = PermOf(tn);
    const bool layout_transpose = tn.has_attr(kLayoutTransposeAttr);
    Node& en = g_.nodes[e];
    if (en.outputs.size() != 1) return false;
    const int e_out = en.outputs[0];
    for (int j : permute) {
      const Value c = g_.values[en.inputs[j]];
      Shape padded(perm.size() - c.shape.size(), 1);
      padded.insert(padded.end(), c.shape.begin(), c.shape.end());
      int reshaped = AddConstant(g_, c.name + "_rank" + std::to_string(perm.size()), c.constant->Reshaped(padded));
      int moved = g_.AddValue(UniqueValueName(g_, c.name + "_perm"));
      Node p;
      p.name = UniqueNodeName(g_, c.name + "_perm");
      p.op_type = "Transpose";
      p.opset = en.opset;
      p.inputs = {reshaped};
      p.outputs = {moved};
      p.attrs["perm"] = Invert(perm);
      AppendNode(g_, std::move(p));
      dead_.push_back(false);
      g_.nodes[e].inputs[j] = moved;
    }
    Node& en2 = g_.nodes[e];
    for (int& in : en2.inputs)
      if (in == t_out) in = x;
    int inner = g_.AddValue(UniqueValueName(g_, g_.values[e_out].name + "_pre"));
    g_.values[inner].producer = e;
    en2.outputs[0] = inner;
    // e now computes channels-first what the framework has channels-last: dumps turn it back.
    if (layout_transpose && perm == ToChannelsLast(perm.size()))
      en2.attrs[kFrameworkLayoutAttr] = std::string(perm.size() == 5 ? "NDHWC" : "NHWC");
    Node& tn2 = g_.nodes[t];
    tn2.inputs = {inner};
    tn2.outputs = {e_out};
    g_.values[e_out].producer = t;
    // t_out has no reader now; the value stays, unused.
    return true;
  }
};

}  // namespace

Status CancelLayoutTransposes(Graph& g) { return Sinker(g).Run(); }

}  // namespace npu
