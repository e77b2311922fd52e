#include "frontend/onnx/onnx_importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <climits>
#include <cstring>
#include <charconv>
#include <chrono>
#include <filesystem>

#include "base/file_io.h"
#include "frontend/weight_cut.h"
#include "ops/schemas.h"
#include "base/log.h"
#include "base/text.h"
#include "ir/op_schema.h"

namespace npu {
namespace {

// Opsets 7-17 are the tested range; older models are accepted with a warning (their ops are opset-aware).
constexpr int64_t kMinOpset = 1, kTestedMinOpset = 7, kMaxOpset = 17;

std::optional<DType> FromOnnxType(int32_t t) {
  switch (t) {
    case onnx::TensorProto::FLOAT: return DType::kF32;
    case onnx::TensorProto::UINT8: return DType::kU8;
    case onnx::TensorProto::INT8: return DType::kI8;
    case onnx::TensorProto::INT16: return DType::kI16;
    case onnx::TensorProto::INT32: return DType::kI32;
    case onnx::TensorProto::INT64: return DType::kI64;
    case onnx::TensorProto::BOOL: return DType::kBool;
    case onnx::TensorProto::FLOAT16: return DType::kF16;
    case onnx::TensorProto::DOUBLE: return DType::kF64;
    case onnx::TensorProto::BFLOAT16: return DType::kBF16;
    case onnx::TensorProto::UINT64: return DType::kU64;  // AMCT's packed dequant scales
    default: return std::nullopt;
  }
}

Status Bad(const std::string& path, std::string why) { return Status::Error("E10041", "--model", path, std::move(why)); }

// Everything a conversion needs to keep alive: the parsed model and any external-data maps.
struct ImportState {
  std::string path, dir;
  std::shared_ptr<onnx::ModelProto> model;
  std::map<std::string, MappedFile> external;
  // Per graph.initializer when the model was parsed with its raw_data cut out (weight_cut.h): its bytes in
  // the mapped file, which `initializer_file` keeps alive. Exporters pack initializers back to back, so most
  // start at arbitrary offsets: the tensors are ViewAnyAlignment, copied only if computed on.
  std::vector<std::optional<std::span<const std::byte>>> initializer_raw;
  std::shared_ptr<const void> initializer_file;
};

Result<Tensor> ExternalTensor(ImportState& st, const onnx::TensorProto& t, DType dt, const Shape& shape) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      const std::string& v = kv.value();
      int64_t x = -1;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
      if (ec != std::errc() || end != v.data() + v.size() || x < 0)
        return Bad(st.path, "initializer '" + t.name() + "' has external data " + kv.key() + " '" + v + "', not a byte count");
      (kv.key() == "offset" ? offset : length) = x;
    }
  }
  std::filesystem::path rel(location);
  if (location.empty() || rel.is_absolute() || rel.lexically_normal().string().starts_with(".."))
    return Bad(st.path, "initializer '" + t.name() + "' has an invalid external data location '" + location + "'");
  std::string full = st.dir + "/" + location;
  auto it = st.external.find(full);
  if (it == st.external.end()) {
    auto f = MappedFile::Open(full);
    if (!f.ok()) return Bad(st.path, "external data for '" + t.name() + "': " + f.status().reason() + " (" + full + ")");
    it = st.external.emplace(full, std::move(f).value()).first;
  }
  auto total = ByteSize(shape, DTypeSize(dt));
  if (!total) return Bad(st.path, "initializer '" + t.name() + "' has a shape " + ShapeToString(shape) + " larger than any file");
  size_t need = *total;
  auto bytes = it->second.bytes();
  if (length >= 0 && static_cast<size_t>(length) != need)
    return Bad(st.path, "external data length of '" + t.name() + "' is " + std::to_string(length) + " bytes, its shape needs " + std::to_string(need));
  if (offset < 0 || static_cast<size_t>(offset) > bytes.size() || bytes.size() - static_cast<size_t>(offset) < need)
    return Bad(st.path, "external data of '" + t.name() + "' lies past the end of " + full);
  return Tensor::ViewAnyAlignment(dt, shape, it->second.share(), bytes.data() + offset);
}

