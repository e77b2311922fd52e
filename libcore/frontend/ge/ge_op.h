// What every GE op mapping (ge_ops*.cc) works with: the node being mapped with its GE attributes set aside, the
// layout facts of TF graphs (NHWC tensors held channels-first), and the graph edits a mapping may need (a
// constant input, a node inserted before an input or after the output). Internal to frontend/ge.
#pragma once
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/graph_builder.h"
#include "frontend/importer.h"
#include "ir/graph.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"

namespace npu {

// Where the dims of an NHWC tensor sit once it is held channels-first (NCHW): N 0, H 2, W 3, C 1.
constexpr std::array<int64_t, 4> kNhwcAxisInNchw = {0, 2, 3, 1};
constexpr std::array<int64_t, 4> kNhwcToNchw = {0, 3, 1, 2}, kNchwToNhwc = {0, 2, 3, 1};

// TF-style window attributes (2 values, or 4 in data_format order) as the two spatial ones.
inline std::optional<std::array<int64_t, 2>> Spatial(const std::vector<int64_t>& v, std::string_view data_format) {
  if (v.size() == 2) return std::array<int64_t, 2>{v[0], v[1]};
  size_t h = data_format.find('H'), w = data_format.find('W');
  if (v.size() != 4 || h == std::string_view::npos || w == std::string_view::npos) return std::nullopt;
  return std::array<int64_t, 2>{v[h], v[w]};
}

// A node being mapped: its GE attributes set aside in `ge`, the node's own rebuilt from them. A map function
// returns why it cannot map the node, or "" when it did. Nodes and constants it adds go through `b`, the
// GraphBuilder every importer builds with.
class GeOp {
 public:
  GeOp(GraphBuilder& b, int index) : g(b.graph()), b(b), ge_type(g.nodes[static_cast<size_t>(index)].op_type), index_(index) {
    std::swap(ge.attrs, node().attrs);
    if (auto it = ge.attrs.find(kFrameworkLayoutAttr); it != ge.attrs.end()) node().attrs[kFrameworkLayoutAttr] = it->second;
  }
  Graph& g;
  GraphBuilder& b;
  Node ge;  // the GE attributes, read with Node's accessors
  const std::string ge_type;  // the GE op type (the node's own becomes the kernel's)

