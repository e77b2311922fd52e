#include "frontend/ge/air_importer.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>

#include "base/file_io.h"
#include "frontend/ge/ge_graph.h"

namespace npu {
namespace {

constexpr const char* kFix = "Check that --model is a MindSpore AIR file (export it without enc_key) and --framework=1.";

Status Bad(const std::string& path, std::string why) { return Status::Error("E10041", "--model", path, std::move(why), kFix); }

Status ApplyInputShapes(Graph& g, const ImportOptions& opts) {
  std::string names;
  for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
  for (const auto& [name, shape] : opts.input_shapes) {
    int id = g.FindValue(name);
    if (id < 0 || std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end())
      return Status::Error("E10016", "--input_shape", name, "'" + name + "' is not a Data op of the graph; its Data ops are: " + names);
    Value& v = g.values[id];
    if (v.shape.size() != shape.size())
      return Status::Error("E10002", "--input_shape", name + ":" + ShapeToString(shape), "the input has rank " + std::to_string(v.shape.size()) + " (" + ShapeToString(v.shape) + ")");
    v.shape = shape;
  }
  return Status::Ok();
}

}  // namespace

Result<Graph> ImportAir(const std::string& path, const ImportOptions& opts, ModelInfo* info) {
  ModelInfo local;
  if (!info) info = &local;
  auto file = MappedFile::Open(path);
  if (!file.ok()) return Status::Error("E10041", "--model", path, file.status().reason(), "Check the --model path.");
  auto bytes = file.value().bytes();
  if (bytes.empty()) return Bad(path, "the file is empty");
  if (bytes.size() > INT_MAX) return Bad(path, "the ModelDef is larger than 2 GB, the protobuf limit");
  // The Consts' data live in the parsed ModelDef: the graph's weights are views into it, kept alive with them.
  auto md = std::make_shared<npukit::ge::ModelDef>();
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  if (!md->ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) || md->graph_size() < 1)
    return Bad(path, "not a ge.proto.ModelDef with a graph (an AIR exported with enc_key is encrypted, and npukit cannot read it)");
  if (!opts.out_nodes.empty()) return Status::Error("E10001", "--out_nodes", opts.out_nodes[0].first, "an AIR's outputs are its NetOutput's; --out_nodes is not taken for --framework=1");
  info->producer = "MindSpore AIR (ModelDef version " + std::to_string(md->version()) + ")";
  for (const auto& op : md->graph(0).op()) info->nodes.emplace_back(op.name(), op.type());
  GeSource src{"--model", path, "E10041", {}, md};
  NPU_RETURN_IF_ERROR(ExpandGeAttrs(*md, src));
  NPU_ASSIGN_OR_RETURN(GeGraph read, ReadGeGraph(md->graph(0), src));
  info->unsupported = std::move(read.unrunnable);
  if (!info->unsupported.empty())
    return Status::Error("E13010", "--model", path, std::to_string(info->unsupported.size()) + " op(s) are not supported:" + UnsupportedList(info->unsupported),
                         "Replace these operators in the network before exporting; atc --mode=3 writes the full report.");
  Graph g = std::move(read.graph);
  for (Node& n : g.nodes) {
    n.ascend_type.clear();  // the compile pipeline maps every op to its Ascend IR type, as for the other front ends
    if (n.original_names.empty()) n.original_names = {n.name};
  }
  NPU_RETURN_IF_ERROR(ApplyInputShapes(g, opts));
  return g;
}

const Importer& AirImporter() {
  struct Air final : Importer {
    std::string_view name() const override { return "MindSpore AIR"; }
    std::vector<std::string_view> input_formats() const override { return {"NCHW", "ND", "NHWC"}; }
    Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const override { return ImportAir(path, opts, info); }
  };
  static const Air importer;
  return importer;
}

}  // namespace npu