template <class Src, class Dst>
Tensor CopyTyped(DType dt, const Shape& shape, const Src& field) {
  Tensor x = Tensor::Empty(dt, shape);
  Dst* d = x.mutable_data<Dst>();
  for (int i = 0; i < field.size(); ++i) d[i] = static_cast<Dst>(field.Get(i));
  return x;
}

// `held`: the tensor's raw_data in the mapped file, when it was cut out of the parsed model.
Result<Tensor> ConvertTensor(ImportState& st, const onnx::TensorProto& t, std::optional<std::span<const std::byte>> held = std::nullopt) {
  auto dt = FromOnnxType(t.data_type());
  if (!dt) return Status::Error("E16002", "tensor", t.name(), "element type " + std::to_string(t.data_type()) + " is not supported");
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) return Bad(st.path, "tensor '" + t.name() + "' has a negative dim");
  auto total = ByteSize(shape, DTypeSize(*dt));
  if (!total) return Bad(st.path, "tensor '" + t.name() + "' has a shape " + ShapeToString(shape) + " larger than any file");
  const size_t bytes = *total, n = bytes / DTypeSize(*dt);
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return ExternalTensor(st, t, *dt, shape);
  if (held) {
    if (held->size() != bytes)
      return Bad(st.path, "tensor '" + t.name() + "' holds " + std::to_string(held->size()) + " bytes, its shape needs " + std::to_string(bytes));
    return Tensor::ViewAnyAlignment(*dt, shape, st.initializer_file, held->data());
  }
  if (t.has_raw_data()) {
    if (t.raw_data().size() != bytes)
      return Bad(st.path, "tensor '" + t.name() + "' holds " + std::to_string(t.raw_data().size()) + " bytes, its shape needs " + std::to_string(bytes));
    return Tensor::ViewAnyAlignment(*dt, shape, st.model, t.raw_data().data());  // aliases the parsed model
  }
  auto count_ok = [&](int have) { return static_cast<size_t>(have) == n; };
  switch (*dt) {
    case DType::kF32:
      if (!count_ok(t.float_data_size())) break;
      return CopyTyped<decltype(t.float_data()), float>(*dt, shape, t.float_data());
    case DType::kF64:
      if (!count_ok(t.double_data_size())) break;
      return CopyTyped<decltype(t.double_data()), double>(*dt, shape, t.double_data());
    case DType::kI64:
      if (!count_ok(t.int64_data_size())) break;
      return CopyTyped<decltype(t.int64_data()), int64_t>(*dt, shape, t.int64_data());
    case DType::kU64: if (count_ok(t.uint64_data_size())) return CopyTyped<decltype(t.uint64_data()), uint64_t>(*dt, shape, t.uint64_data()); break;
    case DType::kI32: if (count_ok(t.int32_data_size())) return CopyTyped<decltype(t.int32_data()), int32_t>(*dt, shape, t.int32_data()); break;
    case DType::kI16: if (count_ok(t.int32_data_size())) return CopyTyped<decltype(t.int32_data()), int16_t>(*dt, shape, t.int32_data()); break;
    case DType::kI8: if (count_ok(t.int32_data_size())) return CopyTyped<decltype(t.int32_data()), int8_t>(*dt, shape, t.int32_data()); break;
    case DType::kU8:
    case DType::kBool: if (count_ok(t.int32_data_size())) return CopyTyped<decltype(t.int32_data()), uint8_t>(*dt, shape, t.int32_data()); break;
    case DType::kF16:
    case DType::kBF16: if (count_ok(t.int32_data_size())) return CopyTyped<decltype(t.int32_data()), uint16_t>(*dt, shape, t.int32_data()); break;
    default: break;
  }
  return Bad(st.path, "tensor '" + t.name() + "' has " + std::string(n ? "too few or too many" : "unexpected") + " values for shape " + ShapeToString(shape));
}

