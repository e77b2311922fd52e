#include "frontend/ge/ge_graph.h"

#include <map>

#include "frontend/ge/framework_op.h"
#include "frontend/ge/ge_ops.h"
#include "ir/device_format.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

using npukit::ge::AttrDef;
using npukit::ge::OpDef;
using npukit::ge::TensorDescriptor;

// What a tensor desc says, as the graph keeps it (see ge_graph.h).
struct Desc {
  DType dtype = DType::kUndefined;
  Shape device, logical;
  std::string layout;               // the logical layout's name, when it is an image layout of the right rank
  std::optional<Format> blocked;    // NC1HWC0, FRACTAL_Z, FRACTAL_NZ
  bool nhwc_held_channels_first = false;
};

bool Known(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](int64_t d) { return d >= 0; });
}

// The dims of a 4-D shape in `layout` (a permutation of N, C, H, W) put in NCHW order.
std::optional<Shape> ToNchw(std::string_view layout, const Shape& s) {
  if (layout.size() != 4 || s.size() != 4) return std::nullopt;
  Shape out;
  for (char letter : std::string_view("NCHW")) {
    size_t at = layout.find(letter);
    if (at == std::string_view::npos) return std::nullopt;
    out.push_back(s[at]);
  }
  return out;
}

class Reader {
 public:
  explicit Reader(const GeSource& src) : src_(src) {}

  Result<GeGraph> Read(const npukit::ge::GraphDef& gd) {
    g_.name = gd.name();
    for (const OpDef& op : gd.op()) NPU_RETURN_IF_ERROR(ReadOp(op));
    if (g_.outputs.empty()) return Corrupt("the graph has no NetOutput op");
    GeGraph out;
    MapGeOps(g_, out.unrunnable);
    NPU_RETURN_IF_ERROR(g_.Verify().with_context("graph in " + src_.path));
    out.graph = std::move(g_);
    return out;
  }

 private:
  Status Corrupt(std::string why) const { return Status::Error(src_.corrupt_code, src_.param, src_.path, std::move(why)); }

  Result<Desc> ReadDesc(const TensorDescriptor& d, const std::string& where) const {
    Desc r;
    auto dt = DTypeFromGe(d.dtype());
    if (!dt) return Corrupt(where + " has data type " + std::to_string(d.dtype()) + ", which npukit does not know");
    r.dtype = *dt;
    r.device.assign(d.shape().dim().begin(), d.shape().dim().end());
    Shape origin = r.device;
    std::string origin_format = d.layout();
    if (auto it = d.attr().find("origin_shape"); it != d.attr().end() && it->second.has_list()) origin.assign(it->second.list().i().begin(), it->second.list().i().end());
    if (auto it = d.attr().find("origin_format"); it != d.attr().end() && it->second.value_case() == AttrDef::kS) origin_format = it->second.s();
    auto format = FormatFromName(d.layout());
    r.logical = origin;
    if (format && IsBlockedFormat(*format)) {
      r.blocked = format;
      if (*format != Format::kFractalNZ) {  // NC1HWC0 and FRACTAL_Z hold an NCHW origin
        auto nchw = ToNchw(origin_format, origin);
        if (!nchw && origin.size() != 4) return Corrupt(where + " is " + d.layout() + " but its origin shape " + ShapeToString(origin) + " is not 4-D");
        if (nchw) r.logical = *nchw;
        r.nhwc_held_channels_first = (*format == Format::kNC1HWC0 || *format == Format::kNC1HWC0_C04) && origin_format == "NHWC";
        r.layout = "NCHW";
      }
      if (Known(r.logical) && Known(r.device)) {
        auto expect = DeviceShape({*format, r.logical, DTypeSize(r.dtype), 1});
        if (!expect.ok() || expect.value() != r.device)
          return Corrupt(where + ": " + d.layout() + " shape " + ShapeToString(r.device) + " does not hold origin shape " + ShapeToString(origin));
      }
    } else if (auto f = FormatFromName(origin_format); f && origin_format.size() == origin.size() && origin.size() >= 4) {
      r.layout = origin_format;  // NHWC, NCHW, NDHWC, ...
    }
    if (std::string why = ShapeLimitProblem(r.logical); !why.empty()) return Corrupt(where + ": shape " + ShapeToString(r.logical) + ": " + why);
    return r;
  }

