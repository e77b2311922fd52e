#include "passes/formats.h"

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "ir/graph_edit.h"
#include "ir/node_attrs.h"
#include "lower/lower.h"

namespace npu {
namespace {

// Ops that compute element by element on one carrier input: they run in any layout that input has
// (CANN's elementwise TBE ops declare every format). Binary ones need their other operands to fit too.
const std::set<std::string_view> kUnaryElementwise = {
    "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Swish", "Exp", "Log", "Sqrt",
    "Neg", "Abs", "Reciprocal", "Erf", "Gelu", "Cast", "Softplus", "Elu", "Selu", "Identity", "Floor", "Ceil"};
const std::set<std::string_view> kBinaryElementwise = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};
// CANN's quantization ops run on NC1HWC0 and FRACTAL_NZ (ops-nn's prototypes; int8 NC1HWC0 has C0 = 32): they
// carry input 0's layout, and their scale operand stays as it is.
const std::set<std::string_view> kQuant = {"AscendQuant", "AscendDequant", "AscendRequant", "AscendAntiQuant"};
// Vector ops whose only implementation reads and writes NC1HWC0 (2-D pooling, inference BN).
const std::set<std::string_view> kFiveHdOnly = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool",
                                                "BatchNormalization"};
const std::set<std::string_view> kConv = {"Conv", "ConvTranspose"};
const std::set<std::string_view> kView = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
const std::set<std::string_view> kMatMul = {"MatMul", "MatMulBias", "Gemm"};

bool IsScalar(const Value& v) { return v.has_shape && NumElements(v.shape) == 1; }
bool Rank(const Value& v, size_t r) { return v.has_shape && v.shape.size() == r; }
bool FractalAligned(const Shape& s) {
  return s.size() >= 2 && s.back() % kFractalRows == 0 && s[s.size() - 2] % kFractalRows == 0;
}

class FormatAssigner {
 public:
  FormatAssigner(Graph& g, const SocSpec& soc, const std::vector<bool>& nc1hwc0_outputs, bool small_channel)
      : g_(g), soc_(soc), nc1hwc0_outputs_(nc1hwc0_outputs), small_channel_(small_channel) {}
  int c04_convs = 0;

  Status Run() {
    size_t n = g_.nodes.size();  // TransData nodes appended below are not revisited
    for (size_t k = 0; k < n; ++k) Assign(k);
    RestoreGraphOutputs();
    return SortTopologically(g_);
  }

 private:
  Graph& g_;
  const SocSpec& soc_;
  std::vector<bool> nc1hwc0_outputs_;
  bool small_channel_;
  std::map<std::pair<int, Format>, int> converted_;

  Format Current(int v) const { return DeviceFormat(g_.values[v]); }
  const Value& In(const Node& n, size_t j) const { return g_.values[n.inputs[j]]; }
  bool HasIn(const Node& n, size_t j) const { return j < n.inputs.size() && n.inputs[j] >= 0; }

  bool OnCube(const Node& n) const {
    return NodeEngine(n) == Engine::kCube && HasIn(n, 0) && soc_.CubeK(In(n, 0).dtype) != 0;
  }

  // The formats node `n` wants on its inputs and gives its outputs; nullopt entries mean "origin".
  struct Plan {
    std::vector<std::optional<Format>> in;
    std::optional<Format> out;
    int64_t weight_groups = 1;
  };