Result<Attr> ConvertAttr(ImportState& st, const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::INT: return Attr(a.i());
    case A::FLOAT: return Attr(a.f());
    case A::STRING: return Attr(a.s());
    case A::INTS: return Attr(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::FLOATS: return Attr(std::vector<float>(a.floats().begin(), a.floats().end()));
    case A::STRINGS: return Attr(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case A::TENSOR: {
      NPU_ASSIGN_OR_RETURN(Tensor t, ConvertTensor(st, a.t()));
      return Attr(std::move(t));
    }
    default: return Status::Error("E16002", "attribute", a.name(), "attribute kind " + std::to_string(a.type()) + " (graphs, sparse tensors) is not supported");
  }
}

// The model parsed without copying its weights (weight_cut.h); false leaves the state as it was, for
// ParseModel to parse the file whole (and name what is wrong with it).
bool ParseCut(ImportState& st, const MappedFile& file) {
  auto cut = CutInitializerData(file.bytes());
  if (!cut) return false;
  auto model = std::make_shared<onnx::ModelProto>();
  if (!model->ParseFromString(cut->bytes) || !model->has_graph() || static_cast<size_t>(model->graph().initializer_size()) != cut->raw.size())
    return false;
  st.initializer_raw = std::move(cut->raw);
  st.initializer_file = file.share();
  st.model = std::move(model);
  return true;
}

Result<std::shared_ptr<onnx::ModelProto>> ParseModel(const std::string& path, const MappedFile& file) {
  auto bytes = file.bytes();
  if (bytes.empty()) return Bad(path, "the file is empty");
  auto model = std::make_shared<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(std::min<size_t>(bytes.size(), INT_MAX)));
  in.SetTotalBytesLimit(INT_MAX);
  if (bytes.size() > INT_MAX) return Bad(path, "the protobuf part is larger than 2 GB; export with external data");
  if (!model->ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
    return Bad(path, "not a valid ONNX protobuf (truncated, corrupt or another format)");
  if (!model->has_graph()) return Status::Error("E16004", "--model", path, "the model has no graph");
  return model;
}

// libonnx's checker is stricter than exporters in the wild (it rejects, say, a graph input without a shape,
// which runtimes accept), so its finding is not a verdict: it is added to the reason when the import fails,
// where it often names the real mistake.
std::string CheckerFinding(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (size_t ctx = why.find("\n\n==> Context:"); ctx != std::string::npos) why.resize(ctx);
    return why;
  }
  return {};
}

Status ApplyInputShapes(Graph& g, const ImportOptions& opts) {
  std::string names;
  for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
  for (const auto& [name, shape] : opts.input_shapes) {
    int id = g.FindValue(name);
    bool is_input = std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end();
    if (!is_input)
      return Status::Error("E10016", "--input_shape", name, "input '" + name + "' is not found in the model; the model's inputs are: " + names);
    Value& v = g.values[id];
    if (v.has_shape && v.shape.size() != shape.size())
      return Status::Error("E10002", "--input_shape", name + ":" + ShapeToString(shape),
                           "the model's input has rank " + std::to_string(v.shape.size()) + " (" + ShapeToString(v.shape) + ")");
    v.shape = shape;
    v.has_shape = true;
  }
  return Status::Ok();
}

Status SelectOutputs(Graph& g, const onnx::GraphProto& gp, const ImportOptions& opts) {
  if (opts.out_nodes.empty()) {
    for (const auto& o : gp.output()) {
      int id = g.FindValue(o.name());
      if (id < 0) return Status::Error("E16005", "output", o.name(), "graph output is not produced by any node");
      g.outputs.push_back(id);
    }
    return Status::Ok();
  }
  for (const auto& [node, idx] : opts.out_nodes) {
    auto it = std::find_if(g.nodes.begin(), g.nodes.end(), [&name = node](const Node& n) { return n.name == name; });
    if (it == g.nodes.end())
      return Status::Error("E10016", "--out_nodes", node, "node '" + node + "' is not found in the model");
    if (idx < 0 || idx >= static_cast<int>(it->outputs.size()))
      return Status::Error("E10001", "--out_nodes", node + ":" + std::to_string(idx),
                           "the node has " + std::to_string(it->outputs.size()) + " outputs");
    g.outputs.push_back(it->outputs[idx]);
  }
  return Status::Ok();
}

