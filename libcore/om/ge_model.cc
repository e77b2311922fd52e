#include "om/ge_model.h"

#include <google/protobuf/stubs/logging.h>

#include <array>
#include <climits>

#include "ge_ir.pb.h"
#include "ir/ascend_types.h"
#include "ir/device_format.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

using npukit::ge::AttrDef;
using npukit::ge::OpDef;
using npukit::ge::TensorDescriptor;

Status Corrupt(const std::string& path, std::string why) { return Status::Error("E10003", "--om", path, std::move(why)); }

// ge.proto.DataType numbers the types as npukit's DType does (DT_FLOAT 1, DT_FLOAT16 2, ..., DT_BF16 27).
std::optional<DType> FromGeProto(int32_t t) {
  static constexpr std::array kKnown = {DType::kF32, DType::kF16, DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32,
                                        DType::kI64, DType::kU32, DType::kU64, DType::kBool, DType::kF64, DType::kBF16};
  for (DType d : kKnown)
    if (static_cast<int32_t>(d) == t) return d;
  return std::nullopt;
}

// The SoC a model was built for, when its attributes do not name it: CANN 20.x writes target_type. Source:
// the ModelZoo A3C .om (../shared/corpora/om), built with --soc_version=Ascend310, carries "MINI".
constexpr std::pair<std::string_view, std::string_view> kTargetTypeSoc[] = {{"MINI", "Ascend310"}};

std::string AttrText(const AttrDef& a) {
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
    case AttrDef::kS: return a.s();
    case AttrDef::kI: return std::to_string(a.i());
    case AttrDef::kF: return std::to_string(a.f());
    case AttrDef::kB: return a.b() ? "true" : "false";
    case AttrDef::kDt: return std::to_string(a.dt());
    case AttrDef::kList: return !a.list().s().empty() ? join(a.list().s()) : !a.list().i().empty() ? join(a.list().i()) : join(a.list().f());
    default: return {};
  }
}

// Node attributes npukit's IR holds (scalars, lists); tensors, graphs and functions are left out.
std::optional<Attr> ToAttr(const AttrDef& a) {
  switch (a.value_case()) {
    case AttrDef::kS: return Attr(a.s());
    case AttrDef::kI: return Attr(a.i());
    case AttrDef::kF: return Attr(a.f());
    case AttrDef::kB: return Attr(int64_t{a.b()});
    case AttrDef::kDt: return Attr(a.dt());
    case AttrDef::kList:
      if (!a.list().s().empty()) return Attr(std::vector<std::string>(a.list().s().begin(), a.list().s().end()));
      if (!a.list().f().empty()) return Attr(std::vector<float>(a.list().f().begin(), a.list().f().end()));
      return Attr(std::vector<int64_t>(a.list().i().begin(), a.list().i().end()));
    default: return std::nullopt;
  }
}

// A desc as a value: the origin shape and format (desc attrs origin_shape / origin_format) are what the
// framework has; the desc's own shape and layout are the device's.
Status ReadGeDesc(const TensorDescriptor& d, Value& v, const std::string& path, const std::string& where) {
  auto dt = FromGeProto(d.dtype());
  if (!dt) return Corrupt(path, where + " has data type " + std::to_string(d.dtype()) + ", which npukit does not know");
  v.dtype = *dt;
  Shape device(d.shape().dim().begin(), d.shape().dim().end());
  v.shape = device;
  v.layout = d.layout();
  if (auto it = d.attr().find("origin_shape"); it != d.attr().end() && it->second.has_list()) v.shape.assign(it->second.list().i().begin(), it->second.list().i().end());
  if (auto it = d.attr().find("origin_format"); it != d.attr().end() && it->second.value_case() == AttrDef::kS) v.layout = it->second.s();
  if (auto f = FormatFromName(d.layout()); f && IsBlockedFormat(*f)) v.device_format = *f;
  if (std::string why = ShapeLimitProblem(v.shape); !why.empty()) return Corrupt(path, where + ": shape " + ShapeToString(v.shape) + ": " + why);
  v.has_shape = true;
  return Status::Ok();
}

}  // namespace

