// CANN's single-op JSON (atc --singleop, aoe --singleop): a list of {"op", "input_desc": [{format, shape,
// type}], "output_desc": [...], "attr": [{name, type, value}]}, each op a graph of its own with inputs x0,
// x1, ... and outputs y0, ... Every field is type-checked and every op checked against its schema (arity,
// then inference) before anything is built from it; errors name the op and the field.
#include "frontend/singleop/singleop_json.h"

#include <algorithm>
#include <optional>

#include "base/file_io.h"
#include "base/json.h"
#include "ir/ascend_types.h"
#include "ir/graph_edit.h"
#include "ir/op_schema.h"
#include "ops/schemas.h"

namespace npu {
namespace {

using json = nlohmann::json;

Status Bad(const std::string& code, const std::string& path, const std::string& where, const std::string& why, std::string fix = {}) {
  return Status::Error(code, "--singleop", path, where + ": " + why,
                       fix.empty() ? "Describe each op as {\"op\", \"input_desc\", \"output_desc\", \"attr\"} (see docs/atc.md, --singleop)." : std::move(fix));
}

// CANN's dtype spellings in single-op JSON.
std::optional<DType> SingleOpDType(const std::string& s) {
  if (s == "float" || s == "float32") return DType::kF32;
  if (s == "float16" || s == "half") return DType::kF16;
  if (s == "bfloat16") return DType::kBF16;
  if (s == "double") return DType::kF64;
  return DTypeFromName(s);
}

// obj[key] as a string: `def` when absent, an error naming the field when it is not a string.
Result<std::string> StringField(const json& obj, const char* key, std::string def, const std::string& path, const std::string& where,
                                const char* code) {
  auto it = obj.find(key);
  if (it == obj.end()) return def;
  if (!it->is_string()) return Bad(code, path, where, std::string("\"") + key + "\" must be a string, not " + DumpJson(*it));
  return it->get<std::string>();
}

// obj[key] as a list: empty when absent, an error naming the field when it is not a list.
Result<json> ListField(const json& obj, const char* key, const std::string& path, const std::string& where, const char* code) {
  auto it = obj.find(key);
  if (it == obj.end()) return json::array();
  if (!it->is_array()) return Bad(code, path, where, std::string("\"") + key + "\" must be a list, not " + DumpJson(*it));
  return *it;
}

struct TensorSpec {
  DType dtype;
  Shape shape;
  std::string format;
};

Result<TensorSpec> ReadDesc(const json& d, const std::string& path, const std::string& where) {
  if (!d.is_object() || !d.contains("shape") || !d.contains("type"))
    return Bad("E10026", path, where, "needs \"shape\" and \"type\"");
  TensorSpec t;
  auto dt = d["type"].is_string() ? SingleOpDType(d["type"].get<std::string>()) : std::nullopt;
  if (!dt) return Bad("E10026", path, where, "type " + DumpJson(d["type"]) + " is not a dtype (float16, float, int32, ...)");
  t.dtype = *dt;
  if (!d["shape"].is_array()) return Bad("E10026", path, where, "shape must be a list of dims");
  for (const auto& x : d["shape"]) {
    if (!x.is_number_integer() || x.get<int64_t>() <= 0) return Bad("E10026", path, where, "shape " + DumpJson(d["shape"]) + " needs positive integer dims");
    t.shape.push_back(x.get<int64_t>());
  }
  if (std::string why = ShapeLimitProblem(t.shape); !why.empty()) return Bad("E10026", path, where, "shape " + DumpJson(d["shape"]) + ": " + why);
  NPU_ASSIGN_OR_RETURN(t.format, StringField(d, "format", "ND", path, where, "E10026"));
  if (!FormatFromName(t.format)) return Bad("E10026", path, where, "format '" + t.format + "' is not one of NCHW, NHWC, ND");
  return t;
}

Result<Attr> ReadAttr(const json& a, const std::string& path, const std::string& where) {
  const json& v = a["value"];
  NPU_ASSIGN_OR_RETURN(std::string type, StringField(a, "type", "", path, where, "E10027"));
  if (type == "int" && v.is_number_integer()) return Attr(v.get<int64_t>());
  if (type == "bool" && v.is_boolean()) return Attr(static_cast<int64_t>(v.get<bool>()));
  if (type == "float" && v.is_number()) return Attr(v.get<float>());
  if (type == "str" && v.is_string()) return Attr(v.get<std::string>());
  if (type == "list_int" && v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number_integer(); }))
    return Attr(v.get<std::vector<int64_t>>());
  if (type == "list_float" && v.is_array() && std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); }))
    return Attr(v.get<std::vector<float>>());
  return Bad("E10027", path, where, "type '" + type + "' with value " + DumpJson(v) + " is not an attr this build reads (int, bool, float, str, list_int, list_float)");
}