  int AddValue(const std::string& name, const Desc& d, int producer) {
    int id = g_.AddValue(name);
    Value& v = g_.values[id];
    v.dtype = d.dtype;
    v.shape = d.logical;
    v.has_shape = true;
    v.layout = d.layout;
    v.device_format = d.blocked;
    v.producer = producer;
    return id;
  }

  Result<std::vector<int>> AddOutputs(const OpDef& op, int producer) {
    std::vector<int> ids;
    for (int k = 0; k < op.output_desc_size(); ++k) {
      std::string name = k == 0 ? op.name() : op.name() + ":" + std::to_string(k);
      if (g_.FindValue(name) >= 0) return Corrupt("two ops make tensor '" + name + "'");
      NPU_ASSIGN_OR_RETURN(Desc d, ReadDesc(op.output_desc(k), "output " + std::to_string(k) + " of op '" + op.name() + "'"));
      int id = AddValue(name, d, producer);
      if (k == 0) nhwc_out0_ = d.nhwc_held_channels_first;
      tensors_[op.name() + ":" + std::to_string(k)] = id;
      ids.push_back(id);
    }
    return ids;
  }

  // The bytes of a Const: inline (AIR) or at data_offset in WEIGHTS_DATA (.om), read back into the origin layout.
  Status ReadConst(const OpDef& op) {
    if (op.output_desc_size() != 1) return Corrupt("Const op '" + op.name() + "' has " + std::to_string(op.output_desc_size()) + " outputs");
    auto value = op.attr().find("value");
    const bool has_t = value != op.attr().end() && value->second.has_t();
    const TensorDescriptor& d = has_t ? value->second.t().desc() : op.output_desc(0);
    NPU_ASSIGN_OR_RETURN(Desc desc, ReadDesc(d, "Const op '" + op.name() + "'"));
    if (!Known(desc.device)) return Corrupt("Const op '" + op.name() + "' has an unknown shape " + ShapeToString(desc.device));
    auto need = ByteSize(desc.device, DTypeSize(desc.dtype));
    if (!need) return Corrupt("Const op '" + op.name() + "': shape " + ShapeToString(desc.device) + " is too large");
    const std::byte* bytes = nullptr;
    if (has_t && !value->second.t().data().empty()) {
      const std::string& data = value->second.t().data();
      if (data.size() < *need) return Corrupt("Const op '" + op.name() + "': " + std::to_string(data.size()) + " bytes of data hold no " + ShapeToString(desc.device));
      bytes = reinterpret_cast<const std::byte*>(data.data());
    } else {
      const uint64_t offset = static_cast<uint64_t>(d.data_offset()), size = static_cast<uint64_t>(d.weight_size());
      if (d.data_offset() < 0 || d.weight_size() < 0 || offset > src_.weights.size() || size > src_.weights.size() - offset)
        return Corrupt("Const op '" + op.name() + "': data_offset " + std::to_string(d.data_offset()) + " + weight_size " + std::to_string(d.weight_size()) +
                       " passes the end of WEIGHTS_DATA (" + std::to_string(src_.weights.size()) + " bytes)");
      if (*need > size) return Corrupt("Const op '" + op.name() + "': " + std::to_string(size) + " weight bytes hold no " + ShapeToString(desc.device));
      bytes = src_.weights.data() + offset;
    }
    Tensor stored = Tensor::ViewAnyAlignment(desc.dtype, desc.device, src_.owner, bytes);
    Tensor t;
    if (desc.blocked) {  // kernels compute on the origin layout; the value keeps the device format
      auto origin = FromDevice(stored, *desc.blocked, desc.logical, 1);
      if (!origin.ok()) return Corrupt("Const op '" + op.name() + "': " + origin.status().message());
      t = std::move(origin.value());
    } else {
      if (NumElements(desc.logical) != NumElements(desc.device))
        return Corrupt("Const op '" + op.name() + "': origin shape " + ShapeToString(desc.logical) + " and shape " + ShapeToString(desc.device) + " differ in size");
      t = stored.Reshaped(desc.logical);
    }
    NPU_ASSIGN_OR_RETURN(auto ids, AddOutputs(op, -1));
    g_.values[ids[0]].constant = std::move(t);
    return Status::Ok();
  }

