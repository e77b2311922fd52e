#include "om/ge_convert.h"

#include "om/ge_op_fields.h"

#include <algorithm>
#include <map>
#include <set>

namespace npu::om {
namespace {

using GeAttr = npukit::ge::AttrDef;
using GeDesc = npukit::ge::TensorDescriptor;
using GeOp = npukit::ge::OpDef;
using GeList = npukit::ge::AttrDef::ListValue;

// The attribute names of what GE has no field for.
constexpr const char* kKernelType = "_npukit_kernel_type";
constexpr const char* kOpset = "_npukit_opset";
constexpr const char* kEngine = "_npukit_engine";
constexpr const char* kHasShape = "_npukit_has_shape";
constexpr const char* kSubFormat = "_npukit_sub_format";
constexpr const char* kWeightFile = "_npukit_weight_file";
constexpr const char* kProfiles = "_npukit_shape_profiles";
constexpr const char* kInputRanges = "_npukit_input_ranges";
constexpr const char* kOriginalNames = "_datadump_original_op_names";  // CANN's name (ir/node_attrs.h)
constexpr const char* kData = "Data";
constexpr const char* kConst = "Const";
constexpr const char* kNetOutput = "NetOutput";
// The GE attributes of the ops GE adds around a graph: the kernel store that owns each (as real ATC's JSON
// shows, tests/data/om_json) and a Data op's place among the graph inputs (the `index` of GE's Data IR).
constexpr const char* kGeKernelLib = "_ge_attr_op_kernel_lib_name";
constexpr const char* kGeLocalStore = "DNN_VM_GE_LOCAL_OP_STORE";
constexpr const char* kRtsStore = "DNN_VM_RTS_OP_STORE";
constexpr const char* kDataIndex = "index";

Status Corrupt(const std::string& path, std::string why) { return Status::Error("E10003", "--om", path, std::move(why)); }

GeDesc ToGeDesc(const TensorDesc& d) {
  GeDesc g;
  g.set_name(d.name());
  g.set_dtype(static_cast<npukit::ge::DataType>(d.dtype()));
  for (int64_t x : d.shape()) g.mutable_shape()->add_dim(x);
  g.set_layout(d.layout());
  g.set_size(d.size());
  auto& attr = *g.mutable_attr();
  *attr["origin_shape"].mutable_list()->mutable_i() = {d.origin_shape().begin(), d.origin_shape().end()};
  attr["origin_shape"].mutable_list()->set_val_type(GeList::VT_LIST_INT);
  attr["origin_format"].set_s(d.origin_layout());
  attr[kHasShape].set_b(d.has_shape());
  if (d.sub_format()) attr[kSubFormat].set_i(d.sub_format());
  return g;
}

TensorDesc FromGeDesc(const GeDesc& g) {
  TensorDesc d;
  d.set_name(g.name());
  d.set_dtype(g.dtype());
  *d.mutable_shape() = {g.shape().dim().begin(), g.shape().dim().end()};
  d.set_layout(g.layout());
  d.set_size(g.size());
  auto find = [&](const char* k) -> const GeAttr* { auto it = g.attr().find(k); return it == g.attr().end() ? nullptr : &it->second; };
  if (const GeAttr* a = find("origin_shape")) *d.mutable_origin_shape() = {a->list().i().begin(), a->list().i().end()};
  if (const GeAttr* a = find("origin_format")) d.set_origin_layout(a->s());
  if (const GeAttr* a = find(kHasShape)) d.set_has_shape(a->b());
  if (const GeAttr* a = find(kSubFormat)) d.set_sub_format(a->i());
  return d;
}

// A weight as CANN stores one: the desc of the `value` TensorDef locates its bytes; `data` stays empty.
void ToGeWeight(const WeightRef& w, npukit::ge::TensorDef* t) {
  *t->mutable_desc() = ToGeDesc(w.desc());
  t->mutable_desc()->set_data_offset(static_cast<int64_t>(w.offset()));
  t->mutable_desc()->set_weight_size(static_cast<int64_t>(w.size()));
  if (!w.file().empty()) (*t->mutable_desc()->mutable_attr())[kWeightFile].set_s(w.file());
}

WeightRef FromGeWeight(const npukit::ge::TensorDef& t) {
  WeightRef w;
  *w.mutable_desc() = FromGeDesc(t.desc());
  w.set_offset(static_cast<uint64_t>(std::max<int64_t>(t.desc().data_offset(), 0)));
  w.set_size(static_cast<uint64_t>(std::max<int64_t>(t.desc().weight_size(), 0)));
  if (auto it = t.desc().attr().find(kWeightFile); it != t.desc().attr().end()) w.set_file(it->second.s());
  return w;
}

void ToGeAttr(const AttrValue& a, GeAttr& g) {
  switch (a.value_case()) {
    case AttrValue::kI: g.set_i(a.i()); break;
    case AttrValue::kF: g.set_f(a.f()); break;
    case AttrValue::kS: g.set_s(a.s()); break;
    case AttrValue::kInts:
      *g.mutable_list()->mutable_i() = a.ints().v();
      g.mutable_list()->set_val_type(GeList::VT_LIST_INT);
      break;
    case AttrValue::kFloats:
      *g.mutable_list()->mutable_f() = a.floats().v();
      g.mutable_list()->set_val_type(GeList::VT_LIST_FLOAT);
      break;
    case AttrValue::kStrings:
      *g.mutable_list()->mutable_s() = a.strings().v();
      g.mutable_list()->set_val_type(GeList::VT_LIST_STRING);
      break;
    case AttrValue::kT: ToGeWeight(a.t(), g.mutable_t()); break;
    default: break;
  }
}

// An empty list takes its kind from val_type (files from before npukit wrote it read back as empty ints).
AttrValue FromGeAttr(const GeAttr& g) {
  AttrValue a;
  switch (g.value_case()) {
    case GeAttr::kI: a.set_i(g.i()); break;
    case GeAttr::kF: a.set_f(g.f()); break;
    case GeAttr::kS: a.set_s(g.s()); break;
    case GeAttr::kT: *a.mutable_t() = FromGeWeight(g.t()); break;
    case GeAttr::kList: {
      const GeList& l = g.list();
      if (!l.f().empty() || l.val_type() == GeList::VT_LIST_FLOAT) *a.mutable_floats()->mutable_v() = l.f();
      else if (!l.s().empty() || l.val_type() == GeList::VT_LIST_STRING) *a.mutable_strings()->mutable_v() = l.s();
      else *a.mutable_ints()->mutable_v() = l.i();
      break;
    }
    default: break;
  }
  return a;
}

// GE names ops, not tensors: a Data or Const op is named after its value unless an op of the graph has that
// name (the desc keeps the value's own name either way).
std::string FreeName(const std::string& base, std::set<std::string>& taken) {
  if (taken.insert(base).second) return base;
  for (int i = 1;; ++i)
    if (std::string s = base + "_" + std::to_string(i); taken.insert(s).second) return s;
}

uint64_t ToGeGraph(const GraphDef& gd, npukit::ge::GraphDef* out) {
  out->set_name(gd.name());
  std::set<std::string> taken;
  for (const OpDef& o : gd.op()) taken.insert(o.name());
  std::map<std::string, std::string> ref;  // value name -> "op:index"
  for (const TensorDesc& d : gd.input()) {
    GeOp* op = out->add_op();
    op->set_name(FreeName(d.name(), taken));
    op->set_type(kData);
    (*op->mutable_attr())[kGeKernelLib].set_s(kGeLocalStore);
    (*op->mutable_attr())[kDataIndex].set_i(out->op_size() - 1);
    op->add_input("");  // GE gives a Data op one empty input, described as the graph's input tensor
    *op->add_input_desc() = ToGeDesc(d);
    *op->add_output_desc() = ToGeDesc(d);
    ref[d.name()] = op->name() + ":0";
  }
  for (const WeightRef& w : gd.weight()) {
    GeOp* op = out->add_op();
    op->set_name(FreeName(w.desc().name(), taken));
    op->set_type(kConst);
    (*op->mutable_attr())[kGeKernelLib].set_s(kGeLocalStore);
    ToGeWeight(w, (*op->mutable_attr())["value"].mutable_t());
    *op->add_output_desc() = ToGeDesc(w.desc());
    ref[w.desc().name()] = op->name() + ":0";
  }
  for (const OpDef& o : gd.op()) {
    GeOp* op = out->add_op();
    op->set_name(o.name());
    op->set_type(o.type());
    op->set_stream_id(o.stream_id());
    for (const std::string& in : o.input()) op->add_input(in.empty() ? "" : ref.count(in) ? ref[in] : in);
    for (const TensorDesc& d : o.input_desc()) *op->add_input_desc() = ToGeDesc(d);
    for (int k = 0; k < o.output_size(); ++k) ref[o.output(k)] = o.name() + ":" + std::to_string(k);
    for (const TensorDesc& d : o.output_desc()) *op->add_output_desc() = ToGeDesc(d);
    auto& attr = *op->mutable_attr();
    for (const auto& [k, a] : o.attr()) ToGeAttr(a, attr[k]);
    *attr[kOriginalNames].mutable_list()->mutable_s() = o.original_op_names();
    attr[kOriginalNames].mutable_list()->set_val_type(GeList::VT_LIST_STRING);
    attr[kKernelType].set_s(o.kernel_type());
    attr[kOpset].set_i(o.opset());
    attr[kEngine].set_s(o.engine());
  }
  GeOp* net_output = out->add_op();
  net_output->set_name(FreeName(kNetOutput, taken));
  net_output->set_type(kNetOutput);
  (*net_output->mutable_attr())[kGeKernelLib].set_s(kRtsStore);
  for (const TensorDesc& d : gd.output()) {
    net_output->add_input(ref.count(d.name()) ? ref[d.name()] : d.name());
    *net_output->add_input_desc() = ToGeDesc(d);
  }
  return FillGeOpFields(*out);
}

Status FromGeGraph(const npukit::ge::GraphDef& g, GraphDef* gd, const std::string& path) {
  gd->set_name(g.name());
  std::map<std::string, std::string> value;  // "op:index" -> value name
  auto resolve = [&](const std::string& in, const std::string& op) -> Result<std::string> {
    if (in.empty()) return std::string();
    auto it = value.find(in);
    if (it == value.end()) return Corrupt(path, "op '" + op + "' reads '" + in + "', which no earlier op makes");
    return it->second;
  };
  for (const GeOp& op : g.op()) {
    const std::string& type = op.type();
    if (type == kData || type == kConst) {
      if (op.output_desc_size() != 1) return Corrupt(path, type + " op '" + op.name() + "' has " + std::to_string(op.output_desc_size()) + " outputs");
      value[op.name() + ":0"] = op.output_desc(0).name();
      if (type == kData) {
        *gd->add_input() = FromGeDesc(op.output_desc(0));
        continue;
      }
      auto v = op.attr().find("value");
      if (v == op.attr().end() || !v->second.has_t()) return Corrupt(path, "Const op '" + op.name() + "' has no value");
      *gd->add_weight() = FromGeWeight(v->second.t());
      continue;
    }
    if (type == kNetOutput) {
      for (const GeDesc& d : op.input_desc()) *gd->add_output() = FromGeDesc(d);
      for (const std::string& in : op.input()) NPU_RETURN_IF_ERROR(resolve(in, op.name()).status());
      continue;
    }
    OpDef* o = gd->add_op();
    o->set_name(op.name());
    o->set_type(type);
    o->set_id(op.id());
    o->set_stream_id(op.stream_id());
    for (const std::string& in : op.input()) {
      NPU_ASSIGN_OR_RETURN(std::string name, resolve(in, op.name()));
      o->add_input(name);
    }
    for (const GeDesc& d : op.input_desc()) *o->add_input_desc() = FromGeDesc(d);
    for (int k = 0; k < op.output_desc_size(); ++k) {
      *o->add_output_desc() = FromGeDesc(op.output_desc(k));
      o->add_output(op.output_desc(k).name());
      value[op.name() + ":" + std::to_string(k)] = op.output_desc(k).name();
    }
    for (const auto& [k, a] : op.attr()) {
      if (k == kOriginalNames) *o->mutable_original_op_names() = a.list().s();
      else if (k == kKernelType) o->set_kernel_type(a.s());
      else if (k == kOpset) o->set_opset(static_cast<int32_t>(a.i()));
      else if (k == kEngine) o->set_engine(a.s());
      else (*o->mutable_attr())[k] = FromGeAttr(a);
    }
  }
  return Status::Ok();
}

}  // namespace

std::string GeAttrText(const GeAttr& a) {
  auto join = [](const auto& list) {
    std::string s;
    for (const auto& x : list) {
      if (!s.empty()) s += ",";
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(x)>>) s += std::to_string(x);
      else s += x;
    }
    return s;
  };
  switch (a.value_case()) {
    case GeAttr::kS: return a.s();
    case GeAttr::kI: return std::to_string(a.i());
    case GeAttr::kF: return std::to_string(a.f());
    case GeAttr::kB: return a.b() ? "true" : "false";
    case GeAttr::kDt: return std::to_string(a.dt());
    case GeAttr::kList: return !a.list().s().empty() ? join(a.list().s()) : !a.list().i().empty() ? join(a.list().i()) : join(a.list().f());
    default: return {};
  }
}