// Caffe2's int8 ops, as CANN's ONNX parser plugins map them (reference/int8.md §1.3), so that a model quantized
// that way converts as it does with ATC:
// - Int8Quantize -> AscendQuant: scale = Y_scale as given (used as the multiplier), offset = Y_zero_point, round
//   mode Round, no sqrt_mode;
// - Int8Dequantize -> AscendAntiQuant to fp16: scale = the attribute whose name holds "scale", offset = the one
//   holding "zero_point", as is (so y = (x + zero_point) * scale, as the plugin builds it); the plugin's 1x1
//   stride-1 MaxPool after it is an identity and is left out.
std::string_view NpuOpType(std::string_view onnx_type) {
  if (onnx_type == "Int8Quantize") return "AscendQuant";
  if (onnx_type == "Int8Dequantize") return "AscendAntiQuant";
  return onnx_type;
}

void TranslateCaffe2Int8(Node& n) {
  AttrMap in = std::move(n.attrs);
  n.attrs.clear();
  auto find = [&](std::string_view part) -> const Attr* {
    for (const auto& [k, v] : in)
      if (k.find(part) != std::string::npos) return &v;
    return nullptr;
  };
  const float* scale = nullptr;
  const int64_t* zero = nullptr;
  if (n.op_type == "AscendQuant") {
    auto s = in.find("Y_scale"), z = in.find("Y_zero_point");
    scale = s != in.end() ? std::get_if<float>(&s->second) : nullptr;
    zero = z != in.end() ? std::get_if<int64_t>(&z->second) : nullptr;
    n.attrs = {{"round_mode", std::string("Round")}, {"sqrt_mode", int64_t{0}}, {"dst_type", std::string("INT8")}};
  } else {
    if (const Attr* s = find("scale")) scale = std::get_if<float>(s);
    if (const Attr* z = find("zero_point")) zero = std::get_if<int64_t>(z);
    n.attrs = {{"dtype", int64_t{1}}};  // fp16, GE's DT_FLOAT16
  }
  n.attrs["scale"] = scale ? *scale : 0.0f;  // absent: 0, which the op's schema refuses with its own error
  n.attrs["offset"] = zero ? static_cast<float>(*zero) : 0.0f;
}

// Arity and registry checks; every failure is collected rather than stopping at the first.
void CheckNode(const onnx::NodeProto& np, const std::string& name, int64_t opset, std::vector<UnsupportedNode>& bad) {
  std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
  const OpSchema* s = domain.empty() ? OpSchemaRegistry::Get().Find(NpuOpType(np.op_type())) : nullptr;
  auto add = [&](std::string why) { bad.push_back({name, np.op_type(), domain.empty() ? "ai.onnx" : domain, opset, std::move(why)}); };
  if (!s) return add(domain.empty() ? "no parser/kernel is registered for this op type" : "custom domain is not supported");
  if (np.input_size() < s->min_inputs || np.input_size() > s->max_inputs)
    return add("has " + std::to_string(np.input_size()) + " inputs, expected " + std::to_string(s->min_inputs) + ".." + std::to_string(s->max_inputs));
  if (np.output_size() < s->min_outputs || np.output_size() > s->max_outputs)
    return add("has " + std::to_string(np.output_size()) + " outputs, expected " + std::to_string(s->min_outputs) + ".." + std::to_string(s->max_outputs));
  for (const auto& a : np.attribute())
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS)
      return add("subgraph attribute '" + a.name() + "' (control flow) is not supported");
}

// ONNX strings are UTF-8; a name that is not (a corrupt file) would make an .om whose protobuf cannot be read back.
Status CheckNamesAreUtf8(const Graph& g, const std::string& path) {
  auto bad = [&](const char* what, const std::string& name) {
    return Status::Error("E16005", "--model", path, std::string(what) + " name '" + EscapeNonUtf8(name) + "' is not valid UTF-8",
                         "The file is corrupt or was not written by an ONNX exporter; export the model again.");
  };
  for (const Node& n : g.nodes)
    if (!IsUtf8(n.name)) return bad("node", n.name);
  for (const Value& v : g.values)
    if (!IsUtf8(v.name)) return bad("tensor", v.name);
  return Status::Ok();
}