  // A value in the shape a consumer's input desc reads it in: itself, or a Reshape standing for a shape-only
  // op GE removed (the flatten before a MatMul, an ExpandDims).
  Result<int> AsDescribed(int v, const TensorDescriptor& d, const OpDef& op, size_t j) {
    NPU_ASSIGN_OR_RETURN(Desc want, ReadDesc(d, "input " + std::to_string(j) + " of op '" + op.name() + "'"));
    const Value& have = g_.values[v];
    if (want.logical == have.shape || !Known(want.logical) || !Known(have.shape) || d.layout() == "FORMAT_RESERVED") return v;
    if (NumElements(want.logical) != NumElements(have.shape))
      return Corrupt("op '" + op.name() + "' reads " + have.name + " as " + ShapeToString(want.logical) + ", but it is " + ShapeToString(have.shape));
    auto key = std::make_pair(v, want.logical);
    if (auto it = reshaped_.find(key); it != reshaped_.end()) return it->second;
    Tensor shape = Tensor::Empty(DType::kI64, {static_cast<int64_t>(want.logical.size())});
    std::copy(want.logical.begin(), want.logical.end(), shape.mutable_data<int64_t>());
    Node r;
    r.name = UniqueNodeName(g_, have.name + "_reshape");
    r.op_type = r.ascend_type = "Reshape";
    r.opset = 13;
    r.inputs = {v, AddConstant(g_, UniqueValueName(g_, r.name + "/shape"), std::move(shape))};
    Desc out = want;
    out.dtype = g_.values[v].dtype;
    out.blocked.reset();
    int y = AddValue(UniqueValueName(g_, r.name), out, static_cast<int>(g_.nodes.size()));
    r.outputs = {y};
    g_.nodes.push_back(std::move(r));
    reshaped_[key] = y;
    return y;
  }

  Status ReadOp(const OpDef& op) {
    const std::string& type = op.type();
    if (IsGeBookkeepingOp(type)) return Status::Ok();  // computes nothing: streams, events, atomic clean
    if (type == "Data") {
      NPU_ASSIGN_OR_RETURN(auto ids, AddOutputs(op, -1));
      if (ids.empty()) return Corrupt("Data op '" + op.name() + "' has no output desc");
      g_.inputs.push_back(ids[0]);
      return Status::Ok();
    }
    if (type == "Const" || type == "Constant") return ReadConst(op);
    std::vector<int> inputs;
    for (int j = 0; j < op.input_size(); ++j) {
      const std::string& in = op.input(j);
      if (in.ends_with(":-1")) continue;  // a control edge
      if (in.empty()) {                   // an omitted optional input
        inputs.push_back(-1);
        continue;
      }
      auto it = tensors_.find(in.find(':') == std::string::npos ? in + ":0" : in);
      if (it == tensors_.end()) return Corrupt("op '" + op.name() + "' reads '" + in + "', which no earlier op makes");
      int v = it->second;
      size_t at = inputs.size();
      if (type != "NetOutput" && at < static_cast<size_t>(op.input_desc_size())) {
        NPU_ASSIGN_OR_RETURN(v, AsDescribed(v, op.input_desc(static_cast<int>(at)), op, at));
      }
      inputs.push_back(v);
    }
    if (type == "NetOutput") {
      g_.outputs = inputs;
      if (std::count(inputs.begin(), inputs.end(), -1)) return Corrupt("NetOutput op '" + op.name() + "' has an empty input");
      return Status::Ok();
    }
    Node n;
    n.name = op.name();
    n.ascend_type = n.op_type = type;
    n.inputs = std::move(inputs);
    for (const auto& [k, a] : op.attr()) {
      if (k == kOriginalNamesAttr && a.has_list()) n.original_names.assign(a.list().s().begin(), a.list().s().end());
      else if (auto attr = GeAttrValue(a)) n.attrs[k] = std::move(*attr);
    }
    if (type == kFrameworkOpType)
      if (std::string why = UnwrapFrameworkOp(op, n); !why.empty()) return Corrupt("FrameworkOp '" + op.name() + "': " + why);
    const int index = static_cast<int>(g_.nodes.size());
    NPU_ASSIGN_OR_RETURN(n.outputs, AddOutputs(op, index));
    if (nhwc_out0_) n.attrs[kFrameworkLayoutAttr] = std::string("NHWC");
    g_.nodes.push_back(std::move(n));
    return Status::Ok();
  }

