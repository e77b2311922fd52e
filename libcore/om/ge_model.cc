#include "om/ge_model.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <map>
#include <set>

#include "frontend/ge/ge_graph.h"
#include "om/ge_convert.h"
#include "ge_ir.pb.h"
#include "om/model_json.h"

namespace npu {
namespace {

using npukit::ge::OpDef;
using npukit::ge::TensorDescriptor;

Status Corrupt(const std::string& path, std::string why) { return Status::Error("E10003", "--om", path, std::move(why)); }

// The SoC a model was built for, when its attributes do not name it: CANN 20.x writes target_type. Source:
// the ModelZoo A3C .om (tests/data/om), built with --soc_version=Ascend310, carries "MINI".
constexpr std::pair<std::string_view, std::string_view> kTargetTypeSoc[] = {{"MINI", "Ascend310"}};

// The ModelDef of a CANN-built .om and its model attributes (with the SoC an older file names by target_type).
struct CannModelDef {
  npukit::ge::ModelDef md;
  std::map<std::string, std::string> attrs;
};

Status ParseCannModelDef(const om::OmFile& f, const std::string& path, CannModelDef& out) {
  auto md_bytes = f.partitions.at(om::PartitionType::kModelDef);
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  if (md_bytes.size() > INT_MAX || !out.md.ParseFromArray(md_bytes.data(), static_cast<int>(md_bytes.size())) || out.md.graph_size() < 1)
    return Corrupt(path, "MODEL_DEF is not a ge.proto.ModelDef with a graph");
  NPU_RETURN_IF_ERROR(ExpandGeAttrs(out.md, {"--om", path, "E10003", {}, nullptr}));
  for (const auto& [k, a] : out.md.attr()) out.attrs[k] = om::GeAttrText(a);
  if (!out.attrs.count("soc_version"))
    for (const auto& [target, soc] : kTargetTypeSoc)
      if (out.attrs.count("target_type") && out.attrs["target_type"] == target) out.attrs["soc_version"] = soc;
  out.attrs["om_generation"] = f.generation;
  if (f.model_num > 1) out.attrs["om_model_num"] = std::to_string(f.model_num);  // npukit reads the first (om_file.h)
  return Status::Ok();
}

OrderedJson DescJson(const TensorDescriptor& d, const std::string& name) {
  auto dt = DTypeFromGe(d.dtype());
  OrderedJson j = {{"name", d.name().empty() ? name : d.name()}, {"dtype", dt ? DTypeName(*dt) : "DT_UNDEFINED"}, {"layout", d.layout()}};
  j["shape"] = {{"dim", std::vector<int64_t>(d.shape().dim().begin(), d.shape().dim().end())}};
  j["attr"] = OrderedJson::array();
  for (const char* key : {"origin_shape", "origin_format"})
    if (auto it = d.attr().find(key); it != d.attr().end())
      if (auto a = GeAttrValue(it->second)) j["attr"].push_back({{"key", key}, {"value", AttrToJson(*a)}});
  return j;
}

}  // namespace

Result<OrderedJson> CannOmJson(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(om::OmFile f, om::ReadOmFile(path));
  CannModelDef c;
  NPU_RETURN_IF_ERROR(ParseCannModelDef(f, path, c));
  const auto& gd = c.md.graph(0);
  std::set<std::string> values;  // Data and Const ops: read by their own names, as ModelToJson names graph inputs and weights
  OrderedJson ops = OrderedJson::array(), inputs = OrderedJson::array(), outputs = OrderedJson::array();
  auto ref = [&](const std::string& in) {
    std::string op = in.substr(0, in.rfind(':'));
    return values.count(op) && in.ends_with(":0") ? op : in;
  };
  for (const OpDef& op : gd.op()) {
    if (op.type() == "Data" || op.type() == "Const" || op.type() == "Constant") {
      values.insert(op.name());
      if (op.type() == "Data" && op.output_desc_size() > 0) inputs.push_back(DescJson(op.output_desc(0), op.name()));
      continue;
    }
    std::vector<std::string> in;
    for (const std::string& i : op.input())
      if (!i.ends_with(":-1")) in.push_back(i.empty() ? i : ref(i));  // control edges are not data
    if (op.type() == "NetOutput") {
      for (const std::string& i : in) outputs.push_back(i);
      continue;
    }
    OrderedJson j = {{"name", op.name()}, {"type", op.type()}, {"id", ops.size()}, {"input", in}, {"attr", OrderedJson::array()}};
    std::map<std::string, const npukit::ge::AttrDef*> sorted;  // protobuf's map order is not stable
    for (const auto& [k, a] : op.attr()) sorted[k] = &a;
    for (const auto& [k, a] : sorted)
      if (auto v = GeAttrValue(*a)) j["attr"].push_back({{"key", k}, {"value", AttrToJson(*v)}});
    j["input_desc"] = OrderedJson::array();
    for (const auto& d : op.input_desc()) j["input_desc"].push_back(DescJson(d, ""));
    j["output_desc"] = OrderedJson::array();
    for (int k = 0; k < op.output_desc_size(); ++k) j["output_desc"].push_back(DescJson(op.output_desc(k), op.name() + ":" + std::to_string(k)));
    ops.push_back(std::move(j));
  }
  OrderedJson model = {{"name", c.md.name()}, {"attr", OrderedJson::array()}};
  for (const auto& [k, v] : c.attrs) model["attr"].push_back({{"key", k}, {"value", {{"s", v}}}});
  model["graph"] = OrderedJson::array({{{"name", gd.name()}, {"input", inputs}, {"output", outputs}, {"op", ops}}});
  return model;
}

Result<OmModel> LoadCannOm(const om::OmFile& f, const std::string& path, size_t profile) {
  OmModel m;
  m.header = f.info;
  CannModelDef c;
  NPU_RETURN_IF_ERROR(ParseCannModelDef(f, path, c));
  const npukit::ge::ModelDef& md = c.md;
  m.attrs = std::move(c.attrs);
  m.model_def_size = f.partitions.at(om::PartitionType::kModelDef).size();
  std::span<const std::byte> weights;
  if (auto it = f.partitions.find(om::PartitionType::kWeightsData); it != f.partitions.end()) weights = it->second;
  m.weight_size = weights.size();
  if (auto it = f.partitions.find(om::PartitionType::kTaskInfo); it != f.partitions.end()) m.task_info_size = it->second.size();
  if (auto it = f.partitions.find(om::PartitionType::kTbeKernels); it != f.partitions.end()) m.tbe_kernels_size = it->second.size();
  if (profile >= static_cast<size_t>(md.graph_size()))
    return Status::Error("E10001", "profile", std::to_string(profile), "the model has " + std::to_string(md.graph_size()) + " graph(s)");
  GeSource src{"--om", path, "E10003", weights, f.file.share()};
  NPU_ASSIGN_OR_RETURN(GeGraph read, ReadGeGraph(md.graph(static_cast<int>(profile)), src));
  m.graph = std::move(read.graph);
  m.unrunnable = std::move(read.unrunnable);
  m.cann_built = true;
  if (m.unrunnable.empty()) {
    auto soc = m.attrs.find("soc_version");
    m.tasks = LowerToTasks(m.graph, soc == m.attrs.end() ? nullptr : FindSoc(soc->second));
  }
  return m;
}

}  // namespace npu
