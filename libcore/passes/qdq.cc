#include "passes/qdq.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "ir/graph_edit.h"
#include "kernels/kernel_util.h"

namespace npu {
namespace {

// AscendDequant's dtype (GE's C enum): float16 inside the network, as Ascend inference graphs run (AMCT writes
// the graph's op_data_type); float32 where the result leaves the model, which declared it float32.
constexpr int64_t kDequantDtypeFloat32 = 0, kDequantDtypeFloat16 = 1;
constexpr float kHalfMax = 65504.0f;  // the largest finite fp16 value

struct QuantParams {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;  // empty: 0
  DType qtype = DType::kU8;         // ONNX's default without a zero point
  int64_t axis = 1;
  bool operator==(const QuantParams& o) const {
    return scale == o.scale && zero_point == o.zero_point && qtype == o.qtype && (scale.size() == 1 || axis == o.axis);
  }
  bool zero() const { return std::all_of(zero_point.begin(), zero_point.end(), [](int64_t z) { return z == 0; }); }
};

class Rewriter {
 public:
  Rewriter(Graph& g, const QdqOptions& options, std::vector<std::string>& warnings) : g_(g), options_(options), warnings_(warnings) {}

  Status Run() {
    const size_t count = g_.nodes.size();
    for (size_t k = 0; k < count; ++k)
      if (g_.nodes[k].op_type == "Conv" || g_.nodes[k].op_type == "Gemm" || g_.nodes[k].op_type == "MatMul" || g_.nodes[k].op_type == "ConvTranspose")
        NPU_RETURN_IF_ERROR(QuantizeLayer(static_cast<int>(k)));
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (!dead_[k] && g_.nodes[k].op_type == "DequantizeLinear") NPU_RETURN_IF_ERROR(RewriteDequantize(static_cast<int>(k)));
    for (size_t k = 0; k < g_.nodes.size(); ++k)
      if (!dead_[k] && g_.nodes[k].op_type == "QuantizeLinear") NPU_RETURN_IF_ERROR(RewriteLoneQuantize(static_cast<int>(k)));
    dead_.resize(g_.nodes.size(), false);
    EraseNodes(g_, dead_);
    NPU_RETURN_IF_ERROR(SortTopologically(g_));  // RemoveDeadNodes walks the graph in order
    g_.RemoveDeadNodes();
    return Status::Ok();
  }

 private:
  Graph& g_;
  const QdqOptions& options_;
  std::vector<std::string>& warnings_;
  std::vector<bool> dead_ = std::vector<bool>(g_.nodes.size(), false);

  // A layer (or activation pair) that cannot be quantized: an error, or with --qdq_fallback=float a warning,
  // and the caller leaves it in float.
  Status Unquantizable(const Node& n, std::string why) {
    if (!options_.keep_float) return Bad(n, why + " (atc --qdq_fallback=float keeps such layers in float)");
    warnings_.push_back("node '" + n.name + "' stays float: " + why);
    return Status::Ok();
  }

  Status Bad(const Node& n, std::string why) const {
    return Status::Error("E16005", "node", n.name, std::move(why), "Quantize with per-tensor activations and per-channel int8 weights, zero points 0 (as AMCT and TensorRT do).");
  }
  // The value behind Identity nodes (torch shares equal constants through them; folding comes later).
  int ThroughIdentity(int v) const {
    for (const Node* p = Producer(v); p && p->op_type == "Identity" && !p->inputs.empty(); p = Producer(v)) v = p->inputs[0];
    return v;
  }
  const Node* Producer(int v) const { return v >= 0 && g_.values[v].producer >= 0 ? &g_.nodes[g_.values[v].producer] : nullptr; }
  bool Is(const Node* n, std::string_view type) const { return n && n->op_type == type && !dead_[static_cast<size_t>(n - g_.nodes.data())]; }