  const GeSource& src_;
  Graph g_;
  std::map<std::string, int> tensors_;  // "op:index" -> value
  std::map<std::pair<int, Shape>, int> reshaped_;
  bool nhwc_out0_ = false;  // the last op's output 0 is an NHWC tensor held channels-first
};

}  // namespace

std::optional<Attr> GeAttrValue(const AttrDef& a) {
  switch (a.value_case()) {
    case AttrDef::kS: return Attr(a.s());
    case AttrDef::kI: return Attr(a.i());
    case AttrDef::kF: return Attr(a.f());
    case AttrDef::kB: return Attr(int64_t{a.b()});
    case AttrDef::kDt: return Attr(a.dt());
    case AttrDef::kListListInt: {  // PadD's paddings, [begin, end] per dim: flattened row by row
      std::vector<int64_t> flat;
      for (const auto& row : a.list_list_int().list_list_i()) flat.insert(flat.end(), row.list_i().begin(), row.list_i().end());
      return Attr(std::move(flat));
    }
    case AttrDef::kList:
      if (!a.list().s().empty()) return Attr(std::vector<std::string>(a.list().s().begin(), a.list().s().end()));
      if (!a.list().f().empty()) return Attr(std::vector<float>(a.list().f().begin(), a.list().f().end()));
      if (!a.list().b().empty()) return Attr(std::vector<int64_t>(a.list().b().begin(), a.list().b().end()));
      return Attr(std::vector<int64_t>(a.list().i().begin(), a.list().i().end()));
    default: return std::nullopt;
  }
}

Result<GeGraph> ReadGeGraph(const npukit::ge::GraphDef& gd, const GeSource& src) { return Reader(src).Read(gd); }

namespace {

using AttrMapDef = google::protobuf::Map<std::string, AttrDef>;

// An enumerated name: '\0', then the index in base 127, least significant digit first, each digit stored plus one
// (so no '\0' follows the first byte). nullopt for a plain name.
std::optional<size_t> EnumIndex(const std::string& key) {
  constexpr size_t kBase = 127;
  if (key.empty() || key[0] != '\0') return std::nullopt;
  size_t index = 0, scale = 1;
  for (size_t i = 1; i < key.size() && i < 6; ++i, scale *= kBase) index += (static_cast<uint8_t>(key[i]) - size_t{1}) * scale;
  return index;
}

class AttrExpander {
 public:
  AttrExpander(const npukit::ge::ModelDef& md, const GeSource& src) : src_(src) {
    auto list = [&](const char* k) -> const AttrDef::ListValue* { auto it = md.attr().find(k); return it == md.attr().end() ? nullptr : &it->second.list(); };
    if (auto* l = list("attr_name_enum")) names_.assign(l->s().begin(), l->s().end());
    if (auto* l = list("attr_value_enum")) values_.assign(l->s().begin(), l->s().end());
    if (auto* l = list("attrs_use_string_value")) string_valued_.assign(l->b().begin(), l->b().end());
  }