  Plan PlanFor(const Node& n) const {
    Plan p;
    p.in.resize(n.inputs.size());
    bool all_in = std::all_of(n.inputs.begin(), n.inputs.end(), [&](int v) { return v < 0 || g_.values[v].has_shape; });
    if (!all_in || n.outputs.empty()) return p;
    if (kConv.count(n.op_type) && OnCube(n) && Rank(In(n, 0), 4) && HasIn(n, 1) && Rank(In(n, 1), 4)) {
      p.in[0] = p.out = Format::kNC1HWC0;
      p.in[1] = Format::kFractalZ;
      if (Current(n.inputs[0]) == Format::kNC1HWC0_C04) {  // the AIPP before it wrote C04 (SmallChannelConv)
        p.in[0] = Format::kNC1HWC0_C04;
        p.in[1] = Format::kFractalZ_C04;
      }
      p.weight_groups = std::max<int64_t>(n.attr_int("group", 1), 1);
      if (HasIn(n, 3)) p.in[3] = Format::kNC1HWC0;  // the residual a fused Add joins in the epilogue
      return p;
    }
    if (kMatMul.count(n.op_type) && OnCube(n) && HasIn(n, 1) && In(n, 0).shape.size() >= 2 && In(n, 1).shape.size() >= 2) {
      p.in[0] = p.in[1] = p.out = Format::kFractalNZ;
      return p;
    }
    if (n.op_type == "Aipp") {  // the AIPP unit writes the feature map in NC1HWC0 (C04 for a small-channel conv)
      p.out = SmallChannelConv(n) ? Format::kNC1HWC0_C04 : Format::kNC1HWC0;
      return p;
    }
    if (kFiveHdOnly.count(n.op_type) && NodeEngine(n) != Engine::kAiCpu && Rank(In(n, 0), 4)) {
      p.in[0] = p.out = Format::kNC1HWC0;
      return p;
    }
    if (IsGraphOutput(g_, n.outputs[0]) || NodeEngine(n) == Engine::kAiCpu) return p;  // net outputs leave in origin format
    if (ConcatsInFiveHd(n)) {
      std::fill(p.in.begin(), p.in.end(), Format::kNC1HWC0);
      p.out = Format::kNC1HWC0;
      return p;
    }
    int c = Carrier(n);
    if (c < 0) return p;
    Format f = Current(n.inputs[c]);
    p.out = f;
    for (size_t j = 0; j < n.inputs.size(); ++j)
      if (HasIn(n, j) && (In(n, j).shape == In(n, c).shape || ChannelVector(f, In(n, j).shape, In(n, c).shape))) p.in[j] = f;
    return p;
  }

  // --enable_small_channel=1: the one reader of a static AIPP's output is a plain conv on the cube of at most 4 input
  // channels (CANN: the option speeds convs with C <= 4 and works only with static AIPP).
  bool SmallChannelConv(const Node& aipp) const {
    if (!small_channel_ || aipp.outputs.empty() || IsGraphOutput(g_, aipp.outputs[0])) return false;
    const int reader = SoleConsumer(g_, aipp.outputs[0]);
    if (reader < 0) return false;
    const Node& conv = g_.nodes[reader];
    return conv.op_type == "Conv" && OnCube(conv) && conv.inputs[0] == aipp.outputs[0] && conv.attr_int("group", 1) == 1 &&
           Rank(In(conv, 0), 4) && In(conv, 0).shape[1] <= 4 && HasIn(conv, 1) && Rank(In(conv, 1), 4);
  }