  Node& node() { return g.nodes[index_]; }
  bool has_in(size_t j) { return j < node().inputs.size() && node().inputs[j] >= 0; }
  const Value& in(size_t j) { return g.values[node().inputs[j]]; }
  const Value& out(size_t j) { return g.values[node().outputs[j]]; }
  // An int list attribute GE may also write as one int (MindSpore's axis).
  std::vector<int64_t> ints(std::string_view k) {
    auto it = ge.attrs.find(k);
    if (it == ge.attrs.end()) return {};
    if (auto* i = std::get_if<int64_t>(&it->second)) return {*i};
    return ge.attr_ints(k);
  }
  // An int list from attribute `k`, or else from the integer constant input j (the *D form and the plain one).
  std::optional<std::vector<int64_t>> IntsOr(std::string_view k, size_t j) {
    if (ge.has_attr(k)) return ints(k);
    return IntConst(j);
  }
  // Whether value v is an NHWC tensor held channels-first (its producer carries _framework_layout NHWC).
  bool HeldNhwc(int v) {
    int p = v >= 0 ? g.values[v].producer : -1;
    return p >= 0 && g.nodes[p].attr_string(kFrameworkLayoutAttr) == "NHWC" && g.values[v].shape.size() == 4;
  }
  bool OutHeldNhwc() { return node().attr_string(kFrameworkLayoutAttr) == "NHWC" && out(0).shape.size() == 4; }
  // An axis as the framework wrote it (NHWC for a held tensor) as an axis of value v; nullopt when out of range.
  std::optional<int64_t> Axis(int v, int64_t axis) {
    const auto rank = static_cast<int64_t>(g.values[v].shape.size());
    if (axis < -rank || axis >= rank) return std::nullopt;
    if (axis < 0) axis += rank;
    return HeldNhwc(v) ? kNhwcAxisInNchw[static_cast<size_t>(axis)] : axis;
  }
  // Drops trailing omitted optional inputs; "" when none of those from `from` on is given.
  ConvertResult TrimOptional(size_t from, std::string_view what) {
    auto& ins = node().inputs;
    for (size_t j = from; j < ins.size(); ++j)
      if (ins[j] >= 0) return "its " + std::string(what) + " input (npukit has no kernel for it)";
    if (ins.size() > from) ins.resize(from);
    while (!ins.empty() && ins.back() < 0) ins.pop_back();
    return {};
  }
  // An integer constant input's values (axes, perm); nullopt when input j is not one.
  std::optional<std::vector<int64_t>> IntConst(size_t j) {
    if (!has_in(j) || !in(j).constant || IsFloat(in(j).constant->dtype())) return std::nullopt;
    return in(j).constant->ToInt64Vector();
  }
  // A constant input value in the shape `shape` (same elements): a new constant, so other readers keep theirs.
  int Reshaped(int v, const Shape& shape) { return b.Constant(g.values[v].name + "_nchw", g.values[v].constant->Reshaped(shape)); }
  // A new 1-D int64 constant (a kernel's pads, sizes, axes input) named after this node.
  int Ints(std::string_view what, const std::vector<int64_t>& v) { return b.Int64s(node().name + "/" + std::string(what), v); }
  // A node inserted before this one: `type` of input j (and `more` inputs), whose output, of `shape` and input
  // j's dtype, this node reads instead. The graph is sorted again after the mapping.
  void InsertBefore(size_t j, std::string type, AttrMap attrs, std::vector<int> more, Shape shape) {
    const int x = node().inputs[j];
    const DType dtype = g.values[x].dtype;
    more.insert(more.begin(), x);
    const int y = Inserted("_" + type + std::to_string(j), type, std::move(attrs), std::move(more));
    Described(y, dtype, std::move(shape));
    node().inputs[j] = y;
  }
  // A node inserted after this one: this node writes a new value of `shape` (output 0's dtype), which `type`
  // (with `more` inputs) turns into output 0, so output 0's readers and name stay as they are.
  void InsertAfter(std::string type, AttrMap attrs, std::vector<int> more, Shape shape) {
    const int y = node().outputs[0];
    more.insert(more.begin(), y);
    const int mid = Inserted("_" + type, type, std::move(attrs), std::move(more));
    const int after = g.values[mid].producer;
    g.nodes[after].inputs[0] = mid;  // the two values trade places: this node writes mid, the new node y
    g.nodes[after].outputs[0] = y;
    g.values[y].producer = after;
    node().outputs[0] = mid;
    g.values[mid].producer = index_;
    Described(mid, g.values[y].dtype, std::move(shape));
  }
  // Keeps only output 0 (GE's LayerNorm and BatchNorm also give statistics npukit's kernels do not); a reason
  // when one of the others is read.
  ConvertResult KeepOnlyOutput0(std::string_view what) {
    auto& outs = node().outputs;
    for (size_t j = 1; j < outs.size(); ++j)
      if (!Consumers(g, outs[j]).empty() || IsGraphOutput(g, outs[j])) return "its " + std::string(what) + " output is read";
    for (size_t j = 1; j < outs.size(); ++j) g.values[outs[j]].producer = -1;
    outs.resize(1);
    return {};
  }
  void TransposeInput(size_t j, const std::vector<int64_t>& perm) {
    Shape s;
    for (int64_t p : perm) s.push_back(in(j).shape[static_cast<size_t>(p)]);
    InsertBefore(j, "Transpose", {{"perm", perm}}, {}, std::move(s));
  }

 private:
  // A node of internal type `type` named after this one, whose dump belongs to the same framework op; its output.
  int Inserted(const std::string& suffix, const std::string& type, AttrMap attrs, std::vector<int> inputs) {
    return b.Add1(node().name + suffix, {type, std::move(inputs), std::move(attrs), type}, node().original_names);
  }
  void Described(int v, DType dtype, Shape shape) {
    Value& val = g.values[v];
    val.dtype = dtype;
    val.has_shape = true;
    val.shape = std::move(shape);
  }
  int index_;
};

using MapFn = ConvertResult (*)(GeOp&);

// An int8 cube op's offset_x (AMCT's asymmetric activations: the op computes on x - offset_x, padding with
// offset_x): npukit's int8 kernels take symmetric data, so such an op is listed as one that cannot run.
inline ConvertResult NoOffsetX(GeOp& c) {
  const int64_t offset = c.ge.attr_int("offset_x", 0);
  if (offset != 0) return "its offset_x " + std::to_string(offset) + " (npukit's int8 kernels take symmetric data)";
  return {};
}

// The map functions of ge_ops_tensor.cc and ge_ops_nn.cc (the table is in ge_ops.cc).
ConvertResult MapPad(GeOp& c);
ConvertResult MapSplit(GeOp& c);
ConvertResult MapTile(GeOp& c);
ConvertResult MapStridedSlice(GeOp& c);
ConvertResult MapGather(GeOp& c);
ConvertResult MapResize(GeOp& c);
ConvertResult MapCaffePooling(GeOp& c);
ConvertResult MapFullyConnection(GeOp& c);
ConvertResult MapConvBackpropInput(GeOp& c);
ConvertResult MapDeconvolution(GeOp& c);
ConvertResult MapKeepAttrs(GeOp& c);
ConvertResult MapNms(GeOp& c);
ConvertResult MapOneHot(GeOp& c);

}  // namespace npu