Result<Graph> ImportParsed(ImportState& st, const ImportOptions& opts, ModelInfo* info) {
  const std::string& path = st.path;
  const onnx::ModelProto& m = *st.model;
  const onnx::GraphProto& gp = m.graph();
  info->producer = m.producer_name() + " " + m.producer_version();
  std::map<std::string, int64_t> opsets;
  for (const auto& o : m.opset_import()) opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  info->opset = opsets.count("") ? opsets[""] : 0;
  if (info->opset < kMinOpset || info->opset > kMaxOpset)
    return Status::Error("E10055", "opset", std::to_string(info->opset),
                         "supported ONNX opsets are " + std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset),
                         "Export the model with an opset in that range (torch.onnx.export(..., opset_version=13)).");
  if (info->opset < kTestedMinOpset)
    NPU_LOG(kWarning, "ONNX", path << ": opset " << info->opset << " is older than the tested range " << kTestedMinOpset << "-" << kMaxOpset);

  Graph g;
  g.name = gp.name().empty() ? "graph" : gp.name();
  for (int k = 0; k < gp.initializer_size(); ++k) {
    const onnx::TensorProto& t = gp.initializer(k);
    auto tensor = ConvertTensor(st, t, st.initializer_raw.empty() ? std::nullopt : st.initializer_raw[static_cast<size_t>(k)]);
    if (!tensor.ok()) return tensor.status();
    int id = g.AddValue(t.name());
    g.values[id].dtype = tensor.value().dtype();
    g.values[id].shape = tensor.value().shape();
    g.values[id].has_shape = true;
    g.values[id].constant = std::move(tensor).value();
  }
  for (const auto& in : gp.input()) {
    int id = g.AddValue(in.name());
    if (g.values[id].constant) continue;  // an initializer listed as input (old exporters): a constant
    const auto& tt = in.type().tensor_type();
    auto dt = FromOnnxType(tt.elem_type());
    if (!dt) return Status::Error("E16002", "input", in.name(), "input element type " + std::to_string(tt.elem_type()) + " is not supported");
    Value& v = g.values[id];
    v.dtype = *dt;
    v.has_shape = tt.has_shape();
    for (const auto& d : tt.shape().dim()) v.shape.push_back(d.has_dim_value() ? d.dim_value() : -1);
    g.inputs.push_back(id);
  }
  NPU_RETURN_IF_ERROR(ApplyInputShapes(g, opts));
  for (int i : g.inputs)
    if (std::string why = ShapeLimitProblem(g.values[i].shape); !why.empty())
      return Status::Error("E16005", "input", EscapeNonUtf8(g.values[i].name), "the input's shape " + ShapeToString(g.values[i].shape) + ": " + why,
                           "Give the input a real shape with --input_shape, or export the model again.");

  int index = 0;
  for (const auto& np : gp.node()) {
    std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
    int64_t opset = opsets.count(domain) ? opsets[domain] : 0;
    std::string name = np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
    ++index;
    CheckNode(np, name, opset, info->unsupported);
    info->nodes.emplace_back(name, np.op_type());
    Node n;
    n.name = name;
    n.op_type = NpuOpType(np.op_type());
    n.domain = domain;
    n.opset = static_cast<int>(opset);
    n.original_names = {name};
    for (const auto& a : np.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS) continue;
      auto attr = ConvertAttr(st, a);
      if (!attr.ok()) {
        info->unsupported.push_back({name, np.op_type(), domain.empty() ? "ai.onnx" : domain, opset, attr.status().reason()});
        continue;
      }
      n.attrs.emplace(a.name(), std::move(attr).value());
    }
    if (n.op_type != np.op_type()) TranslateCaffe2Int8(n);
    if (n.op_type == "Cast") {  // the IR stores Cast targets as npu DType values
      auto to = FromOnnxType(static_cast<int32_t>(n.attr_int("to", 0)));
      if (!to) info->unsupported.push_back({name, "Cast", "ai.onnx", opset, "target element type is not supported"});
      else n.attrs["to"] = static_cast<int64_t>(*to);
    }
    for (const auto& i : np.input()) {
      if (i.empty()) {
        n.inputs.push_back(-1);
        continue;
      }
      int id = g.FindValue(i);
      if (id < 0) return Status::Error("E16005", "node", name, "input '" + i + "' is not produced by any earlier node, initializer or graph input");
      n.inputs.push_back(id);
    }
    for (const auto& o : np.output()) {
      int id = g.AddValue(o.empty() ? name + ":unused" + std::to_string(n.outputs.size()) : o);
      g.values[id].producer = static_cast<int>(g.nodes.size());
      n.outputs.push_back(id);
    }
    g.nodes.push_back(std::move(n));
  }
  if (!info->unsupported.empty()) {
    std::string list;
    for (const auto& u : info->unsupported)
      list += "\n    " + u.name + " (type " + u.op_type + ", domain " + u.domain + ", opset " + std::to_string(u.opset) + "): " + u.reason;
    return Status::Error("E16002", "--model", path,
                         std::to_string(info->unsupported.size()) + " node(s) are not supported:" + list,
                         "Replace these operators in the model or export it with another opset; atc --mode=3 writes the full report.");
  }
  NPU_RETURN_IF_ERROR(CheckNamesAreUtf8(g, path));
  NPU_RETURN_IF_ERROR(SelectOutputs(g, gp, opts));
  NPU_RETURN_IF_ERROR(g.Verify());
  NPU_LOG(kInfo, "ONNX", "imported " << path << ": opset " << info->opset << ", " << g.nodes.size() << " nodes, "
                                     << gp.initializer_size() << " initializers");
  return g;
}

}  // namespace

