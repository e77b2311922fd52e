#include "om/ge_model.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>
#include <map>
#include <set>

#include "frontend/ge/ge_graph.h"
#include "om/ge_convert.h"
#include "ge_ir.pb.h"

namespace npu {
namespace {

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

}  // namespace

Result<npukit::ge::ModelDef> ReadOmModelDef(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(om::OmFile f, om::ReadOmFile(path));
  return ReadOmModelDef(f, path);
}

Result<npukit::ge::ModelDef> ReadOmModelDef(const om::OmFile& f, const std::string& path) {
  CannModelDef c;
  if (f.cann_built) {
    NPU_RETURN_IF_ERROR(ParseCannModelDef(f, path, c));
    return std::move(c.md);
  }
  auto bytes = f.partitions.at(om::PartitionType::kModelDef);
  google::protobuf::LogSilencer quiet;
  if (bytes.size() > INT_MAX) return Corrupt(path, "MODEL_DEF is larger than 2 GB");
  if (c.md.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) && c.md.graph_size() > 0) return std::move(c.md);
  om::ModelDef legacy;  // npukit's own schema, before it wrote GE's
  if (!legacy.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || legacy.graph_size() < 1)
    return Corrupt(path, "MODEL_DEF does not parse");
  return om::ToGeModel(legacy);
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
