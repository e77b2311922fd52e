#include "frontend/caffe/caffe_importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/stubs/logging.h>

#include <chrono>
#include <climits>
#include <cstring>

#include "base/file_io.h"
#include "base/log.h"
#include "base/text.h"
#include "frontend/caffe/caffe_convert.h"
#include "frontend/text_proto.h"
#include "ir/graph_edit.h"
#include "ops/schemas.h"

namespace npu {
namespace {

using npukit::caffe::BlobProto;
using npukit::caffe::LayerParameter;
using npukit::caffe::NetParameter;
using npukit::caffe::V1LayerParameter;

// CANN's Caffe error family is E11001-E11037; the notes do not give its per-case numbers, so these are
// npukit's, one per kind of problem.
constexpr const char* kPrototxtSyntax = "E11001";  // the .prototxt does not parse (the line is named)
constexpr const char* kWeightFile = "E11002";      // the .caffemodel does not parse
constexpr const char* kWeightMismatch = "E11003";  // a layer's weights are missing, extra or misshapen
constexpr const char* kBadBlob = "E11005";         // a bottom no layer produces, a layer without tops
constexpr const char* kUnsupported = "E13010";     // no converter for the layer type (CANN's code)

// The V1 layer types as Caffe's upgrade names them.
constexpr std::pair<V1LayerParameter::LayerType, std::string_view> kV1Types[] = {
    {V1LayerParameter::ACCURACY, "Accuracy"}, {V1LayerParameter::BNLL, "BNLL"}, {V1LayerParameter::CONCAT, "Concat"},
    {V1LayerParameter::CONVOLUTION, "Convolution"}, {V1LayerParameter::DATA, "Data"}, {V1LayerParameter::DROPOUT, "Dropout"},
    {V1LayerParameter::EUCLIDEAN_LOSS, "EuclideanLoss"}, {V1LayerParameter::FLATTEN, "Flatten"},
    {V1LayerParameter::INNER_PRODUCT, "InnerProduct"}, {V1LayerParameter::LRN, "LRN"}, {V1LayerParameter::POOLING, "Pooling"},
    {V1LayerParameter::RELU, "ReLU"}, {V1LayerParameter::SIGMOID, "Sigmoid"}, {V1LayerParameter::SOFTMAX, "Softmax"},
    {V1LayerParameter::SOFTMAX_LOSS, "SoftmaxWithLoss"}, {V1LayerParameter::SPLIT, "Split"}, {V1LayerParameter::TANH, "TanH"},
    {V1LayerParameter::ELTWISE, "Eltwise"}, {V1LayerParameter::POWER, "Power"}, {V1LayerParameter::THRESHOLD, "Threshold"},
    {V1LayerParameter::SLICE, "Slice"}, {V1LayerParameter::MVN, "MVN"}, {V1LayerParameter::ABSVAL, "AbsVal"},
    {V1LayerParameter::SILENCE, "Silence"}, {V1LayerParameter::EXP, "Exp"}, {V1LayerParameter::DECONVOLUTION, "Deconvolution"},
};

LayerParameter Upgrade(const V1LayerParameter& v1) {
  LayerParameter l;
  l.set_name(v1.name());
  l.set_type("V1:" + std::to_string(v1.type()));
  for (const auto& [t, name] : kV1Types)
    if (t == v1.type()) l.set_type(std::string(name));
  *l.mutable_bottom() = v1.bottom();
  *l.mutable_top() = v1.top();
  *l.mutable_blobs() = v1.blobs();
  *l.mutable_include() = v1.include();
  *l.mutable_exclude() = v1.exclude();
  if (v1.has_concat_param()) *l.mutable_concat_param() = v1.concat_param();
  if (v1.has_convolution_param()) *l.mutable_convolution_param() = v1.convolution_param();
  if (v1.has_dropout_param()) *l.mutable_dropout_param() = v1.dropout_param();
  if (v1.has_inner_product_param()) *l.mutable_inner_product_param() = v1.inner_product_param();
  if (v1.has_lrn_param()) *l.mutable_lrn_param() = v1.lrn_param();
  if (v1.has_pooling_param()) *l.mutable_pooling_param() = v1.pooling_param();
  if (v1.has_power_param()) *l.mutable_power_param() = v1.power_param();
  if (v1.has_eltwise_param()) *l.mutable_eltwise_param() = v1.eltwise_param();
  if (v1.has_relu_param()) *l.mutable_relu_param() = v1.relu_param();
  if (v1.has_slice_param()) *l.mutable_slice_param() = v1.slice_param();
  if (v1.has_softmax_param()) *l.mutable_softmax_param() = v1.softmax_param();
  if (v1.has_exp_param()) *l.mutable_exp_param() = v1.exp_param();
  return l;
}

// Every layer in the `layer` form (a net uses one form; a V1 net is upgraded).
std::vector<LayerParameter> LayersOf(const NetParameter& net) {
  std::vector<LayerParameter> out(net.layer().begin(), net.layer().end());
  for (const auto& v1 : net.layers()) out.push_back(Upgrade(v1));
  return out;
}

// A layer for the TEST phase (deploy): one whose include rules all name TRAIN, or whose exclude names TEST, is not.
bool InTestPhase(const LayerParameter& l) {
  for (const auto& r : l.exclude())
    if (r.has_phase() && r.phase() == npukit::caffe::TEST) return false;
  if (l.include().empty()) return true;
  for (const auto& r : l.include())
    if (!r.has_phase() || r.phase() == npukit::caffe::TEST) return true;
  return false;
}

Result<NetParameter> ParsePrototxt(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  NetParameter net;
  std::string where;  // training-only fields (param, fillers, engines) mean nothing to inference: skipped
  if (!ParseTextProto(text, &net, /*allow_unknown_fields=*/true, &where).ok())
    return Status::Error(kPrototxtSyntax, "--model", path, "the prototxt does not parse at " + where,
                         "Fix that line; --model is the deploy .prototxt and --weight the .caffemodel.");
  return net;
}

Result<NetParameter> ParseCaffemodel(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  auto bytes = f.bytes();
  if (bytes.size() > INT_MAX) return Status::Error(kWeightFile, "--weight", path, "the caffemodel is larger than 2 GB, the protobuf limit");
  NetParameter net;
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  in.SetTotalBytesLimit(INT_MAX);
  if (bytes.empty() || !net.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return Status::Error(kWeightFile, "--weight", path, "not a Caffe NetParameter (a truncated or corrupt .caffemodel, or another format)",
                         "Give the binary .caffemodel the net was trained into.");
  return net;
}

Result<Tensor> BlobTensor(const BlobProto& b, const std::string& layer, const std::string& path) {
  Shape shape;
  if (b.has_shape()) shape.assign(b.shape().dim().begin(), b.shape().dim().end());
  else shape = {b.num(), b.channels(), b.height(), b.width()};
  auto bad = [&](std::string why) { return Status::Error(kWeightMismatch, "--weight", path, "layer '" + layer + "': " + why); };
  if (std::string why = ShapeLimitProblem(shape); !why.empty()) return bad("blob shape " + ShapeToString(shape) + ": " + why);
  for (int64_t d : shape)
    if (d < 0) return bad("blob shape " + ShapeToString(shape) + " has a negative dim");
  const int64_t n = NumElements(shape);
  const bool dbl = b.data_size() == 0 && b.double_data_size() > 0;
  const int64_t have = dbl ? b.double_data_size() : b.data_size();
  if (have != n) return bad("a blob of shape " + ShapeToString(shape) + " holds " + std::to_string(have) + " values, not " + std::to_string(n));
  Tensor t = Tensor::Empty(DType::kF32, shape);
  float* d = t.mutable_data<float>();
  if (dbl) for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(b.double_data(static_cast<int>(i)));
  else if (n > 0) std::memcpy(d, b.data().data(), static_cast<size_t>(n) * sizeof(float));
  return t;
}

// The caffemodel's blobs by layer name, checked against the prototxt's layers: every layer that takes weights
// has them, in the number its type takes. A caffemodel layer the prototxt does not have is ignored, as Caffe's
// own loader ignores it ("Ignoring source layer ..."): a deploy prototxt over a training caffemodel (a loss head,
// a landmark branch) is the normal case; each one is named in `ignored`.
Result<std::map<std::string, std::vector<Tensor>>> MatchWeights(const std::vector<LayerParameter>& layers, const NetParameter& model,
                                                                const std::string& path, std::vector<std::string>& ignored) {
  std::map<std::string, std::vector<Tensor>> out;
  std::set<std::string> names;
  for (const auto& l : layers) names.insert(l.name());
  for (const auto& l : LayersOf(model)) {
    if (l.blobs().empty()) continue;
    if (!names.count(l.name())) {
      ignored.push_back(l.name());
      continue;
    }
    std::vector<Tensor> blobs;
    for (const auto& b : l.blobs()) {
      NPU_ASSIGN_OR_RETURN(Tensor t, BlobTensor(b, l.name(), path));
      blobs.push_back(std::move(t));
    }
    out[l.name()] = std::move(blobs);
  }
  for (const auto& l : layers) {
    auto [lo, hi] = caffe::BlobCount(l);
    int have = out.count(l.name()) ? static_cast<int>(out[l.name()].size()) : 0;
    if (have < lo || have > hi)
      return Status::Error(kWeightMismatch, "--weight", path,
                           "layer '" + l.name() + "' (" + l.type() + ") has " + std::to_string(have) + " weight blob(s) in the caffemodel, it takes " +
                               (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)),
                           "Give the caffemodel trained for this prototxt (layers are matched by name).");
  }
  return out;
}

Status AddInputs(caffe::Converter& c, const NetParameter& net, const std::vector<LayerParameter>& layers, const ImportOptions& opts) {
  auto add = [&](const std::string& name, Shape shape) {
    if (auto it = opts.input_shapes.find(name); it != opts.input_shapes.end()) shape = it->second;
    int v = c.b.GraphInput(name, DType::kF32, shape, true);
    c.SetBlob(name, v);
    return v;
  };
  std::map<std::string, int> by_name;
  for (int k = 0; k < net.input_size(); ++k) {
    Shape shape;
    if (k < net.input_shape_size()) shape.assign(net.input_shape(k).dim().begin(), net.input_shape(k).dim().end());
    else if (net.input_dim_size() >= 4 * (k + 1)) shape.assign(net.input_dim().begin() + 4 * k, net.input_dim().begin() + 4 * k + 4);
    else return Status::Error(kBadBlob, "--model", net.input(k), "input '" + net.input(k) + "' has no input_shape or 4 input_dim values");
    by_name[net.input(k)] = add(net.input(k), shape);
  }
  for (const auto& l : layers)
    if (l.type() == "Input" && InTestPhase(l))
      for (int k = 0; k < l.top_size(); ++k) {
        int s = std::min(k, l.input_param().shape_size() - 1);
        if (s < 0) return Status::Error(kBadBlob, "--model", l.name(), "Input layer '" + l.name() + "' has no shape");
        by_name[l.top(k)] = add(l.top(k), Shape(l.input_param().shape(s).dim().begin(), l.input_param().shape(s).dim().end()));
      }
  if (by_name.empty()) return Status::Error("E16001", "--model", "", "the net has no input (no input: fields and no Input layer)");
  for (const auto& [name, shape] : opts.input_shapes)
    if (!by_name.count(name)) {
      std::string names;
      for (const auto& [n, v] : by_name) names += (names.empty() ? "" : ", ") + n;
      return Status::Error("E10016", "--input_shape", name, "'" + name + "' is not an input of the net; its inputs are: " + names);
    }
  for (const auto& [name, v] : by_name) {
    if (std::string why = ShapeLimitProblem(c.b.graph().values[v].shape); !why.empty())
      return Status::Error("E16005", "input", name, "the input's shape " + ShapeToString(c.b.graph().values[v].shape) + ": " + why);
  }
  return Status::Ok();
}

Status UnsupportedError(const std::string& path, const std::vector<UnsupportedNode>& bad) {
  return Status::Error(kUnsupported, "--model", path, std::to_string(bad.size()) + " layer(s) are not supported:" + UnsupportedList(bad),
                       "Replace these layers in the prototxt; atc --mode=3 writes the full report.");
}

Status SelectOutputs(caffe::Converter& c, const std::vector<const LayerParameter*>& layers, const ImportOptions& opts) {
  Graph& g = c.b.graph();
  if (!opts.out_nodes.empty()) {
    for (const auto& [name, k] : opts.out_nodes) {
      auto it = std::find_if(layers.begin(), layers.end(), [&name = name](const LayerParameter* l) { return l->name() == name; });
      if (it == layers.end()) return Status::Error("E11017", "--out_nodes", name, "layer '" + name + "' is not found in the net");
      if (k >= (*it)->top_size()) return Status::Error("E11016", "--out_nodes", name + ":" + std::to_string(k), "the layer has " + std::to_string((*it)->top_size()) + " top(s)");
      auto v = c.Blob((*it)->top(k));
      if (!v) return Status::Error("E11016", "--out_nodes", name, "the layer's top is not computed");
      g.outputs.push_back(*v);
    }
    return Status::Ok();
  }
  // The net's outputs: the tops no later layer reads (the last writer's value, after in-place layers).
  std::set<std::string> read_later;
  std::vector<std::string> outs;
  for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
    std::vector<std::string> unread;
    for (const auto& t : (*it)->top())
      if (!read_later.count(t) && std::find(outs.begin(), outs.end(), t) == outs.end()) unread.push_back(t);
    outs.insert(outs.begin(), unread.begin(), unread.end());
    for (const auto& b : (*it)->bottom()) read_later.insert(b);
  }
  for (const auto& t : outs)
    if (auto v = c.Blob(t); v && !IsGraphOutput(g, *v) && g.values[*v].producer >= 0) g.outputs.push_back(*v);
  if (g.outputs.empty()) return Status::Error("E16001", "--model", "", "the net computes nothing");
  return Status::Ok();
}

}  // namespace