npukit::ge::ModelDef ToGeModel(const ModelDef& md, uint64_t* feature_map_bytes) {
  npukit::ge::ModelDef ge;
  ge.set_name(md.name());
  ge.set_version(md.version());
  for (const auto& [k, v] : md.attr()) (*ge.mutable_attr())[k].set_s(v);
  if (md.has_profiles()) (*ge.mutable_attr())[kProfiles].set_bt(md.profiles().SerializeAsString());
  if (md.input_range_size()) {
    auto* list = (*ge.mutable_attr())[kInputRanges].mutable_list();
    for (const InputRangeDef& r : md.input_range()) list->add_bt(r.SerializeAsString());
  }
  uint64_t bytes = 0;
  for (const GraphDef& g : md.graph()) bytes = std::max(bytes, ToGeGraph(g, ge.add_graph()));
  if (feature_map_bytes) *feature_map_bytes = bytes;
  return ge;
}

Result<ModelDef> FromGeModel(const npukit::ge::ModelDef& ge, const std::string& path) {
  ModelDef md;
  md.set_name(ge.name());
  md.set_version(ge.version());
  for (const auto& [k, a] : ge.attr()) {
    if (k == kProfiles) {
      if (!md.mutable_profiles()->ParseFromString(a.bt())) return Corrupt(path, "the model's shape profiles do not parse");
    } else if (k == kInputRanges) {
      for (const std::string& b : a.list().bt())
        if (!md.add_input_range()->ParseFromString(b)) return Corrupt(path, "an input range does not parse");
    } else {
      (*md.mutable_attr())[k] = GeAttrText(a);
    }
  }
  for (const auto& g : ge.graph()) NPU_RETURN_IF_ERROR(FromGeGraph(g, md.add_graph(), path));
  return md;
}

}  // namespace npu::om