  Result<QuantParams> Params(const Node& n) const {
    QuantParams p;
    const Tensor* s = n.inputs.size() > 1 ? ConstantOf(g_, n.inputs[1]) : nullptr;
    if (!s || !IsFloat(s->dtype())) return Bad(n, "its scale is not a float constant");
    const Tensor f = CastTensor(*s, DType::kF32);
    p.scale.assign(f.data<float>(), f.data<float>() + f.numel());
    for (float v : p.scale)
      if (!(std::abs(v) > 0.0f) || !std::isfinite(v)) return Bad(n, "scale " + std::to_string(v) + " is not a finite non-zero number");
    if (n.inputs.size() > 2 && n.inputs[2] >= 0) {
      const Tensor* z = ConstantOf(g_, n.inputs[2]);
      if (!z) return Bad(n, "its zero point is not a constant");
      p.qtype = z->dtype();
      p.zero_point = z->ToInt64Vector();
    }
    p.axis = n.attr_int("axis", 1);
    return p;
  }

  // The Q -> DQ pair feeding value v (an activation's fake quantization), checked to share factors.
  Result<std::optional<std::pair<int, QuantParams>>> ActivationPair(int v) {
    const Node* dq = Producer(v);
    if (!Is(dq, "DequantizeLinear")) return std::optional<std::pair<int, QuantParams>>();
    const Node* q = Producer(dq->inputs[0]);
    if (!Is(q, "QuantizeLinear")) return std::optional<std::pair<int, QuantParams>>();
    NPU_ASSIGN_OR_RETURN(QuantParams pq, Params(*q));
    NPU_ASSIGN_OR_RETURN(QuantParams pd, Params(*dq));
    if (!(pq == pd)) return Bad(*dq, "its factors differ from its QuantizeLinear '" + q->name + "': a Q/DQ pair must share scale and zero point");
    return std::optional<std::pair<int, QuantParams>>(std::make_pair(q->inputs[0], pq));
  }