Result<Graph> ImportOnnx(const std::string& path, const ImportOptions& opts, ModelInfo* info) {
  RegisterBuiltinSchemas();  // every node is checked against its op's schema
  ModelInfo local;
  if (!info) info = &local;
  auto file = MappedFile::Open(path);
  if (!file.ok()) return Status::Error("E10041", "--model", path, file.status().reason(), "Check the --model path.");
  ImportState st;
  st.path = path;
  st.dir = std::filesystem::path(path).parent_path().string();
  if (st.dir.empty()) st.dir = ".";
  auto start = std::chrono::steady_clock::now();
  if (!ParseCut(st, file.value())) {
    NPU_ASSIGN_OR_RETURN(st.model, ParseModel(path, file.value()));
  }
  auto g = ImportParsed(st, opts, info);
  NPU_LOG(kDebug, "ONNX", "parsed and imported in " << log::MsSince(start) << " ms");
  if (g.ok()) return g;
  // Only on failure: it costs ~20 ms on a ResNet-50. The checker wants the initializers' data in place.
  std::shared_ptr<onnx::ModelProto> whole = st.model;
  if (!st.initializer_raw.empty())
    if (auto full = ParseModel(path, file.value()); full.ok()) whole = full.value();
  std::string finding = CheckerFinding(*whole);
  return finding.empty() ? g : Result<Graph>(Status(g.status()).with_note("the ONNX checker also reports: " + finding));
}

const Importer& OnnxImporter() {
  struct Onnx final : Importer {
    std::string_view name() const override { return "ONNX"; }
    std::vector<std::string_view> input_formats() const override { return {"NCHW", "ND", "NCDHW"}; }
    bool input_format_fits_all() const override { return true; }
    Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const override { return ImportOnnx(path, opts, info); }
  };
  static const Onnx importer;
  return importer;
}

Result<Tensor> ReadOnnxTensor(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(path));
  ImportState st;
  st.path = path;
  st.dir = std::filesystem::path(path).parent_path().string();
  auto holder = std::make_shared<onnx::TensorProto>();
  if (!holder->ParseFromArray(f.bytes().data(), static_cast<int>(f.bytes().size())))
    return Status::Error("EH0001", "tensor", path, "not a serialized ONNX TensorProto");
  st.model = std::shared_ptr<onnx::ModelProto>(holder, nullptr);  // aliasing owner: keeps the tensor's bytes alive
  return ConvertTensor(st, *holder);
}

}  // namespace npu