  // A 4-D Concat of feature maps stays in NC1HWC0 (CANN's ConcatD declares it), so the branches of an Inception or
  // DenseNet block need no TransData around it: when some input already is NC1HWC0 and the concat is on N, H or W,
  // or on C with every input's C a multiple of C0 (an unaligned one would put padding inside the output's C).
  bool ConcatsInFiveHd(const Node& n) const {
    if (n.op_type != "Concat" || !Rank(g_.values[n.outputs[0]], 4)) return false;
    const int64_t axis = NormalizeAxis(n.attr_int("axis", 0), 4), c0 = CubeC0(DTypeSize(g_.values[n.outputs[0]].dtype));
    bool any_five_hd = false;
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      if (!HasIn(n, j) || !Rank(In(n, j), 4) || (axis == 1 && In(n, j).shape[1] % c0 != 0)) return false;
      any_five_hd |= Current(n.inputs[j]) == Format::kNC1HWC0;
    }
    return any_five_hd;
  }

  // The input an elementwise-like node runs in the blocked format of, or -1 when it must run in origin
  // formats: unary ops, LayerNorm and Softmax carry input 0; binary ops the full-size input, if the
  // other operands fit that format.
  int Carrier(const Node& n) const {
    auto blocked = [&](size_t j) { return HasIn(n, j) && IsBlockedFormat(Current(n.inputs[j])); };
    if (kQuant.count(n.op_type)) return blocked(0) ? 0 : -1;
    if (kUnaryElementwise.count(n.op_type)) {
      for (size_t j = 1; j < n.inputs.size(); ++j)  // Clip's bounds
        if (HasIn(n, j) && !IsScalar(In(n, j))) return -1;
      return blocked(0) ? 0 : -1;
    }
    if (n.op_type == "LayerNormalization" || n.op_type == "Softmax") {  // over the last axis: rows of NZ
      if (!blocked(0) || Current(n.inputs[0]) != Format::kFractalNZ) return -1;
      int64_t rank = static_cast<int64_t>(In(n, 0).shape.size());
      int64_t axis = NormalizeAxis(n.attr_int("axis", n.op_type == "Softmax" && n.opset < 13 ? 1 : -1), rank);
      return axis == rank - 1 ? 0 : -1;
    }
    const Shape& y = g_.values[n.outputs[0]].shape;
    if (n.op_type == "ConfusionTranspose" || kView.count(n.op_type)) {
      // NZ moves (or keeps) whole 16 x 16 fractals when rows and columns stay fractal-aligned on both sides;
      // a view keeps NZ bytes as they are when it only regroups the batch dims.
      if (!blocked(0) || Current(n.inputs[0]) != Format::kFractalNZ) return -1;
      const Shape& x = In(n, 0).shape;
      if (n.op_type == "ConfusionTranspose") return FractalAligned(x) && FractalAligned(y) ? 0 : -1;
      return x.size() >= 2 && y.size() >= 2 && x.back() == y.back() && x[x.size() - 2] == y[y.size() - 2] ? 0 : -1;
    }
    if (!kBinaryElementwise.count(n.op_type)) return -1;
    int c = -1;
    for (size_t j = 0; j < n.inputs.size() && c < 0; ++j)
      if (blocked(j) && In(n, j).shape == y) c = static_cast<int>(j);
    if (c < 0) return -1;
    Format f = Current(n.inputs[c]);
    for (size_t j = 0; j < n.inputs.size(); ++j) {
      if (!HasIn(n, j)) continue;
      const Value& u = In(n, j);
      if (IsScalar(u) || u.shape == y) continue;
      // NZ broadcasts a row (rows dim 1) over every row of each fractal; nothing else broadcasts in a
      // blocked layout but a channel vector over NC1HWC0's H and W.
      bool row = u.shape.size() < 2 || u.shape[u.shape.size() - 2] == 1;
      if (!(f == Format::kFractalNZ && row && !u.shape.empty() && u.shape.back() == y.back()) && !ChannelVector(f, u.shape, y)) return -1;
    }
    return c;
  }

  // A per-channel operand of an NC1HWC0 map, (N or 1, C, 1, 1): its C0 lanes line up with the map's in every
  // pixel, so it broadcasts over H and W in NC1HWC0 too (an SE block's scale). CANN's Mul selects NC1HWC0 for two
  // 4-D NCHW operands of the same C whose N is equal or 1 (its op_select_format, rule 5).
  static bool ChannelVector(Format f, const Shape& u, const Shape& y) {
    return f == Format::kNC1HWC0 && u.size() == 4 && y.size() == 4 && u[1] == y[1] && u[2] == 1 && u[3] == 1 && (u[0] == 1 || u[0] == y[0]);
  }

  void Assign(size_t k) {
    Plan p = PlanFor(g_.nodes[k]);
    if (p.in.size() > 1 && p.in[1] == Format::kFractalZ_C04) ++c04_convs;
    std::vector<int> ins = g_.nodes[k].inputs;
    for (size_t j = 0; j < ins.size(); ++j) {
      if (ins[j] < 0) continue;
      Format want = p.in[j].value_or(OriginFormat(g_.values[ins[j]]));
      ins[j] = Converted(ins[j], want, want == Format::kFractalZ ? p.weight_groups : 1);
    }
    Node& n = g_.nodes[k];  // Converted() may have grown g_.nodes
    n.inputs = ins;
    if (p.out)
      for (int o : n.outputs) g_.values[o].device_format = *p.out;
  }

  // The value holding v in format `want`: v itself, a relaid constant, or a (shared) TransData's output.
  int Converted(int v, Format want, int64_t groups) {
    if (Current(v) == want) return v;
    auto key = std::make_pair(v, want);
    if (auto it = converted_.find(key); it != converted_.end()) return it->second;
    const Value src = g_.values[v];
    std::string base = src.name + "_" + std::string(FormatName(want));
    int out;
    if (src.constant) {  // weights are laid out once, at build time (the .om stores the device bytes)
      out = AddConstant(g_, UniqueValueName(g_, base), *src.constant);
    } else {
      out = g_.AddValue(UniqueValueName(g_, base));
      Node t;
      t.name = UniqueNodeName(g_, src.name + "_TransData_" + std::string(FormatName(want)));
      t.op_type = t.ascend_type = "TransData";
      t.inputs = {v};
      t.outputs = {out};
      t.attrs["src_format"] = std::string(FormatName(Current(v)));
      t.attrs["dst_format"] = std::string(FormatName(want));
      if (groups > 1) t.attrs["groups"] = groups;
      AppendNode(g_, std::move(t));
    }
    Value& o = g_.values[out];
    o.dtype = src.dtype;
    o.shape = src.shape;
    o.has_shape = src.has_shape;
    o.layout = src.layout;
    if (want != OriginFormat(o)) o.device_format = want;
    o.device_groups = groups;
    converted_[key] = out;
    return out;
  }

  // A net output leaves in its origin format (or NC1HWC0 where asked): a TransData takes its name.
  void RestoreGraphOutputs() {
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      int& o = g_.outputs[k];
      bool nc1hwc0 = k < nc1hwc0_outputs_.size() && nc1hwc0_outputs_[k];
      Format want = nc1hwc0 ? Format::kNC1HWC0 : OriginFormat(g_.values[o]);
      if (Current(o) == want) continue;
      std::string name = g_.values[o].name;
      g_.RenameValue(o, UniqueValueName(g_, name + "_" + std::string(FormatName(Current(o)))));
      int back = Converted(o, want, 1);
      g_.RenameValue(back, name);
      o = back;
    }
  }
};