  Status QuantizeLayer(int k) {
    const Node& layer = g_.nodes[k];
    if (layer.inputs.size() < 2) return Status::Ok();
    NPU_ASSIGN_OR_RETURN(auto act, ActivationPair(layer.inputs[0]));
    const Node* wdq = Producer(layer.inputs[1]);
    const bool weight_dq = Is(wdq, "DequantizeLinear") && ConstantOf(g_, wdq->inputs[0]);
    if (!act || !weight_dq) return Status::Ok();  // not a quantized layer: its Q/DQ become quant/antiquant below
    if (layer.op_type == "Gemm" && layer.attr_int("transA", 0)) return Unquantizable(layer, "a quantized Gemm takes transA = 0");
    const auto& [x, px] = *act;
    if (px.scale.size() != 1) return Unquantizable(layer, "its activation is quantized per channel; Ascend quantizes activations per tensor");
    if (!px.zero() || px.qtype != DType::kI8) return Unquantizable(layer, "its activation is not int8 with zero point 0");
    NPU_ASSIGN_OR_RETURN(QuantParams pw, Params(*wdq));
    const Tensor& wq = *ConstantOf(g_, wdq->inputs[0]);
    if (wq.dtype() != DType::kI8 || !pw.zero()) return Unquantizable(*wdq, "the weights are not int8 with zero point 0");
    if (layer.op_type == "MatMul" && wq.rank() != 2) return Unquantizable(layer, "a quantized MatMul takes 2-D weights (K x N)");
    // The output channels and the weights' axis that holds them: Conv (M, C/G, ...), ConvTranspose (C, M/G, ...),
    // Gemm (K, N) or with transB (N, K), MatMul (K, N).
    const bool transposed = layer.op_type == "ConvTranspose";
    const int64_t out_axis = layer.op_type == "Conv" || (layer.op_type == "Gemm" && layer.attr_int("transB", 0)) ? 0 : wq.rank() - 1;
    const int64_t channels = transposed ? wq.shape()[1] * layer.attr_int("group", 1) : wq.shape()[static_cast<size_t>(transposed ? 1 : out_axis)];
    if (pw.scale.size() != 1 && transposed && layer.attr_int("group", 1) != 1)
      return Unquantizable(*wdq, "a grouped ConvTranspose's weights must be quantized per tensor");
    if (pw.scale.size() != 1 && static_cast<int64_t>(pw.scale.size()) != channels) return Bad(*wdq, "its scale is neither per tensor nor per output channel");
    if (pw.scale.size() != 1 && pw.axis != (transposed ? 1 : out_axis)) return Bad(*wdq, "its per-channel axis is not the output channels'");
    NPU_ASSIGN_OR_RETURN(AttrMap qattrs, QuantScaleAttrs(layer, px.scale[0]));
    if (qattrs.empty()) return Status::Ok();  // kept float (--qdq_fallback=float)
    // deq_scale = s_x * s_w per output channel, as AMCT's uint64 param (the fp32 bits, zero-extended)
    std::vector<float> deq(static_cast<size_t>(channels));
    for (int64_t c = 0; c < channels; ++c) deq[c] = px.scale[0] * pw.scale[pw.scale.size() == 1 ? 0 : c];
    NPU_ASSIGN_OR_RETURN(int bias, QuantizedBias(layer, deq));
    const std::string name = layer.name;  // g_.nodes grows below: no references into it from here on
    const int weights = wdq->inputs[0];
    // <layer>.quant on the activation
    int xq = g_.AddValue(UniqueValueName(g_, name + ".quant"));
    Node quant;
    quant.name = UniqueNodeName(g_, name + ".quant");
    quant.op_type = "AscendQuant";
    quant.inputs = {x};
    quant.outputs = {xq};
    quant.attrs = std::move(qattrs);
    quant.original_names = {quant.name};
    AppendNode(g_, std::move(quant));
    // the layer on int8, its int32 result into <layer>.dequant, which writes the layer's old output
    Tensor bits = Tensor::Empty(DType::kU64, {channels});
    for (int64_t c = 0; c < channels; ++c) bits.mutable_data<uint64_t>()[c] = std::bit_cast<uint32_t>(deq[c]);
    const int scale_v = AddConstant(g_, UniqueValueName(g_, name + ".dequant.param"), std::move(bits));
    const int acc = g_.AddValue(UniqueValueName(g_, name + "_int32"));
    Node& l = g_.nodes[k];
    const int y = l.outputs[0];
    l.inputs = {xq, weights};
    if (bias >= 0) l.inputs.push_back(bias);
    l.outputs = {acc};
    g_.values[acc].producer = k;
    Node dequant;
    dequant.name = UniqueNodeName(g_, name + ".dequant");
    dequant.op_type = "AscendDequant";
    dequant.inputs = {acc, scale_v};
    dequant.outputs = {y};
    dequant.attrs = {{"dtype", IsGraphOutput(g_, y) ? kDequantDtypeFloat32 : kDequantDtypeFloat16}};
    dequant.original_names = {dequant.name};
    AppendNode(g_, std::move(dequant));
    dead_.resize(g_.nodes.size(), false);
    return Status::Ok();
  }

  // AscendQuant's scale for an activation scale s: 1/s, which AscendQuant multiplies by in fp16. Past fp16's
  // range it is given as sqrt(1/s) with sqrt_mode (x * scale * scale), as AMCT writes it; past that even, the layer
  // cannot be quantized (activations that small). Empty: kept float.
  Result<AttrMap> QuantScaleAttrs(const Node& layer, float s) {
    const float inv = 1.0f / s, root = std::sqrt(inv);
    const bool sqrt_mode = inv > kHalfMax;
    if (sqrt_mode && !(root <= kHalfMax)) {
      NPU_RETURN_IF_ERROR(Unquantizable(layer, "its activation scale " + std::to_string(s) + " needs a quantization scale past fp16's range even with sqrt_mode"));
      return AttrMap{};
    }
    return AttrMap{{"scale", sqrt_mode ? root : inv}, {"offset", 0.0f}, {"sqrt_mode", int64_t{sqrt_mode}}, {"dst_type", std::string("INT8")}};
  }

