#include "frontend/tf/tf_importer.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>

#include <chrono>
#include <climits>
#include <deque>
#include <set>

#include "base/file_io.h"
#include "base/log.h"
#include "base/text.h"
#include "frontend/text_proto.h"
#include "frontend/tf/tf_convert.h"
#include "frontend/weight_cut.h"
#include "ir/graph_edit.h"
#include "ops/schemas.h"

namespace npu {
namespace {

using npukit::tf::GraphDef;
using npukit::tf::NodeDef;

// tf_graph.proto's field numbers on the way to a Const's data: GraphDef.node, NodeDef.attr, the attr entry's
// value, AttrValue.tensor, and TensorProto.tensor_content, the payload.
constexpr uint32_t kGraphNode = 1, kNodeAttr = 5, kEntryValue = 2, kAttrTensor = 8, kTensorContent = 4;
// Contents this small are left to protobuf: cutting them saves nothing.
constexpr size_t kMinCutBytes = 64;

Status Bad(const std::string& path, std::string why, std::string fix = "Check that --model is a frozen TensorFlow GraphDef (.pb) and --framework=3.") {
  return Status::Error("E10041", "--model", path, std::move(why), std::move(fix));
}

struct ParsedGraph {
  GraphDef graph;
  std::vector<std::span<const std::byte>> cuts;
  std::shared_ptr<const void> file;
};

bool LooksLikeText(std::span<const std::byte> bytes) {
  std::string_view s(reinterpret_cast<const char*>(bytes.data()), std::min<size_t>(bytes.size(), 4096));
  size_t i = s.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && (s.substr(i).starts_with("node") || s.substr(i).starts_with("versions") ||
                                         s.substr(i).starts_with("library") || s.substr(i).starts_with("#"));
}

Result<ParsedGraph> Parse(const std::string& path) {
  auto file = MappedFile::Open(path);
  if (!file.ok()) return Status::Error("E10041", "--model", path, file.status().reason(), "Check the --model path.");
  auto bytes = file.value().bytes();
  if (bytes.empty()) return Bad(path, "the file is empty");
  ParsedGraph p;
  if (path.ends_with(".pbtxt") || path.ends_with(".txt") || LooksLikeText(bytes)) {
    std::string where;
    if (!ParseTextProto({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, &p.graph, /*allow_unknown_fields=*/false, &where).ok())
      return Bad(path, "not a TensorFlow GraphDef in text form: " + where);
    return p;
  }
  if (bytes.size() > INT_MAX) return Bad(path, "the GraphDef is larger than 2 GB, the protobuf limit");
  CutHandlers on{nullptr, [&](std::span<const std::byte> payload, std::string& out) {
                   if (payload.size() < kMinCutBytes) {  // kept in place
                     google::protobuf::io::StringOutputStream s(&out);
                     google::protobuf::io::CodedOutputStream o(&s);
                     o.WriteTag(kTensorContent << 3 | 2);
                     o.WriteVarint32(static_cast<uint32_t>(payload.size()));
                     o.WriteRaw(payload.data(), static_cast<int>(payload.size()));
                     return;
                   }
                   p.cuts.push_back(payload);
                   npukit::tf::TensorProto marker;
                   marker.set_npukit_cut_content(p.cuts.size());
                   out += marker.SerializeAsString();
                 }};
  auto cut = CutPayloads(bytes, {{kGraphNode, kNodeAttr, kEntryValue, kAttrTensor}, kTensorContent}, on);
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  bool parsed = cut && p.graph.ParseFromString(*cut);
  if (!parsed) {  // parse whole, to name what is wrong
    p.cuts.clear();
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
    in.SetTotalBytesLimit(INT_MAX);
    if (!p.graph.ParseFromCodedStream(&in) || !in.ConsumedEntireMessage())
      return Bad(path, "not a valid TensorFlow GraphDef protobuf (truncated, corrupt or another format)");
    for (auto& n : *p.graph.mutable_node())  // a file's own field 536870000 is not ours
      for (auto& a : *n.mutable_attr())
        if (a.value().has_tensor()) a.mutable_value()->mutable_tensor()->clear_npukit_cut_content();
  }
  p.file = file.value().share();
  return p;
}

// The graph walk: names, data edges, order.
struct Walk {
  std::map<std::string, const NodeDef*> by_name;
  std::vector<const NodeDef*> order;
};

Result<Walk> Order(const std::string& path, GraphDef& gd) {
  Walk w;
  for (NodeDef& n : *gd.mutable_node()) {
    if (!IsUtf8(n.name()) || !IsUtf8(n.op()))
      return Status::Error("E16005", "--model", path, "node name '" + EscapeNonUtf8(n.name()) + "' is not valid UTF-8", "The file is corrupt; export the model again.");
    if (n.name().empty()) return Bad(path, "a node (type " + n.op() + ") has no name");
    if (!w.by_name.emplace(n.name(), &n).second)
      return Status::Error("E13009", "--model", path, "two nodes are named '" + n.name() + "'", "Node names of a GraphDef are unique; export the model again.");
    auto* inputs = n.mutable_input();  // control edges order nothing that is computed: they go
    inputs->erase(std::remove_if(inputs->begin(), inputs->end(), [](const std::string& s) { return s.starts_with("^"); }), inputs->end());
  }
  std::map<const NodeDef*, int> pending;
  std::map<const NodeDef*, std::vector<const NodeDef*>> readers;
  for (const auto& [name, n] : w.by_name) {
    pending[n] = 0;
    for (const std::string& in : n->input()) {
      auto [src, k] = tf::ParseInputName(in);
      auto it = w.by_name.find(src);
      if (it == w.by_name.end() || k < 0)
        return Status::Error("E12009", "--model", path, "node '" + n->name() + "' reads '" + in + "', which no node of the graph produces",
                             "The GraphDef is incomplete; freeze the graph again (all variables to constants).");
      ++pending[n];
      readers[it->second].push_back(n);
    }
  }
  std::deque<const NodeDef*> ready;
  for (const NodeDef& n : gd.node())
    if (pending[&n] == 0) ready.push_back(&n);
  while (!ready.empty()) {
    const NodeDef* n = ready.front();
    ready.pop_front();
    w.order.push_back(n);
    for (const NodeDef* r : readers[n])
      if (--pending[r] == 0) ready.push_back(r);
  }
  if (w.order.size() != static_cast<size_t>(gd.node_size())) {
    std::string stuck;
    for (const NodeDef& n : gd.node())
      if (pending[&n] > 0 && stuck.size() < 200) stuck += (stuck.empty() ? "" : ", ") + n.name();
    return Bad(path, "the graph has a cycle through " + stuck, "A frozen inference graph has no cycles (while loops are control flow, which atc does not take).");
  }
  return w;
}

// With --out_nodes, only what those outputs are computed from is the model: a frozen graph may still hold
// training or saving ops beside it (string constants, Assign, SaveV2), which need not convert. Without
// --out_nodes every sink is an output and nothing goes. Names that no node has are left for the E11017 below.
void KeepWhatOutputsNeed(GraphDef& gd, const ImportOptions& opts) {
  if (opts.out_nodes.empty()) return;
  std::map<std::string, const NodeDef*> by_name;
  for (const NodeDef& n : gd.node()) by_name.emplace(n.name(), &n);
  std::set<std::string> needed;
  std::vector<std::string> pending;  // nodes to visit, from the outputs up their inputs
  for (const auto& [name, k] : opts.out_nodes)
    if (by_name.count(name)) pending.push_back(name);
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    auto it = by_name.find(name);
    if (it == by_name.end() || !needed.insert(name).second) continue;
    for (const std::string& in : it->second->input()) pending.push_back(tf::ParseInputName(in).first);
  }
  if (needed.empty()) return;
  auto* nodes = gd.mutable_node();
  nodes->erase(std::remove_if(nodes->begin(), nodes->end(), [&](const NodeDef& n) { return !needed.count(n.name()); }), nodes->end());
}

Status UnsupportedError(const std::string& path, const std::vector<UnsupportedNode>& bad) {
  return Status::Error("E13010", "--model", path, std::to_string(bad.size()) + " node(s) are not supported:" + UnsupportedList(bad),
                       "Replace these operators in the model (or freeze control flow away); atc --mode=3 writes the full report.");
}

// The library's functions count when a node calls one: by its name (Defun) or through a PartitionedCall.
void CheckOps(const GraphDef& gd, std::vector<UnsupportedNode>& bad) {
  std::set<std::string> ops;
  for (const NodeDef& n : gd.node()) ops.insert(n.op());
  const bool any_call = ops.count("PartitionedCall") || ops.count("StatefulPartitionedCall");
  for (const auto& f : gd.library().function())
    if (any_call || ops.count(f.signature().name()))
      bad.push_back({f.signature().name(), "FunctionDef", "tensorflow", 0, "a function of the graph's library (E12013): atc takes frozen graphs without functions"});
  for (const NodeDef& n : gd.node()) {
    if (tf::FindOp(n.op())) continue;
    auto why = tf::KnownUnsupported(n.op());
    bad.push_back({n.name(), n.op(), "tensorflow", 0, why ? *why : "no TensorFlow parser is registered for this op type"});
  }
}

Status ApplyInputShapes(Graph& g, const ImportOptions& opts) {
  std::string names;
  for (int i : g.inputs) names += (names.empty() ? "" : ", ") + g.values[i].name;
  for (const auto& [given, shape] : opts.input_shapes) {
    std::string name = given.ends_with(":0") ? given.substr(0, given.size() - 2) : given;
    int id = g.FindValue(name);
    if (id < 0 || std::find(g.inputs.begin(), g.inputs.end(), id) == g.inputs.end())
      return Status::Error("E10016", "--input_shape", given, "'" + given + "' is not a Placeholder of the graph; its Placeholders are: " + names);
    Value& v = g.values[id];
    if (v.has_shape && v.shape.size() != shape.size())
      return Status::Error("E10002", "--input_shape", given + ":" + ShapeToString(shape),
                           "the Placeholder has rank " + std::to_string(v.shape.size()) + " (" + ShapeToString(v.shape) + ")");
    v.shape = shape;
    v.has_shape = true;
  }
  for (int i : g.inputs)
    if (std::string why = ShapeLimitProblem(g.values[i].shape); !why.empty())
      return Status::Error("E16005", "input", g.values[i].name, "the input's shape " + ShapeToString(g.values[i].shape) + ": " + why,
                           "Give the input a real shape with --input_shape.");
  return Status::Ok();
}

// A graph output named as the user knows it: the tensor's node name (an Identity's, when one was removed).
void AddOutput(GraphBuilder& b, const std::string& name, int v) {
  Graph& g = b.graph();
  bool plain = g.values[v].producer >= 0 && !IsGraphOutput(g, v) && g.values[v].name != name;
  if (plain && g.FindValue(name) < 0) {
    g.RenameValue(v, name);
  } else if (g.values[v].name != name || g.values[v].producer < 0) {
    v = b.Add(name, {"Identity", {v}}, {name})[0];
  }
  g.outputs.push_back(v);
}

Status SelectOutputs(tf::Converter& c, const Walk& w, const ImportOptions& opts, GraphBuilder& b) {
  if (!opts.out_nodes.empty()) {
    for (const auto& [node, k] : opts.out_nodes) {
      auto it = w.by_name.find(node);
      if (it == w.by_name.end()) return Status::Error("E11017", "--out_nodes", node, "node '" + node + "' is not found in the model");
      auto v = c.Lookup(tf::TensorName(node, k));
      if (!v) return Status::Error("E10001", "--out_nodes", node + ":" + std::to_string(k), "the node has no output " + std::to_string(k));
      AddOutput(b, k == 0 ? node : node + ":" + std::to_string(k), *v);
    }
    return Status::Ok();
  }
  for (const NodeDef* n : w.order) {  // the sinks: ops nobody reads (a NoOp, a Const or an unread input is no result)
    if (n->op() == "NoOp" || n->op() == "Const" || n->op() == "Placeholder" || c.Readers(n->name()) > 0) continue;
    for (int k = 0;; ++k) {
      auto v = c.Lookup(tf::TensorName(n->name(), k));
      if (!v) break;
      if (k > 0 && c.Readers(n->name(), k) > 0) continue;
      AddOutput(b, k == 0 ? n->name() : n->name() + ":" + std::to_string(k), *v);
    }
  }
  if (b.graph().outputs.empty()) return Status::Error("E16001", "--model", "", "the graph computes nothing: every node is a Const, Placeholder or NoOp");
  return Status::Ok();
}

}  // namespace

Result<Graph> ImportTensorFlow(const std::string& path, const ImportOptions& opts, ModelInfo* info) {
  RegisterBuiltinSchemas();
  ModelInfo local;
  if (!info) info = &local;
  auto start = std::chrono::steady_clock::now();
  NPU_ASSIGN_OR_RETURN(ParsedGraph p, Parse(path));
  GraphDef& gd = p.graph;
  if (gd.node_size() == 0) return Bad(path, "the GraphDef has no nodes (is this a TensorFlow model?)");
  info->producer = "TensorFlow (GraphDef producer " + std::to_string(gd.versions().producer()) + ")";
  for (const NodeDef& n : gd.node()) info->nodes.emplace_back(n.name(), n.op());
  KeepWhatOutputsNeed(gd, opts);
  CheckOps(gd, info->unsupported);
  if (!info->unsupported.empty()) return UnsupportedError(path, info->unsupported);
  NPU_ASSIGN_OR_RETURN(Walk w, Order(path, gd));

  Graph g;
  g.name = "graph";
  tf::Converter c(g, std::move(p.cuts), p.file);
  for (const NodeDef* n : w.order)
    for (const std::string& in : n->input()) c.Consumed(tf::TensorName(tf::ParseInputName(in).first, tf::ParseInputName(in).second), n);
  for (const NodeDef* n : w.order) {
    bool inputs_ok = true;
    for (int j = 0; j < n->input_size(); ++j) inputs_ok = inputs_ok && c.Lookup(n->input(j)).has_value();
    if (!inputs_ok) continue;  // after an unsupported node
    if (auto bad = tf::FindOp(n->op())->convert(c, *n)) info->unsupported.push_back({n->name(), n->op(), "tensorflow", 0, bad->reason});
  }
  if (c.error()) return *c.error();
  if (!info->unsupported.empty()) return UnsupportedError(path, info->unsupported);
  NPU_RETURN_IF_ERROR(ApplyInputShapes(g, opts));
  NPU_RETURN_IF_ERROR(SelectOutputs(c, w, opts, c.b));
  g.RemoveDeadNodes();
  NPU_RETURN_IF_ERROR(g.Verify());
  NPU_LOG(kInfo, "TF", "imported " << path << ": " << gd.node_size() << " TensorFlow nodes -> " << g.nodes.size() << " nodes in "
                                   << log::MsSince(start) << " ms");
  return g;
}

const Importer& TensorFlowImporter() {
  struct Tf final : Importer {
    std::string_view name() const override { return "TensorFlow"; }
    std::vector<std::string_view> input_formats() const override { return {"NHWC", "NCHW", "NDHWC", "NCDHW", "ND"}; }
    Result<Graph> Import(const std::string& path, const ImportOptions& opts, ModelInfo* info) const override { return ImportTensorFlow(path, opts, info); }
  };
  static const Tf importer;
  return importer;
}

}  // namespace npu