bool IsLayoutTranspose(const Node& n, const std::vector<int64_t>& perm) {
  return n.op_type == "Transpose" && n.has_attr(kLayoutTransposeAttr) && n.attr_ints("perm") == perm;
}

// The importer's layout transposes next to a TransData are part of it on the device: NHWC -> NCHW -> NC1HWC0
// is one TransData NHWC -> NC1HWC0 (and NC1HWC0 -> NCHW -> NHWC one TransData to NHWC), as CANN builds it.
Status MergeLayoutTransposes(Graph& g) {
  static const std::vector<int64_t> kToFirst = {0, 3, 1, 2}, kToLast = {0, 2, 3, 1};
  std::vector<bool> dead(g.nodes.size(), false);
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    if (g.nodes[k].op_type != "TransData" || g.nodes[k].has_attr("perm")) continue;
    Node& t = g.nodes[k];
    const int src = t.inputs[0], p = g.values[src].producer;
    if (p >= 0 && !dead[p] && IsLayoutTranspose(g.nodes[p], kToFirst) && SoleConsumer(g, src) == static_cast<int>(k) &&
        t.attr_string("src_format") == "NCHW" && t.attr_string("dst_format") == "NC1HWC0") {
      t.inputs[0] = g.nodes[p].inputs[0];
      g.values[t.inputs[0]].layout = "NHWC";
      t.attrs["src_format"] = std::string("NHWC");
      t.attrs["perm"] = kToFirst;
      dead[p] = true;
      continue;
    }
    const int out = t.outputs[0], r = SoleConsumer(g, out);
    if (r >= 0 && !dead[r] && IsLayoutTranspose(g.nodes[r], kToLast) && t.attr_string("src_format") == "NC1HWC0" && t.attr_string("dst_format") == "NCHW") {
      const int y = g.nodes[r].outputs[0];
      t.outputs[0] = y;
      g.values[y].layout = "NHWC";
      t.attrs["dst_format"] = std::string("NHWC");
      t.attrs["perm"] = kToLast;
      dead[r] = true;
    }
  }
  EraseNodes(g, dead);
  return SortTopologically(g);
}

}  // namespace

Status AssignDeviceFormats(Graph& g, const SocSpec& soc, const std::vector<bool>& nc1hwc0_outputs, bool small_channel,
                           int* c04_convs) {
  for (size_t k = 0; k < nc1hwc0_outputs.size() && k < g.outputs.size(); ++k)
    if (nc1hwc0_outputs[k] && (!g.values[g.outputs[k]].has_shape || g.values[g.outputs[k]].shape.size() != 4))
      return Status::Error("E10001", "--is_output_adjust_hw_layout", "true",
                           "output '" + g.values[g.outputs[k]].name + "' is not 4-D, so it has no NC1HWC0 layout");
  FormatAssigner assigner(g, soc, nc1hwc0_outputs, small_channel);
  NPU_RETURN_IF_ERROR(assigner.Run());
  if (c04_convs) *c04_convs = assigner.c04_convs;
  return MergeLayoutTransposes(g);
}

}  // namespace npu