Result<OmModel> LoadCannOm(const om::OmFile& f, const std::string& path, size_t profile) {
  OmModel m;
  m.header = f.info;
  auto md_bytes = f.partitions.at(om::PartitionType::kModelDef);
  npukit::ge::ModelDef md;
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  if (md_bytes.size() > INT_MAX || !md.ParseFromArray(md_bytes.data(), static_cast<int>(md_bytes.size())) || md.graph_size() < 1)
    return Corrupt(path, "MODEL_DEF is not a ge.proto.ModelDef with a graph");
  m.model_def_size = md_bytes.size();
  for (const auto& [k, a] : md.attr()) m.attrs[k] = AttrText(a);
  if (!m.attrs.count("soc_version"))
    for (const auto& [target, soc] : kTargetTypeSoc)
      if (m.attrs.count("target_type") && m.attrs["target_type"] == target) m.attrs["soc_version"] = soc;
  m.attrs["om_generation"] = f.generation;
  std::span<const std::byte> weights;
  if (auto it = f.partitions.find(om::PartitionType::kWeightsData); it != f.partitions.end()) weights = it->second;
  m.weight_size = weights.size();
  if (auto it = f.partitions.find(om::PartitionType::kTaskInfo); it != f.partitions.end()) m.task_info_size = it->second.size();
  if (auto it = f.partitions.find(om::PartitionType::kTbeKernels); it != f.partitions.end()) m.tbe_kernels_size = it->second.size();
  if (profile >= static_cast<size_t>(md.graph_size()))
    return Status::Error("E10001", "profile", std::to_string(profile), "the model has " + std::to_string(md.graph_size()) + " graph(s)");
  const auto& gd = md.graph(static_cast<int>(profile));
  Graph& g = m.graph;
  g.name = gd.name();
  std::map<std::string, int> tensors;  // "op:index" -> value
  for (const OpDef& op : gd.op()) {
    const std::string& type = op.type();
    auto add_outputs = [&](int producer) -> Result<std::vector<int>> {
      std::vector<int> ids;
      for (int k = 0; k < op.output_desc_size(); ++k) {
        std::string name = k == 0 ? op.name() : op.name() + ":" + std::to_string(k);
        if (g.FindValue(name) >= 0) return Corrupt(path, "two ops make tensor '" + name + "'");
        int id = g.AddValue(name);
        NPU_RETURN_IF_ERROR(ReadGeDesc(op.output_desc(k), g.values[id], path, "output " + std::to_string(k) + " of op '" + op.name() + "'"));
        g.values[id].producer = producer;
        tensors[op.name() + ":" + std::to_string(k)] = id;
        ids.push_back(id);
      }
      return ids;
    };
    if (type == "Data") {
      NPU_ASSIGN_OR_RETURN(auto ids, add_outputs(-1));
      if (ids.empty()) return Corrupt(path, "Data op '" + op.name() + "' has no output desc");
      g.inputs.push_back(ids[0]);
      continue;
    }
    if (type == "Const" || type == "Constant") {
      NPU_ASSIGN_OR_RETURN(auto ids, add_outputs(-1));
      if (ids.size() != 1) return Corrupt(path, "Const op '" + op.name() + "' has " + std::to_string(ids.size()) + " outputs");
      // The bytes are located by the desc of the `value` attr's TensorDef (its data field is empty).
      auto value = op.attr().find("value");
      const TensorDescriptor& d = value != op.attr().end() && value->second.has_t() ? value->second.t().desc() : op.output_desc(0);
      const uint64_t offset = static_cast<uint64_t>(d.data_offset()), size = static_cast<uint64_t>(d.weight_size());
      if (d.data_offset() < 0 || d.weight_size() < 0 || offset > weights.size() || size > weights.size() - offset)
        return Corrupt(path, "Const op '" + op.name() + "': data_offset " + std::to_string(d.data_offset()) + " + weight_size " + std::to_string(d.weight_size()) +
                                 " passes the end of WEIGHTS_DATA (" + std::to_string(weights.size()) + " bytes)");
      Value& v = g.values[ids[0]];
      Shape device(d.shape().dim().begin(), d.shape().dim().end());
      auto need = ByteSize(device, DTypeSize(v.dtype));
      if (!need || *need > size) return Corrupt(path, "Const op '" + op.name() + "': " + std::to_string(size) + " weight bytes hold no " + ShapeToString(device));
      v.constant = Tensor::ViewAnyAlignment(v.dtype, device, f.file.share(), weights.data() + offset);  // device layout, as stored
      v.shape = device;
      v.device_format.reset();
      continue;
    }
    std::vector<int> inputs;
    for (const std::string& in : op.input()) {
      if (in.ends_with(":-1")) continue;  // a control edge
      if (in.empty()) {  // an omitted optional input
        inputs.push_back(-1);
        continue;
      }
      auto it = tensors.find(in.find(':') == std::string::npos ? in + ":0" : in);
      if (it == tensors.end()) return Corrupt(path, "op '" + op.name() + "' reads '" + in + "', which no earlier op makes");
      inputs.push_back(it->second);
    }
    if (type == "NetOutput") {
      g.outputs = inputs;
      continue;
    }
    Node n;
    n.name = op.name();
    n.ascend_type = type;
    n.op_type = FrameworkOpType(type);
    n.inputs = std::move(inputs);
    for (const auto& [k, a] : op.attr()) {
      if (k == kOriginalNamesAttr && a.has_list()) n.original_names.assign(a.list().s().begin(), a.list().s().end());
      else if (auto attr = ToAttr(a)) n.attrs[k] = std::move(*attr);
    }
    NPU_ASSIGN_OR_RETURN(n.outputs, add_outputs(static_cast<int>(g.nodes.size())));
    g.nodes.push_back(std::move(n));
  }
  if (g.outputs.empty()) return Corrupt(path, "the graph has no NetOutput op");
  NPU_RETURN_IF_ERROR(g.Verify().with_context("graph in " + path));
  return m;
}

}  // namespace npu