  Status Expand(AttrMapDef& attrs, const std::string& where) {
    std::vector<std::pair<std::string, AttrDef>> renamed;
    for (auto it = attrs.begin(); it != attrs.end();) {
      auto index = EnumIndex(it->first);
      if (!index) {
        NPU_RETURN_IF_ERROR(Nested(it->second, where));
        ++it;
        continue;
      }
      if (*index >= names_.size()) return Bad(where + ": attribute name index " + std::to_string(*index) + " is past attr_name_enum (" + std::to_string(names_.size()) + " names)");
      AttrDef a = std::move(it->second);
      if (*index < string_valued_.size() && string_valued_[*index]) NPU_RETURN_IF_ERROR(StringValue(a, where + " attribute " + names_[*index]));
      NPU_RETURN_IF_ERROR(Nested(a, where));
      renamed.emplace_back(names_[*index], std::move(a));
      it = attrs.erase(it);
    }
    for (auto& [k, a] : renamed) attrs[k] = std::move(a);
    return Status::Ok();
  }

  Status Desc(npukit::ge::TensorDescriptor& d, const std::string& where) { return Expand(*d.mutable_attr(), where); }

 private:
  Status Bad(std::string why) const { return Status::Error(src_.corrupt_code, src_.param, src_.path, std::move(why)); }

  Status Value(int64_t i, std::string* out, const std::string& where) const {
    if (i < 0 || static_cast<size_t>(i) >= values_.size()) return Bad(where + ": value index " + std::to_string(i) + " is past attr_value_enum");
    *out = values_[static_cast<size_t>(i)];
    return Status::Ok();
  }

  Status StringValue(AttrDef& a, const std::string& where) const {
    if (a.value_case() == AttrDef::kI) {
      std::string s;
      NPU_RETURN_IF_ERROR(Value(a.i(), &s, where));
      a.set_s(s);
    } else if (a.has_list() && a.list().i_size() > 0) {
      std::vector<int64_t> indices(a.list().i().begin(), a.list().i().end());
      auto* list = a.mutable_list();
      list->clear_i();
      for (int64_t i : indices) NPU_RETURN_IF_ERROR(Value(i, list->add_s(), where));
    }
    return Status::Ok();
  }

  // Attribute maps inside a value: a tensor's desc, a function's attributes.
  Status Nested(AttrDef& a, const std::string& where) {
    if (a.has_t()) return Desc(*a.mutable_t()->mutable_desc(), where);
    if (a.has_td()) return Desc(*a.mutable_td(), where);
    if (a.has_func()) return Expand(*a.mutable_func()->mutable_attr(), where);
    return Status::Ok();
  }

  const GeSource& src_;
  std::vector<std::string> names_, values_;
  std::vector<bool> string_valued_;
};

}  // namespace

Status ExpandGeAttrs(npukit::ge::ModelDef& md, const GeSource& src) {
  auto version = md.attr().find("om_compress_version");
  if (version == md.attr().end() || version->second.i() == 0) return Status::Ok();
  AttrExpander x(md, src);
  for (auto& g : *md.mutable_graph()) {
    NPU_RETURN_IF_ERROR(x.Expand(*g.mutable_attr(), "graph '" + g.name() + "'"));
    for (auto& op : *g.mutable_op()) {
      const std::string where = "op '" + op.name() + "'";
      NPU_RETURN_IF_ERROR(x.Expand(*op.mutable_attr(), where));
      for (auto& d : *op.mutable_input_desc()) NPU_RETURN_IF_ERROR(x.Desc(d, where));
      for (auto& d : *op.mutable_output_desc()) NPU_RETURN_IF_ERROR(x.Desc(d, where));
    }
  }
  return Status::Ok();
}

}  // namespace npu
