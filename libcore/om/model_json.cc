#include "om/model_json.h"

#include <algorithm>
#include <numeric>

#include "base/file_io.h"
#include "base/json.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

using json = nlohmann::json;
constexpr size_t kMaxTensorAttrBytes = size_t{1} << 20;  // tensor attrs are small constants (fill values, ...)
// The ops GE adds around a graph: its inputs, its weights and the op that collects its outputs.
constexpr const char* kGeData = "Data";
constexpr const char* kGeConst = "Const";
constexpr const char* kGeConstant = "Constant";  // older GE's spelling
constexpr const char* kGeNetOutput = "NetOutput";

OrderedJson DescJson(const Value& v) {
  OrderedJson d = {{"name", v.name}, {"dtype", DTypeName(v.dtype)}, {"layout", FormatName(DeviceFormat(v))}};
  d["shape"] = {{"dim", v.has_shape ? DeviceShapeOf(v) : Shape{}}};
  d["attr"] = OrderedJson::array({{{"key", "origin_shape"}, {"value", {{"list", {{"i", v.shape}}}}}},
                                  {{"key", "origin_format"}, {"value", {{"s", LayoutOf(v)}}}}});
  if (v.device_groups > 1) d["attr"].push_back({{"key", "sub_format"}, {"value", {{"i", v.device_groups}}}});
  return d;
}

}  // namespace

OrderedJson AttrToJson(const Attr& a) {
  return std::visit(
      [](const auto& v) -> OrderedJson {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) return {{"i", v}};
        else if constexpr (std::is_same_v<T, float>) return {{"f", v}};
        else if constexpr (std::is_same_v<T, std::string>) return {{"s", v}};
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) return {{"list", {{"i", v}}}};
        else if constexpr (std::is_same_v<T, std::vector<float>>) return {{"list", {{"f", v}}}};
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) return {{"list", {{"s", v}}}};
        else return {{"t", {{"dtype", DTypeName(v.dtype())}, {"shape", v.shape()}}}};
      },
      a);
}

namespace {

// ---- reading ---------------------------------------------------------------------------------------

template <class T>
std::optional<std::vector<T>> ListOf(const json& a) {
  if (!a.is_array()) return std::nullopt;
  std::vector<T> out;
  for (const json& x : a) {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!x.is_string()) return std::nullopt;
    } else if constexpr (std::is_same_v<T, int64_t>) {
      if (!x.is_number_integer()) return std::nullopt;
    } else if (!x.is_number()) {
      return std::nullopt;
    }
    out.push_back(x.get<T>());
  }
  return out;
}

// An attr value of a kind this build models; nullopt for the others (CANN's files have more kinds).
std::optional<Attr> ReadAttr(const json& v) {
  if (!v.is_object()) return std::nullopt;
  if (auto i = v.find("i"); i != v.end() && i->is_number_integer()) return Attr(i->get<int64_t>());
  if (auto f = v.find("f"); f != v.end() && f->is_number()) return Attr(f->get<float>());
  if (auto f = v.find("f"); f != v.end() && f->is_string()) {  // ATC prints a float attr as "%g" text
    const std::string& text = f->get_ref<const std::string&>();
    char* end = nullptr;
    float x = std::strtof(text.c_str(), &end);
    if (!text.empty() && *end == '\0') return Attr(x);
  }
  if (auto s = v.find("s"); s != v.end() && s->is_string()) return Attr(s->get<std::string>());
  if (auto l = v.find("list"); l != v.end() && l->is_object()) {
    if (l->contains("i"))
      if (auto x = ListOf<int64_t>((*l)["i"])) return Attr(*x);
    if (l->contains("f"))
      if (auto x = ListOf<float>((*l)["f"])) return Attr(*x);
    if (l->contains("s"))
      if (auto x = ListOf<std::string>((*l)["s"])) return Attr(*x);
  }
  if (auto t = v.find("t"); t != v.end() && t->is_object()) {
    // npukit's framework JSON gives {dtype, shape}; ATC's gives the TensorDef's {desc: {dtype, shape: {dim}}}.
    const json& d = t->contains("desc") && (*t)["desc"].is_object() ? (*t)["desc"] : *t;
    if (!d.contains("dtype") || !d["dtype"].is_string()) return std::nullopt;
    auto dt = DTypeFromName(d["dtype"].get<std::string>());
    const json dims = d.contains("shape") && d["shape"].is_object() ? d["shape"].value("dim", json::array()) : d.value("shape", json());
    auto shape = ListOf<int64_t>(dims);
    auto bytes = shape && dt ? ByteSize(*shape, DTypeSize(*dt)) : std::nullopt;
    if (bytes && *bytes <= kMaxTensorAttrBytes) return Attr(Tensor::Zeros(*dt, *shape));
  }
  return std::nullopt;
}