Result<Graph> ImportCaffe(const std::string& path, const ImportOptions& opts, ModelInfo* info) {
  RegisterBuiltinSchemas();
  ModelInfo local;
  if (!info) info = &local;
  auto start = std::chrono::steady_clock::now();
  NPU_ASSIGN_OR_RETURN(NetParameter net, ParsePrototxt(path));
  if (!net.layer().empty() && !net.layers().empty())
    return Status::Error(kPrototxtSyntax, "--model", path, "the net mixes `layer` and the deprecated `layers` fields", "Upgrade the prototxt (Caffe's upgrade_net_proto_text).");
  if (opts.weight.empty()) return Status::Error("E10004", "--weight", "", "a Caffe model needs its weights", "Give the .caffemodel with --weight.");
  NPU_ASSIGN_OR_RETURN(NetParameter model, ParseCaffemodel(opts.weight));
  info->producer = "Caffe" + (net.name().empty() ? std::string() : " (" + net.name() + ")");
  std::vector<LayerParameter> all = LayersOf(net), layers;
  for (auto& l : all)
    if (InTestPhase(l)) layers.push_back(std::move(l));
  for (const auto& l : layers) {
    info->nodes.emplace_back(l.name(), l.type());
    if (!IsUtf8(l.name())) return Status::Error("E16005", "--model", path, "layer name '" + EscapeNonUtf8(l.name()) + "' is not valid UTF-8");
    if (!caffe::FindLayer(l.type())) info->unsupported.push_back({l.name(), l.type(), "caffe", 0, "no Caffe parser is registered for this layer type"});
  }
  if (!info->unsupported.empty()) return UnsupportedError(path, info->unsupported);
  std::vector<std::string> ignored;
  NPU_ASSIGN_OR_RETURN(auto weights, MatchWeights(layers, model, opts.weight, ignored));
  for (const std::string& name : ignored)
    info->warnings.push_back("ignoring source layer '" + name + "' of " + opts.weight + ": the prototxt has no layer of that name (as Caffe's loader does)");

  Graph g;
  g.name = net.name().empty() ? "graph" : net.name();
  caffe::Converter c(g);
  c.SetWeights(std::move(weights));
  std::vector<const LayerParameter*> order;
  for (const auto& l : layers) order.push_back(&l);
  NPU_RETURN_IF_ERROR(AddInputs(c, net, layers, opts));
  for (const LayerParameter* l : order) {
    for (const auto& b : l->bottom())
      if (!c.Blob(b))
        return Status::Error(kBadBlob, "--model", path, "layer '" + l->name() + "' reads blob '" + b + "', which no earlier layer or input produces",
                             "Layers are read in file order; a bottom must be an input or a top of an earlier layer.");
    if (l->type() == "Input") continue;
    if (l->bottom_size() == 0 || l->top_size() == 0)
      return Status::Error(kBadBlob, "--model", path, "layer '" + l->name() + "' (" + l->type() + ") has " + std::to_string(l->bottom_size()) + " bottom(s) and " +
                                                          std::to_string(l->top_size()) + " top(s); it needs one of each at least");
    if (auto why = caffe::FindLayer(l->type())->convert(c, *l)) info->unsupported.push_back({l->name(), l->type(), "caffe", 0, why->reason});
  }
  if (!info->unsupported.empty()) return UnsupportedError(path, info->unsupported);
  NPU_RETURN_IF_ERROR(SelectOutputs(c, order, opts));
  g.RemoveDeadNodes();
  NPU_RETURN_IF_ERROR(g.Verify());
  NPU_LOG(kInfo, "Caffe", "imported " << path << ": " << layers.size() << " layers -> " << g.nodes.size() << " nodes in " << log::MsSince(start) << " ms");
  return g;
}

const Importer& CaffeImporter() {
  struct Caffe final : Importer {
    std::string_view name() const override { return "Caffe"; }
    std::vector<std::string_view> input_formats() const override { return {"NCHW", "ND"}; }
    bool input_format_fits_all() const override { return true; }
    Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const override { return ImportCaffe(path, opts, info); }
  };
  static const Caffe importer;
  return importer;
}

}  // namespace npu