  // The layer's bias as int32 round(b / (s_x * s_w)), from a float constant or a DQ of an int32 one; -1: none.
  Result<int> QuantizedBias(const Node& layer, const std::vector<float>& deq) {
    if (layer.inputs.size() < 3 || layer.inputs[2] < 0) return -1;
    int b = ThroughIdentity(layer.inputs[2]);
    if (const Node* bdq = Producer(b); Is(bdq, "DequantizeLinear")) b = ThroughIdentity(bdq->inputs[0]);
    const Tensor* t = ConstantOf(g_, b);
    if (!t) return Bad(layer, "its bias is not a constant");
    if (t->dtype() == DType::kI32) return b;  // already AMCT's int32 bias
    if (layer.op_type == "Gemm" && layer.attr_float("beta", 1.0f) != 1.0f) return Bad(layer, "a quantized Gemm takes beta = 1");
    const Tensor f = CastTensor(*t, DType::kF32);
    if (f.numel() != static_cast<int64_t>(deq.size()) && f.numel() != 1) return Bad(layer, "its bias is not one value per output channel");
    Tensor q = Tensor::Empty(DType::kI32, {static_cast<int64_t>(deq.size())});
    for (size_t c = 0; c < deq.size(); ++c) {
      const double v = std::nearbyint(static_cast<double>(f.data<float>()[f.numel() == 1 ? 0 : c]) / deq[c]);
      if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) return Bad(layer, "its bias does not fit int32 at scale s_x * s_w");
      q.mutable_data<int32_t>()[c] = static_cast<int32_t>(v);
    }
    return AddConstant(g_, UniqueValueName(g_, layer.name + ".bias_int32"), std::move(q));
  }

  // A DQ left over: of a constant, the float tensor; after a Q, AscendQuant -> AscendAntiQuant.
  Status RewriteDequantize(int k) {
    Node& dq = g_.nodes[k];
    if (dq.outputs.empty() || (Consumers(g_, dq.outputs[0]).empty() && !IsGraphOutput(g_, dq.outputs[0]))) return Kill(k);  // its layer took it
    NPU_ASSIGN_OR_RETURN(QuantParams p, Params(dq));
    if (const Tensor* c = ConstantOf(g_, dq.inputs[0])) {
      Tensor f = CastTensor(*c, DType::kF32);
      float* d = f.mutable_data<float>();
      const int64_t n = f.numel(), inner = Inner(c->shape(), p.axis), chans = static_cast<int64_t>(p.scale.size());
      for (int64_t i = 0; i < n; ++i) {
        const int64_t ch = chans == 1 ? 0 : (i / inner) % chans;
        d[i] = (d[i] - static_cast<float>(p.zero_point.empty() ? 0 : p.zero_point[p.zero_point.size() == 1 ? 0 : ch])) * p.scale[ch];
      }
      ReplaceAllUses(g_, dq.outputs[0], AddConstant(g_, UniqueValueName(g_, dq.name + "_float"), std::move(f)));
      return Kill(k);
    }
    const Node* q = Producer(dq.inputs[0]);
    if (!Is(q, "QuantizeLinear")) return Bad(dq, "it dequantizes a tensor no QuantizeLinear made");
    NPU_ASSIGN_OR_RETURN(QuantParams pq, Params(*q));
    if (!(pq == p)) return Bad(dq, "its factors differ from its QuantizeLinear '" + q->name + "': a Q/DQ pair must share scale and zero point");
    if (p.scale.size() != 1 || p.qtype != DType::kI8) {
      NPU_RETURN_IF_ERROR(Unquantizable(dq, "a fake-quantized activation must be int8 per tensor"));
      ReplaceAllUses(g_, dq.outputs[0], q->inputs[0]);  // kept float: the pair drops out (the Q goes if nothing else reads it)
      return Kill(k);
    }
    // x -> AscendQuant (the Q's output) -> AscendAntiQuant (the DQ's output): y = (q + offset) * scale
    Node& qn = g_.nodes[static_cast<size_t>(q - g_.nodes.data())];
    const float zp = static_cast<float>(p.zero_point.empty() ? 0 : p.zero_point[0]);
    qn.op_type = "AscendQuant";
    qn.inputs.resize(1);
    qn.attrs = {{"scale", 1.0f / p.scale[0]}, {"offset", zp}, {"dst_type", std::string("INT8")}};
    Node& d = g_.nodes[k];
    d.op_type = "AscendAntiQuant";
    d.inputs.resize(1);
    d.attrs = {{"scale", p.scale[0]}, {"offset", -zp}, {"dtype", IsGraphOutput(g_, d.outputs[0]) ? kDequantDtypeFloat32 : kDequantDtypeFloat16}};
    return Status::Ok();
  }