const json* AttrValue(const json& attrs, std::string_view key) {
  if (!attrs.is_array()) return nullptr;
  for (const json& a : attrs)
    if (a.is_object() && a.contains("key") && a["key"] == key && a.contains("value")) return &a["value"];
  return nullptr;
}

// What a tensor desc says, as much of it as is there.
void ReadDesc(const json& d, Value& v) {
  if (!d.is_object()) return;
  if (d.contains("dtype") && d["dtype"].is_string())
    if (auto t = DTypeFromName(d["dtype"].get<std::string>())) v.dtype = *t;
  const json attrs = d.value("attr", json::array());
  if (const json* s = AttrValue(attrs, "origin_shape"); s && s->contains("list"))
    if (auto dims = ListOf<int64_t>((*s)["list"].value("i", json::array()))) v.shape = *dims, v.has_shape = true;
  if (const json* f = AttrValue(attrs, "origin_format"); f && f->contains("s") && (*f)["s"].is_string()) v.layout = (*f)["s"];
  if (const json* g = AttrValue(attrs, "sub_format"); g && g->contains("i") && (*g)["i"].is_number_integer())
    v.device_groups = std::max<int64_t>(1, (*g)["i"].get<int64_t>());
  if (d.contains("layout") && d["layout"].is_string())
    if (auto f = FormatFromName(d["layout"].get<std::string>()); f && *f != OriginFormat(v)) v.device_format = *f;
}

class Reader {
 public:
  explicit Reader(ModelJson& m) : m_(m), g_(m.graph) {}