// The attribute `k` of `m` when it holds a T (absent or of another type: null). Never inserts.
template <class T>
const T* Find(const AttrMap& m, std::string_view k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : std::get_if<T>(&it->second);
}

// CANN's attributes -> the framework kernel's, for the ops whose spelling differs.
Status TranslateAttrs(Node& n, const std::string& path, const std::string& where) {
  AttrMap in = std::move(n.attrs);
  n.attrs.clear();
  auto hw = [](const std::vector<int64_t>& v) { return v.size() == 4 ? std::vector<int64_t>{v[2], v[3]} : v; };
  if (n.ascend_type == "Conv2D") {  // NCHW 4-element strides/dilations, pads top,bottom,left,right
    if (auto* f = Find<std::string>(in, "data_format"); f && *f != "NCHW")
      return Bad("E10027", path, where, "data_format must be NCHW");
    if (auto* s = Find<std::vector<int64_t>>(in, "strides")) n.attrs["strides"] = hw(*s);
    if (auto* d = Find<std::vector<int64_t>>(in, "dilations")) n.attrs["dilations"] = hw(*d);
    if (auto* p = Find<std::vector<int64_t>>(in, "pads"); p && p->size() == 4)
      n.attrs["pads"] = std::vector<int64_t>{(*p)[0], (*p)[2], (*p)[1], (*p)[3]};
    if (auto* g = Find<int64_t>(in, "groups")) n.attrs["group"] = *g;
    return Status::Ok();
  }
  if (n.ascend_type == "MatMulV2") {  // Gemm: transA/transB, the bias as C
    if (auto* t = Find<int64_t>(in, "transpose_x1")) n.attrs["transA"] = *t;
    if (auto* t = Find<int64_t>(in, "transpose_x2")) n.attrs["transB"] = *t;
    return Status::Ok();
  }
  if (n.ascend_type == "BatchMatMulV2") {
    for (const char* k : {"adj_x1", "adj_x2"})
      if (auto* t = Find<int64_t>(in, k); t && *t) return Bad("E10027", path, where, std::string(k) + " = true is not supported");
    return Status::Ok();
  }
  n.attrs = std::move(in);  // same names as the framework op
  return Status::Ok();
}