  Status RewriteLoneQuantize(int k) {
    Node& q = g_.nodes[k];
    if (q.op_type != "QuantizeLinear") return Status::Ok();
    bool read = IsGraphOutput(g_, q.outputs[0]);
    for (int c : Consumers(g_, q.outputs[0])) read |= !dead_[static_cast<size_t>(c)];
    if (!read) return Kill(k);  // its dequantize was taken by a layer
    NPU_ASSIGN_OR_RETURN(QuantParams p, Params(q));
    if (p.scale.size() != 1 || p.qtype != DType::kI8) return Bad(q, "an activation must be quantized to int8 per tensor");
    q.op_type = "AscendQuant";
    q.inputs.resize(1);
    q.attrs = {{"scale", 1.0f / p.scale[0]}, {"offset", static_cast<float>(p.zero_point.empty() ? 0 : p.zero_point[0])}, {"dst_type", std::string("INT8")}};
    return Status::Ok();
  }

  static int64_t Inner(const Shape& s, int64_t axis) {
    if (axis < 0) axis += static_cast<int64_t>(s.size());
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(std::max<int64_t>(axis, 0)) + 1; d < s.size(); ++d) inner *= s[d];
    return inner;
  }

  Status Kill(int k) {
    dead_.resize(g_.nodes.size(), false);
    dead_[static_cast<size_t>(k)] = true;
    return Status::Ok();
  }
};

}  // namespace

Status QdqToAscendQuant(Graph& g, const QdqOptions& options, std::vector<std::string>& warnings) {
  bool any = false;
  for (const Node& n : g.nodes) any |= n.op_type == "QuantizeLinear" || n.op_type == "DequantizeLinear";
  return any ? Rewriter(g, options, warnings).Run() : Status::Ok();
}

namespace {

bool TakesInt8(std::string_view type) {
  return type == "Conv" || type == "ConvTranspose" || type == "Gemm" || type == "MatMul" || type == "AscendAntiQuant";
}
bool MovesBytesOnly(std::string_view type) {
  return type == "Reshape" || type == "Flatten" || type == "Squeeze" || type == "Unsqueeze" || type == "Transpose" || type == "Identity";
}

// The first reader of v (or of what byte-moving ops make of it) that cannot take int8; null when none.
const Node* FirstNonInt8Reader(const Graph& g, int v) {
  for (int c : Consumers(g, v)) {
    const Node& n = g.nodes[static_cast<size_t>(c)];
    if (TakesInt8(n.op_type)) continue;  // a misplaced int8 bias is the schema's error (CubeOutputDtype)
    if (!MovesBytesOnly(n.op_type) || n.outputs.empty() || n.inputs.empty() || n.inputs[0] != v) return &n;
    if (const Node* bad = FirstNonInt8Reader(g, n.outputs[0])) return bad;
  }
  return nullptr;
}

}  // namespace

Status CheckQuantizedConsumers(const Graph& g) {
  for (const Node& q : g.nodes) {
    if (q.op_type != "AscendQuant" || q.outputs.empty()) continue;
    if (const Node* bad = FirstNonInt8Reader(g, q.outputs[0]))
      return Status::Error("E16005", "node", q.name,
                           "its int8 result feeds '" + bad->name + "' (" + bad->op_type + "), which cannot compute on int8 (only Conv, ConvTranspose, Gemm, "
                           "MatMul and AscendAntiQuant can)",
                           "Quantize only the inputs of quantizable layers, or dequantize (AscendAntiQuant) before '" + bad->name + "'.");
  }
  return Status::Ok();
}

}  // namespace npu