  Status Read(const json& j) {
    if (!j.is_object() || !j.contains("graph") || !j["graph"].is_array() || j["graph"].empty() || !j["graph"][0].is_object())
      return Bad("no \"graph\" array");
    for (const json& a : j.value("attr", json::array()))
      if (a.is_object() && a.contains("key") && a["key"].is_string() && a.contains("value") && a["value"].contains("s") &&
          a["value"]["s"].is_string())
        m_.attrs[a["key"]] = a["value"]["s"];
    const json& gj = j["graph"][0];
    g_.name = gj.value("name", j.value("name", ""));
    for (const json& d : gj.value("input", json::array())) {
      if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) return Bad("graph[0].input holds a desc without a name");
      int v = g_.AddValue(d["name"]);
      ReadDesc(d, g_.values[v]);
      g_.inputs.push_back(v);
    }
    NPU_RETURN_IF_ERROR(ReadOps(gj.value("op", json::array())));
    for (const json& r : gj.value("output", json::array()))
      if (r.is_string()) g_.outputs.push_back(Resolve(r, nullptr));
    return Status::Ok();
  }

 private:
  Status Bad(const std::string& why) const { return Status::Error("EC0012", "model JSON", "", why); }

  Status ReadOps(const json& ops) {
    if (!ops.is_array()) return Bad("graph[0].op is not an array");
    std::vector<size_t> order(ops.size());
    std::vector<int64_t> ids(ops.size());
    for (size_t k = 0; k < ops.size(); ++k)
      ids[k] = ops[k].is_object() && ops[k].contains("id") && ops[k]["id"].is_number_integer() ? ops[k]["id"].get<int64_t>() : int64_t(k);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ids[a] < ids[b]; });
    for (size_t k : order) {
      NPU_RETURN_IF_ERROR(ReadOp(ops[k], "graph[0].op[" + std::to_string(k) + "]"));
      m_.ids.push_back(ids[k]);
    }
    return Status::Ok();
  }

  Status ReadOp(const json& o, const std::string& where) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string()) return Bad(where + " has no string \"name\"");
    Node n;
    n.name = o["name"];
    n.op_type = n.ascend_type = o.contains("type") && o["type"].is_string() ? o["type"].get<std::string>() : "";
    if (n.op_type == kGeData || n.op_type == kGeConst || n.op_type == kGeConstant) return ReadValueOp(o, n.name, where);
    if (n.op_type == kGeNetOutput) {
      const json inputs = o.value("input", json::array()), descs = o.value("input_desc", json::array());
      size_t desc = 0;
      for (const json& r : inputs)
        if (r.is_string() && !IsControl(r)) g_.outputs.push_back(Resolve(r, descs.is_array() && desc < descs.size() ? &descs[desc++] : nullptr));
      return Status::Ok();
    }
    if (value_ops_.count(n.name) || !by_name_.emplace(n.name, g_.nodes.size()).second) return Bad("op name " + n.name + " appears twice");
    for (const json& a : o.value("attr", json::array())) {
      if (!a.is_object() || !a.contains("key") || !a["key"].is_string()) continue;
      const std::string key = a["key"];
      const json value = a.value("value", json::object());
      if (key == kOriginalNamesAttr) {
        if (value.contains("list"))
          if (auto names = ListOf<std::string>(value["list"].value("s", json::array()))) n.original_names = *names;
      } else if (auto attr = ReadAttr(value)) {
        n.attrs[key] = std::move(*attr);
      }
    }
    const json inputs = o.value("input", json::array()), in_descs = o.value("input_desc", json::array());
    if (!inputs.is_array()) return Bad(where + ".input is not an array");
    size_t desc = 0;
    for (const json& r : inputs) {
      if (!r.is_string()) return Bad(where + ".input holds a non-string");
      if (IsControl(r)) continue;  // "op:-1" orders, it carries no tensor
      const json* d = r != "" && in_descs.is_array() && desc < in_descs.size() ? &in_descs[desc++] : nullptr;
      n.inputs.push_back(Resolve(r, d));
    }
    const json outs = o.value("output_desc", json::array());
    for (size_t i = 0; outs.is_array() && i < outs.size(); ++i) {
      std::string name = outs[i].is_object() && outs[i].contains("name") && outs[i]["name"].is_string() ? outs[i]["name"].get<std::string>() : "";
      int v = g_.AddValue(name.empty() ? n.name + ":" + std::to_string(i) : name);
      if (g_.values[v].producer >= 0 || std::count(g_.inputs.begin(), g_.inputs.end(), v))
        return Bad(where + " output " + g_.values[v].name + " is produced twice");
      if (std::find(n.inputs.begin(), n.inputs.end(), v) != n.inputs.end()) return Bad(where + " reads its own output " + g_.values[v].name);
      ReadDesc(outs[i], g_.values[v]);
      g_.values[v].producer = static_cast<int>(g_.nodes.size());
      n.outputs.push_back(v);
    }
    g_.nodes.push_back(std::move(n));
    return Status::Ok();
  }

  static bool IsControl(const std::string& ref) { return ref.ends_with(":-1"); }

  // A Data or Const op of ATC's JSON: a graph input or a weight, the value named by its output desc (or the op).
  Status ReadValueOp(const json& o, const std::string& name, const std::string& where) {
    const json outs = o.value("output_desc", json::array());
    const json* d = outs.is_array() && !outs.empty() ? &outs[0] : nullptr;
    std::string value = d && d->is_object() && d->contains("name") && (*d)["name"].is_string() ? (*d)["name"].get<std::string>() : name;
    if (by_name_.count(name) || value_ops_.count(name) || g_.FindValue(value) >= 0) return Bad(where + ": op name " + name + " appears twice");
    int v = g_.AddValue(value);
    if (d) ReadDesc(*d, g_.values[v]);
    if (o["type"] == kGeData) g_.inputs.push_back(v);
    value_ops_[name] = v;
    return Status::Ok();
  }

  // "" -> -1; a graph input or weight by name or as "its op:0"; "op:i" -> output i of an earlier op; else a new weight.
  int Resolve(const std::string& ref, const json* desc) {
    if (ref.empty()) return -1;
    if (ref.ends_with(":0"))
      if (auto it = value_ops_.find(ref.substr(0, ref.size() - 2)); it != value_ops_.end()) return it->second;
    if (int v = g_.FindValue(ref); v >= 0 && g_.values[v].producer < 0) return v;
    if (size_t colon = ref.rfind(':'); colon != std::string::npos) {
      auto p = by_name_.find(ref.substr(0, colon));
      char* end = nullptr;
      unsigned long idx = std::strtoul(ref.c_str() + colon + 1, &end, 10);
      // p->second == nodes.size() is the op being read (its name is registered first): it cannot read itself.
      if (p != by_name_.end() && p->second < g_.nodes.size() && *end == '\0' && end != ref.c_str() + colon + 1 &&
          idx < g_.nodes[p->second].outputs.size())
        return g_.nodes[p->second].outputs[idx];
    }
    int v = g_.AddValue(ref);
    if (desc) ReadDesc(*desc, g_.values[v]);
    return v;
  }

  ModelJson& m_;
  Graph& g_;
  std::map<std::string, size_t> by_name_;
  std::map<std::string, int> value_ops_;  // Data and Const ops -> the value they stand for
};

}  // namespace