// Appends one op description to `g` (its inputs become graph inputs, its outputs graph outputs; names made
// unique), inferred and checked against output_desc.
Status AddOp(Graph& g, const json& op, const std::string& path, size_t index) {
  std::string where = "op #" + std::to_string(index);
  if (!op.is_object() || !op.contains("op") || !op["op"].is_string()) return Bad("E10025", path, where, "needs \"op\": the Ascend IR op type");
  Node n;
  n.ascend_type = op["op"].get<std::string>();
  n.op_type = FrameworkOpType(n.ascend_type);
  NPU_ASSIGN_OR_RETURN(std::string name, StringField(op, "name", n.ascend_type, path, where, "E10025"));
  n.name = UniqueNodeName(g, name);
  n.original_names = {n.name};
  n.opset = 13;
  where += " (" + n.ascend_type + ")";
  const OpSchema* schema = OpSchemaRegistry::Get().Find(n.op_type);  // a schema is registered with its kernel
  if (!schema)
    return Bad("E10025", path, where, "op type is not supported by this build", "Use an Ascend IR type npukit has a kernel for (Add, Conv2D, MatMulV2, ...).");
  if (g.name.empty()) g.name = n.name;
  NPU_ASSIGN_OR_RETURN(json ins, ListField(op, "input_desc", path, where, "E10026"));
  for (size_t i = 0; i < ins.size(); ++i) {
    std::string at = where + " input_desc[" + std::to_string(i) + "]";
    NPU_ASSIGN_OR_RETURN(TensorSpec t, ReadDesc(ins[i], path, at));
    NPU_ASSIGN_OR_RETURN(std::string in_name, StringField(ins[i], "name", "x" + std::to_string(i), path, at, "E10026"));
    int v = g.AddValue(UniqueValueName(g, in_name));
    g.values[v].dtype = t.dtype, g.values[v].shape = t.shape, g.values[v].has_shape = true, g.values[v].layout = t.format;
    g.inputs.push_back(v);
    n.inputs.push_back(v);
  }
  NPU_ASSIGN_OR_RETURN(json outs, ListField(op, "output_desc", path, where, "E10026"));
  if (outs.empty()) return Bad("E10026", path, where, "output_desc is empty");
  std::vector<TensorSpec> want;
  for (size_t j = 0; j < outs.size(); ++j) {
    std::string at = where + " output_desc[" + std::to_string(j) + "]";
    NPU_ASSIGN_OR_RETURN(TensorSpec t, ReadDesc(outs[j], path, at));
    want.push_back(t);
    NPU_ASSIGN_OR_RETURN(std::string out_name, StringField(outs[j], "name", "y" + std::to_string(j), path, at, "E10026"));
    int v = g.AddValue(UniqueValueName(g, out_name));
    n.outputs.push_back(v);
    g.outputs.push_back(v);
  }
  NPU_ASSIGN_OR_RETURN(json attrs, ListField(op, "attr", path, where, "E10027"));
  for (const json& a : attrs) {
    if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("value"))
      return Bad("E10027", path, where, "every attr needs a string name, a type and a value, not " + DumpJson(a));
    NPU_ASSIGN_OR_RETURN(n.attrs[a["name"].get<std::string>()], ReadAttr(a, path, where + " attr " + DumpJson(a["name"])));
  }
  NPU_RETURN_IF_ERROR(TranslateAttrs(n, path, where));
  // The schema's arity before any inference: a Conv2D with one input_desc is refused here, not in InferConv.
  if (std::string why = ArityProblem(*schema, g, n); !why.empty()) return Bad("E10026", path, where, why);
  std::vector<int> outputs = n.outputs;
  AppendNode(g, std::move(n));
  if (Status s = InferGraph(g); !s.ok()) return Bad("E10026", path, where, s.message());
  for (size_t j = 0; j < want.size(); ++j) {
    Value& y = g.values[outputs[j]];
    if (y.dtype != want[j].dtype || y.shape != want[j].shape)
      return Bad("E10026", path, where + " output_desc[" + std::to_string(j) + "]",
                 "declares " + std::string(DTypeName(want[j].dtype)) + ShapeToString(want[j].shape) + ", the op gives " +
                     std::string(DTypeName(y.dtype)) + ShapeToString(y.shape));
    y.layout = want[j].format;
  }
  return Status::Ok();
}

// The file's op descriptions (one object or a list).
Result<json> ReadOpList(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return Status::Error("E10023", "--singleop", path, text.status().message());
  std::string why;
  json ops = npu::ParseJson(text.value(), &why);
  if (ops.is_discarded()) return Status::Error("E10024", "--singleop", path, "the file is not valid JSON: " + why);
  if (ops.is_object()) ops = json::array({ops});
  if (!ops.is_array() || ops.empty()) return Status::Error("E10024", "--singleop", path, "expected a list of op descriptions");
  return ops;
}


// "0_Add_float16_ND_8x16_float16_ND_8x16_float16_ND_8x16": the op's index, type and every tensor.
std::string ModelName(size_t index, const Graph& g) {
  std::string name = std::to_string(index) + "_" + g.nodes[0].ascend_type;
  auto add = [&](int v) {
    const Value& x = g.values[v];
    std::string dims;
    for (int64_t d : x.shape) dims += (dims.empty() ? "" : "x") + std::to_string(d);
    name += "_" + std::string(DTypeName(x.dtype)) + "_" + LayoutOf(x) + "_" + dims;
  };
  for (int v : g.inputs) add(v);
  for (int v : g.outputs) add(v);
  return name;
}

}  // namespace

Result<std::vector<SingleOp>> ImportSingleOps(const std::string& path) {
  RegisterBuiltinSchemas();
  NPU_ASSIGN_OR_RETURN(json ops, ReadOpList(path));
  std::vector<SingleOp> out;
  for (size_t k = 0; k < ops.size(); ++k) {
    SingleOp one;
    NPU_RETURN_IF_ERROR(AddOp(one.graph, ops[k], path, k));
    one.name = ModelName(k, one.graph);
    out.push_back(std::move(one));
  }
  return out;
}

Result<Graph> ImportSingleOpsAsOneGraph(const std::string& path) {
  RegisterBuiltinSchemas();
  NPU_ASSIGN_OR_RETURN(json ops, ReadOpList(path));
  Graph g;
  for (size_t k = 0; k < ops.size(); ++k) NPU_RETURN_IF_ERROR(AddOp(g, ops[k], path, k));
  return g;
}

}  // namespace npu