std::string ValueRef(const Graph& g, int v) {
  if (v < 0) return "";
  int p = g.values[v].producer;
  while (p >= 0 && g.nodes[p].has_attr(kRemovedViewAttr)) {  // not an op of the .om: the tensor it views
    v = g.nodes[p].inputs[0];
    p = g.values[v].producer;
  }
  if (p < 0) return g.values[v].name;
  const Node& n = g.nodes[p];
  size_t idx = std::find(n.outputs.begin(), n.outputs.end(), v) - n.outputs.begin();
  return n.name + ":" + std::to_string(idx);
}

OrderedJson ModelToJson(const Graph& g, const std::map<std::string, std::string>& attrs) {
  OrderedJson ops = OrderedJson::array();
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if (n.has_attr(kRemovedViewAttr)) continue;  // the .om does not list it (its reader's desc keeps the shape)
    OrderedJson op = {{"name", n.name}, {"type", ShownType(n)}, {"id", k}, {"input", OrderedJson::array()}};
    for (int i : n.inputs) op["input"].push_back(ValueRef(g, i));
    OrderedJson at = OrderedJson::array();
    for (const auto& [key, a] : n.attrs) at.push_back({{"key", key}, {"value", AttrToJson(a)}});
    at.push_back({{"key", kOriginalNamesAttr}, {"value", {{"list", {{"s", n.original_names}}}}}});
    op["attr"] = at;
    op["input_desc"] = OrderedJson::array();
    for (int i : n.inputs)
      if (i >= 0) op["input_desc"].push_back(DescJson(g.values[i]));
    op["output_desc"] = OrderedJson::array();
    for (int o : n.outputs) op["output_desc"].push_back(DescJson(g.values[o]));
    ops.push_back(op);
  }
  OrderedJson gj = {{"name", g.name}, {"input", OrderedJson::array()}, {"output", OrderedJson::array()}, {"op", ops}};
  for (int i : g.inputs) gj["input"].push_back(DescJson(g.values[i]));
  for (int o : g.outputs) gj["output"].push_back(ValueRef(g, o));
  OrderedJson model = {{"name", g.name}, {"attr", OrderedJson::array()}, {"graph", OrderedJson::array({gj})}};
  for (const auto& [k, v] : attrs) model["attr"].push_back({{"key", k}, {"value", {{"s", v}}}});
  return model;
}

Result<ModelJson> ModelFromJson(const nlohmann::json& j) {
  ModelJson m;
  NPU_RETURN_IF_ERROR(Reader(m).Read(j));
  return m;
}

Result<ModelJson> ReadModelJson(const std::string& path, const std::string& flag) {
  auto text = ReadFileToString(path);
  if (!text.ok()) return Status::Error("EC0012", flag, path, text.status().reason());
  std::string why;
  nlohmann::json j = ParseJson(text.value(), &why);
  if (j.is_discarded()) return Status::Error("EC0012", flag, path, "not valid JSON: " + why);
  auto m = ModelFromJson(j);
  if (!m.ok()) return Status::Error("EC0012", flag, path, m.status().reason());
  return m;
}

}  // namespace npu
