#include "om/om_model.h"

#include "om/ge_convert.h"
#include "om/ge_model.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/text_format.h>
#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <set>

#include "base/file_io.h"
#include "ir/graph_edit.h"
#include "om.pb.h"
#include "task.pb.h"

namespace npu {
namespace {

void SaveTiling(const Task& t, om::TilingDef* d) {
  const Tiling& x = t.tiling;
  d->set_block_batch(x.block_batch);
  d->set_block_m(x.block_m);
  d->set_block_n(x.block_n);
  d->set_base_m(x.base_m);
  d->set_base_n(x.base_n);
  d->set_base_k(x.base_k);
  d->set_step_m(x.step_m);
  d->set_step_n(x.step_n);
  d->set_step_k(x.step_k);
  d->set_no_db_l1(!x.db_l1);
  d->set_no_db_l0(!x.db_l0);
  d->set_m_inner(!x.n_inner);
  d->set_ub_tile(x.ub_tile);
  d->set_source(t.tiling_source);
}

// A missing TilingDef (an .om from before tilings existed) leaves the defaults; block_dim comes from the task.
void LoadTiling(const om::TilingDef& d, Task& t) {
  Tiling& x = t.tiling;
  x.block_dim = static_cast<int32_t>(t.block_dim);
  auto at_least_one = [](int32_t v) { return v < 1 ? 1 : v; };
  x.block_batch = at_least_one(d.block_batch());
  x.block_m = at_least_one(d.block_m());
  x.block_n = at_least_one(d.block_n());
  if (d.base_m() > 0) x.base_m = d.base_m();
  if (d.base_n() > 0) x.base_n = d.base_n();
  if (d.base_k() > 0) x.base_k = d.base_k();
  x.step_m = at_least_one(d.step_m());
  x.step_n = at_least_one(d.step_n());
  x.step_k = at_least_one(d.step_k());
  x.db_l1 = !d.no_db_l1();
  x.db_l0 = !d.no_db_l0();
  x.n_inner = !d.m_inner();
  x.ub_tile = d.ub_tile();
  t.tiling_source = d.source().empty() ? "builtin" : d.source();
}

std::optional<WorkKind> ParseWorkKind(std::string_view s) {
  for (WorkKind k : {WorkKind::kCube, WorkKind::kVector, WorkKind::kAiCpu, WorkKind::kView})
    if (WorkKindName(k) == s) return k;
  if (s.empty()) return WorkKind::kVector;  // .om files written before tasks had a kind
  return std::nullopt;
}

void FillDesc(om::TensorDesc* d, const Value& v) {
  d->set_name(v.name);
  d->set_dtype(static_cast<int32_t>(v.dtype));
  d->set_has_shape(v.has_shape);
  Shape device = DeviceShapeOf(v);
  for (int64_t x : device) d->add_shape(x);
  for (int64_t x : v.shape) d->add_origin_shape(x);
  d->set_layout(std::string(FormatName(DeviceFormat(v))));
  d->set_origin_layout(LayoutOf(v));
  if (v.device_groups > 1) d->set_sub_format(v.device_groups);
  int64_t n = v.has_shape ? NumElements(device) : -1;
  d->set_size(n < 0 ? -1 : GeTensorSize(n * static_cast<int64_t>(DTypeSize(v.dtype))));  // as GE sizes it
}

// A tensor desc as the graph keeps it: origin shape and layout, plus the device format when it differs.
// .om files from before device formats have no origin fields (or equal ones) and load unchanged.
Status ReadDesc(const om::TensorDesc& d, Value& v, const std::string& path) {
  auto dt = DTypeFromGe(d.dtype());
  if (!dt) return Status::Error("E10003", "--om", path, "tensor '" + d.name() + "' has unknown dtype " + std::to_string(d.dtype()));
  v.dtype = *dt;
  v.has_shape = d.has_shape();
  v.shape.assign(d.shape().begin(), d.shape().end());
  v.layout = d.layout();
  auto device = FormatFromName(d.layout());
  if (!device || !IsBlockedFormat(*device)) return Status::Ok();
  if (d.origin_layout().empty() || d.origin_layout() == d.layout())
    return Status::Error("E10003", "--om", path, "tensor '" + d.name() + "' is " + d.layout() + " but has no origin layout");
  v.shape.assign(d.origin_shape().begin(), d.origin_shape().end());
  v.layout = d.origin_layout();
  v.device_format = device;
  v.device_groups = std::max<int64_t>(d.sub_format(), 1);
  if (!v.has_shape) return Status::Ok();
  auto expect = DeviceShape(DeviceLayoutOf(v));
  if (!expect.ok() || expect.value() != Shape(d.shape().begin(), d.shape().end()))
    return Status::Error("E10003", "--om", path, "tensor '" + d.name() + "': " + d.layout() + " shape " +
                         ShapeToString(Shape(d.shape().begin(), d.shape().end())) + " does not hold origin shape " + ShapeToString(v.shape));
  return Status::Ok();
}

// Lays constant tensors out in WEIGHTS_DATA, 64-byte aligned each, as a list of pieces: a tensor stored
// as it is points at its own bytes; a constant the device holds in a blocked format is converted while the
// file is written (om::WritePieces), straight into the stream. The tensors are kept alive until then.
// With `dedupe` (a model with shape profiles, whose graphs share most weights) equal contents are stored once.
class WeightPacker {
 public:
  // `external`: 1 writes each weight to <dir>/weight/weight_<hash>; 2 collects them for <dir>/<combined>.
  WeightPacker(bool dedupe, int external, std::string dir, std::string combined)
      : dedupe_(dedupe), external_(external), dir_(std::move(dir)), combined_(std::move(combined)) {}
  const Status& status() const { return status_; }
  // A constant of the graph (origin layout), stored in its value's device format, described as the value.
  void Add(const Value& v, const Tensor& constant, om::WeightRef* ref) {
    if (!v.device_format) Add(constant, ref);
    else if (external_ == 1) {  // a file per weight, named by its stored content: convert now
      auto t = ToDevice(constant, *v.device_format, v.device_groups);
      if (t.ok()) Add(t.value(), ref);
      else if (status_.ok()) status_ = t.status();
    } else {
      AddConverted(constant, DeviceLayout{*v.device_format, constant.shape(), DTypeSize(constant.dtype()), v.device_groups}, ref);
    }
    ref->mutable_desc()->Clear();
    FillDesc(ref->mutable_desc(), v);
  }
  void Add(const Tensor& t, om::WeightRef* ref) {
    if (external_ == 1) return AddFile(t, ref);
    FillTensorDesc(t.dtype(), t.shape(), ref);
    Place(t, t.nbytes(), DeviceLayout{}, ref, [&] { pieces_.emplace_back(t.stored_bytes()); });
  }
  const std::vector<om::Piece>& pieces() const { return pieces_; }
  size_t size() const { return size_; }

 private:
  std::vector<om::Piece> pieces_;
  std::vector<Tensor> keep_;
  size_t size_ = 0;
  bool dedupe_;
  // content (hash of the source bytes, their size, the conversion) -> offset
  std::map<std::tuple<uint64_t, uint64_t, size_t, Format, int64_t>, size_t> stored_;
  int external_;
  std::string dir_, combined_;
  std::set<std::string> files_;  // external_weight 1: the files written (content-addressed, so shared)
  Status status_;

  void AddConverted(const Tensor& t, const DeviceLayout& l, om::WeightRef* ref) {
    auto shape = DeviceShape(l);
    if (!shape.ok()) {
      if (status_.ok()) status_ = shape.status();
      return;
    }
    size_t n = static_cast<size_t>(NumElements(shape.value())) * l.elem_size;
    FillTensorDesc(t.dtype(), shape.value(), ref);
    Place(t, n, l, ref, [&] {
      pieces_.emplace_back(n, [t, l](std::span<std::byte> out) { return ToDeviceBytes(l, t.stored_bytes(), out); });
    });
  }

  // Gives the tensor (`n` bytes once stored through `l`) its offset, or the offset of equal content stored
  // before; `append` adds its piece.
  template <class Append>
  void Place(const Tensor& t, size_t n, const DeviceLayout& l, om::WeightRef* ref, Append&& append) {
    if (external_ == 2) ref->set_file(combined_);
    if (dedupe_) {
      XXH128_hash_t h = XXH3_128bits(t.stored_bytes().data(), t.nbytes());
      auto key = std::make_tuple(h.high64, h.low64, t.nbytes(), l.format, l.groups);
      if (auto it = stored_.find(key); it != stored_.end()) {
        ref->set_offset(it->second);
        ref->set_size(n);
        return;
      }
      stored_[key] = Aligned();
    }
    static const std::byte kZeros[om::kWeightAlign] = {};
    size_t pad = Aligned() - size_;
    if (pad) pieces_.emplace_back(std::span(kZeros, pad));
    size_ += pad;
    ref->set_offset(size_);
    ref->set_size(n);
    if (n) append();
    size_ += n;
    keep_.push_back(t);
  }

  void AddFile(const Tensor& t, om::WeightRef* ref) {
    XXH128_hash_t h = XXH3_128bits(t.stored_bytes().data(), t.nbytes());
    char hex[33];
    std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(h.high64), static_cast<unsigned long long>(h.low64));
    std::string name = std::string("weight/weight_") + hex;
    ref->set_file(name);
    ref->set_offset(0);
    ref->set_size(t.nbytes());
    FillTensorDesc(t.dtype(), t.shape(), ref);
    if (!status_.ok() || !files_.insert(name).second) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_ + "/weight", ec);
    status_ = ec ? Status::Error("E13004", "--output", dir_ + "/weight", "cannot create the weight folder: " + ec.message())
                 : WriteFileAtomic(dir_ + "/" + name, t.stored_bytes());
  }

  size_t Aligned() const { return (size_ + om::kWeightAlign - 1) / om::kWeightAlign * om::kWeightAlign; }
  static void FillTensorDesc(DType dtype, const Shape& shape, om::WeightRef* ref) {
    auto* d = ref->mutable_desc();
    d->set_dtype(static_cast<int32_t>(dtype));
    d->set_has_shape(true);
    for (int64_t x : shape) d->add_shape(x);
  }
};

void SaveAttr(const Attr& a, om::AttrValue* out, WeightPacker& w) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) out->set_i(v);
        else if constexpr (std::is_same_v<T, float>) out->set_f(v);
        else if constexpr (std::is_same_v<T, std::string>) out->set_s(v);
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>) *out->mutable_ints()->mutable_v() = {v.begin(), v.end()};
        else if constexpr (std::is_same_v<T, std::vector<float>>) *out->mutable_floats()->mutable_v() = {v.begin(), v.end()};
        else if constexpr (std::is_same_v<T, std::vector<std::string>>) *out->mutable_strings()->mutable_v() = {v.begin(), v.end()};
        else w.Add(v, out->mutable_t());
      },
      a);
}

// Protobuf writes map fields (op attrs) in hash order unless asked not to: the same model would give
// different .om bytes from run to run.
std::string SerializeDeterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    m.SerializeToCodedStream(&coded);
  }
  return out;
}

Status Corrupt(const std::string& path, std::string why) { return Status::Error("E10003", "--om", path, std::move(why)); }

// Where a model's weights are read from: WEIGHTS_DATA, or the external weight files next to the .om
// (--external_weight), mapped once each. Tensors alias the mapped bytes.
class WeightSource {
 public:
  WeightSource(std::string path, std::span<const std::byte> blob, std::shared_ptr<const void> owner)
      : path_(std::move(path)), blob_(blob), owner_(std::move(owner)) {}

  Result<Tensor> Load(const om::WeightRef& r) {
    auto dt = DTypeFromGe(r.desc().dtype());
    if (!dt) return Corrupt(path_, "weight '" + r.desc().name() + "' has unknown dtype " + std::to_string(r.desc().dtype()));
    Shape s(r.desc().shape().begin(), r.desc().shape().end());
    for (int64_t d : s)
      if (d < 0) return Corrupt(path_, "weight '" + r.desc().name() + "' has a negative dim");
    std::span<const std::byte> blob = blob_;
    std::shared_ptr<const void> owner = owner_;
    if (!r.file().empty()) {
      NPU_ASSIGN_OR_RETURN(const MappedFile* f, External(r.file()));
      blob = f->bytes(), owner = f->share();
    }
    size_t need = static_cast<size_t>(NumElements(s)) * DTypeSize(*dt);
    if (need != r.size() || r.offset() > blob.size() || r.size() > blob.size() - r.offset())
      return Corrupt(path_, "weight '" + r.desc().name() + "' lies outside " + (r.file().empty() ? "WEIGHTS_DATA" : r.file()) +
                                " or its size does not match its shape");
    return Tensor::View(*dt, s, std::move(owner), blob.data() + r.offset());
  }

 private:
  std::string path_;
  std::span<const std::byte> blob_;
  std::shared_ptr<const void> owner_;
  std::map<std::string, MappedFile> files_;

  Result<const MappedFile*> External(const std::string& file) {
    if (auto it = files_.find(file); it != files_.end()) return &it->second;
    std::filesystem::path rel(file);
    bool inside = rel.is_relative() && std::none_of(rel.begin(), rel.end(), [](const auto& part) { return part == ".."; });
    if (!inside) return Corrupt(path_, "external weight file '" + file + "' is not inside the .om's folder");
    std::string full = (std::filesystem::path(path_).parent_path() / rel).string();
    if (!FileExists(full))
      return Status::Error("E13001", "--external_weight", full, "the .om " + path_ + " keeps weights in this file, which does not exist",
                           "Keep the weight/ folder (external_weight 1) or <model>_weight_combined (2) next to the .om, as atc wrote them.");
    NPU_ASSIGN_OR_RETURN(MappedFile f, MappedFile::Open(full));
    return &files_.emplace(file, std::move(f)).first->second;
  }
};

// A shape-only op of static shapes (Reshape, Flatten, Squeeze, Unsqueeze, Identity) that GE removes from the graph
// it saves: its reader's input desc keeps the shape, and the tensor is its input's bytes. One that makes a graph
// output, reads a constant, or sits between device formats stays.
bool RemovedFromOm(const Graph& g, const Node& n) {
  static constexpr std::string_view kShapeOnly[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
  if (std::find(std::begin(kShapeOnly), std::end(kShapeOnly), n.op_type) == std::end(kShapeOnly)) return false;
  if (n.outputs.size() != 1 || n.outputs[0] < 0 || n.inputs.empty() || n.inputs[0] < 0) return false;
  const Value &in = g.values[n.inputs[0]], &out = g.values[n.outputs[0]];
  if (in.constant || in.device_format || out.device_format || !out.has_shape || IsGraphOutput(g, n.outputs[0])) return false;
  return std::all_of(out.shape.begin(), out.shape.end(), [](int64_t d) { return d >= 0; });
}

// One profile's graph: descs, the weights it reads (into the shared WEIGHTS_DATA) and its ops. `op_position`
// gets each node's place among the saved ops (-1: removed as shape-only).
Status SaveGraph(const Graph& g, om::GraphDef* gd, WeightPacker& weights, std::vector<int>& op_position) {
  gd->set_name(g.name);
  for (int i : g.inputs) FillDesc(gd->add_input(), g.values[i]);
  for (int o : g.outputs) FillDesc(gd->add_output(), g.values[o]);
  // What a removed op's output is: the tensor its input is (through chains of them).
  std::vector<int> source(g.values.size());
  for (size_t v = 0; v < source.size(); ++v) source[v] = static_cast<int>(v);
  op_position.assign(g.nodes.size(), -1);
  int saved = 0;
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if (RemovedFromOm(g, n)) source[n.outputs[0]] = source[n.inputs[0]];
    else op_position[k] = saved++;
  }
  // Constants that something still reads: the saved nodes' inputs and graph outputs.
  std::vector<bool> used(g.values.size(), false);
  for (size_t k = 0; k < g.nodes.size(); ++k)
    for (int i : g.nodes[k].inputs)
      if (i >= 0 && op_position[k] >= 0) used[i] = true;
  for (int o : g.outputs) used[o] = true;
  std::vector<size_t> constants;
  for (size_t i = 0; i < g.values.size(); ++i)
    if (used[i] && g.values[i].constant) constants.push_back(i);
  for (size_t k : constants) weights.Add(g.values[k], *g.values[k].constant, gd->add_weight());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    const Node& n = g.nodes[k];
    if (op_position[k] < 0) continue;
    om::OpDef* op = gd->add_op();
    op->set_name(n.name);
    op->set_type(ShownType(n));
    op->set_kernel_type(n.op_type);
    op->set_id(static_cast<int64_t>(k));
    op->set_opset(n.opset);
    op->set_engine(std::string(EngineName(NodeEngine(n))));
    for (int i : n.inputs) {  // a removed op's output: its source tensor, with the reshaped desc
      op->add_input(i < 0 ? "" : g.values[source[i]].name);
      if (i >= 0) FillDesc(op->add_input_desc(), g.values[i]);
    }
    for (int o : n.outputs) {
      op->add_output(g.values[o].name);
      FillDesc(op->add_output_desc(), g.values[o]);
    }
    for (const auto& name : n.original_names) op->add_original_op_names(name);
    for (const auto& [key, a] : n.attrs) SaveAttr(a, &(*op->mutable_attr())[key], weights);
  }
  return Status::Ok();
}

// TASK_INFO is CANN's domi.ModelTaskDef (om/task.proto); npukit's own fields of a task (engine, work kind,
// tiling, profile) ride along as ModelTaskDef.attr["_npukit_task.<n>"], the text form of om.proto's TaskDef.
// The model attribute kTaskInfoAttr marks such files; older npukit files hold om.proto's ModelTaskDef.
constexpr const char* kTaskInfoAttr = "_npukit_task_info";
constexpr const char* kTaskInfoDomi = "domi.ModelTaskDef";
constexpr const char* kTaskExtraPrefix = "_npukit_task.";
// rtModelTaskType (runtime/rt_model.h) and ccKernelType (see om/task.proto).
constexpr uint32_t kTaskKernel = 0, kTaskKernelEx = 5, kKernelTypeTe = 2;

std::string OneLineText(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::TextFormat::Printer p;
  p.SetSingleLineMode(true);
  p.PrintToString(m, &out);
  return out;
}

void SaveTasks(const std::vector<Task>& tasks, const std::vector<int>& op_position, uint32_t graph_index, npukit::domi::ModelTaskDef& td) {
  for (Task t : tasks) {
    if (t.op_index >= op_position.size() || op_position[t.op_index] < 0) continue;  // a removed shape-only op's
    t.op_index = static_cast<uint32_t>(op_position[t.op_index]);
    const std::string key = kTaskExtraPrefix + std::to_string(td.task_size());
    npukit::domi::TaskDef* d = td.add_task();
    d->set_id(t.task_id);
    d->set_stream_id(t.stream_id);
    if (t.engine == Engine::kAiCpu) {
      d->set_type(kTaskKernelEx);
      d->mutable_kernel_ex()->set_op_index(t.op_index);
    } else {
      d->set_type(kTaskKernel);
      auto* k = d->mutable_kernel();
      k->mutable_context()->set_kernel_type(kKernelTypeTe);
      k->mutable_context()->set_op_index(t.op_index);
      k->set_stub_func(t.kernel_name);
      k->set_kernel_name(t.kernel_name);
      k->set_block_dim(t.block_dim);
    }
    om::TaskDef extra;
    extra.set_engine(std::string(EngineName(t.engine)));
    extra.set_kind(std::string(WorkKindName(t.kind)));
    extra.set_graph_index(graph_index);
    if (t.engine == Engine::kAiCpu) extra.set_kernel_name(t.kernel_name);
    SaveTiling(t, extra.mutable_tiling());
    (*td.mutable_attr())[key] = OneLineText(extra);
  }
}

// The tasks of a domi.ModelTaskDef as om.proto TaskDefs (what LoadOm reads from older files directly).
Status DomiTasks(std::span<const std::byte> bytes, const std::string& path, google::protobuf::RepeatedPtrField<om::TaskDef>& out) {
  npukit::domi::ModelTaskDef td;
  if (bytes.size() > INT_MAX || !td.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return Corrupt(path, "TASK_INFO is not a domi.ModelTaskDef");
  for (int n = 0; n < td.task_size(); ++n) {
    const npukit::domi::TaskDef& d = td.task(n);
    om::TaskDef* t = out.Add();
    auto extra = td.attr().find(kTaskExtraPrefix + std::to_string(n));
    if (extra == td.attr().end() || !google::protobuf::TextFormat::ParseFromString(extra->second, t))
      return Corrupt(path, "task " + std::to_string(n) + " of TASK_INFO has no readable " + kTaskExtraPrefix + std::to_string(n) + " attribute");
    t->set_task_id(d.id());
    t->set_stream_id(d.stream_id());
    if (d.type() == kTaskKernelEx) {
      t->set_op_index(d.kernel_ex().op_index());
      t->set_block_dim(1);
    } else {
      t->set_op_index(d.kernel().context().op_index());
      t->set_block_dim(d.kernel().block_dim());
      t->set_kernel_name(d.kernel().kernel_name());
    }
  }
  return Status::Ok();
}

// The model attributes atc --mode=6 shows, as CANN sets them (integers; om_info_list the five partition sizes
// the "om info" line lists). MODEL_DEF holds om_info_list, so its own size is found by fixed point.
std::string GeModelWithResources(npukit::ge::ModelDef ge, const npukit::domi::ModelTaskDef& td, size_t task_info_bytes) {
  auto& a = *ge.mutable_attr();
  a["memory_size"].set_i(static_cast<int64_t>(td.memory_size()));
  a["weight_size"].set_i(static_cast<int64_t>(td.weight_size()));
  a["stream_num"].set_i(td.stream_num());
  a["event_num"].set_i(td.event_num());
  std::string bytes;
  size_t model_def = 0;
  for (int pass = 0; pass < 4; ++pass) {  // a varint grows at most a few times
    auto* list = a["om_info_list"].mutable_list();
    list->clear_i();
    for (uint64_t v : {uint64_t{model_def}, td.weight_size(), uint64_t{0}, uint64_t{0}, uint64_t{task_info_bytes}}) list->add_i(static_cast<int64_t>(v));
    bytes = SerializeDeterministic(ge);
    if (bytes.size() == model_def) break;
    model_def = bytes.size();
  }
  return bytes;
}

void SaveProfiles(const ShapeProfiles& p, om::ShapeProfilesDef* d) {
  d->set_kind(p.kind);
  for (const auto& [name, shape] : p.inputs) {
    auto* in = d->add_input();
    in->set_name(name);
    in->set_has_shape(true);
    for (int64_t x : shape) in->add_shape(x);
  }
  for (const auto& v : p.values) *d->add_profile()->mutable_v() = {v.begin(), v.end()};
}

}  // namespace

Status SaveOm(const std::string& path, const OmModel& model) {
  om::ModelDef md;
  md.set_name(model.graph.name);
  md.set_version(1);
  for (const auto& [k, v] : model.attrs) (*md.mutable_attr())[k] = v;
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  std::string combined = std::filesystem::path(path).stem().string() + "_weight_combined";
  WeightPacker weights(!model.other_profiles.empty(), model.external_weight, dir, combined);
  (*md.mutable_attr())[kTaskInfoAttr] = kTaskInfoDomi;
  npukit::domi::ModelTaskDef td;
  td.set_version("npukit");
  std::vector<int> op_position;
  NPU_RETURN_IF_ERROR(SaveGraph(model.graph, md.add_graph(), weights, op_position));
  SaveTasks(model.tasks, op_position, 0, td);
  for (size_t k = 0; k < model.other_profiles.size(); ++k) {
    NPU_RETURN_IF_ERROR(SaveGraph(model.other_profiles[k].graph, md.add_graph(), weights, op_position));
    SaveTasks(model.other_profiles[k].tasks, op_position, static_cast<uint32_t>(k + 1), td);
  }
  if (!model.profiles.empty()) SaveProfiles(model.profiles, md.mutable_profiles());
  for (const InputRange& r : model.input_ranges) {
    auto* d = md.add_input_range();
    d->set_name(r.name);
    *d->mutable_min() = {r.min.begin(), r.min.end()};
    *d->mutable_max() = {r.max.begin(), r.max.end()};
  }
  NPU_RETURN_IF_ERROR(weights.status());
  // External weights land before the .om that points at them.
  std::vector<om::Piece> inline_weights = weights.pieces();
  if (model.external_weight == 2) {
    NPU_ASSIGN_OR_RETURN(auto w, AtomicFileWriter::Create(dir + "/" + combined));
    NPU_RETURN_IF_ERROR(om::WritePieces(*w, weights.pieces()));
    NPU_RETURN_IF_ERROR(w->Commit());
    inline_weights.clear();
  }
  td.set_weight_size(inline_weights.empty() ? 0 : weights.size());
  td.set_stream_num(StreamCount(model.tasks));
  td.set_event_num(EventCount(model.graph, model.tasks));
  uint64_t planned = 0;  // what the ops' memory offsets span
  npukit::ge::ModelDef ge = om::ToGeModel(md, &planned);
  td.set_memory_size(std::max(planned, FeatureMapBytes(model.graph, model.tasks)));
  for (const ProfileGraph& p : model.other_profiles) td.set_memory_size(std::max(td.memory_size(), FeatureMapBytes(p.graph, p.tasks)));
  std::string td_bytes = SerializeDeterministic(td);
  std::string md_bytes = GeModelWithResources(std::move(ge), td, td_bytes.size());
  auto as_bytes = [](const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); };
  return om::WriteOmFile(path, model.header,
                         {{om::PartitionType::kModelDef, {om::Piece(as_bytes(md_bytes))}},
                          {om::PartitionType::kWeightsData, inline_weights, om::kWeightAlign},
                          {om::PartitionType::kTaskInfo, {om::Piece(as_bytes(td_bytes))}}});
}

Result<OmModel> LoadOm(const std::string& path, size_t profile) {
  NPU_ASSIGN_OR_RETURN(om::OmFile f, om::ReadOmFile(path));
  if (f.cann_built) return LoadCannOm(f, path, profile);
  OmModel m;
  m.header = f.info;
  auto md_bytes = f.partitions[om::PartitionType::kModelDef];
  // MODEL_DEF is a ge.proto.ModelDef (om/ge_convert.h); files npukit wrote before that hold its own
  // om.proto ModelDef, whose graphs sit in another field.
  om::ModelDef md;
  npukit::ge::ModelDef ge;
  google::protobuf::LogSilencer quiet;  // what is wrong goes into the Status, not protobuf's log
  if (md_bytes.size() > INT_MAX) return Corrupt(path, "MODEL_DEF is larger than 2 GB");
  if (ge.ParseFromArray(md_bytes.data(), static_cast<int>(md_bytes.size())) && ge.graph_size() > 0) {
    NPU_ASSIGN_OR_RETURN(md, om::FromGeModel(ge, path));
  } else if (!md.ParseFromArray(md_bytes.data(), static_cast<int>(md_bytes.size())) || md.graph_size() < 1) {
    return Corrupt(path, "MODEL_DEF does not parse");
  }
  m.model_def_size = md_bytes.size();
  for (const auto& [k, v] : md.attr()) m.attrs[k] = v;
  std::span<const std::byte> blob;
  if (f.partitions.count(om::PartitionType::kWeightsData)) blob = f.partitions[om::PartitionType::kWeightsData];
  m.weight_size = blob.size();
  WeightSource weight_source(path, blob, f.file.share());
  if (md.has_profiles()) {
    const auto& pd = md.profiles();
    m.profiles.kind = pd.kind();
    for (const auto& in : pd.input()) m.profiles.inputs.emplace_back(in.name(), Shape(in.shape().begin(), in.shape().end()));
    for (const auto& v : pd.profile()) m.profiles.values.emplace_back(v.v().begin(), v.v().end());
    if (m.profiles.values.size() != static_cast<size_t>(md.graph_size()))
      return Corrupt(path, std::to_string(m.profiles.values.size()) + " shape profiles but " + std::to_string(md.graph_size()) + " graphs");
  }
  for (const auto& r : md.input_range()) {
    if (r.min_size() != r.max_size()) return Corrupt(path, "input range of '" + r.name() + "' has " + std::to_string(r.min_size()) + " mins, " + std::to_string(r.max_size()) + " maxes");
    m.input_ranges.push_back({r.name(), Shape(r.min().begin(), r.min().end()), Shape(r.max().begin(), r.max().end())});
  }
  if (profile >= static_cast<size_t>(md.graph_size()))
    return Status::Error("E10001", "profile", std::to_string(profile), "the model has " + std::to_string(md.graph_size()) + " graph(s)");
  m.profile = profile;
  const om::GraphDef& gd = md.graph(static_cast<int>(profile));
  Graph& g = m.graph;
  g.name = gd.name();
  auto load_desc = [&](const om::TensorDesc& d) -> Result<int> {
    int id = g.AddValue(d.name());
    NPU_RETURN_IF_ERROR(ReadDesc(d, g.values[id], path));
    return id;
  };
  for (const auto& w : gd.weight()) {
    NPU_ASSIGN_OR_RETURN(int id, load_desc(w.desc()));
    NPU_ASSIGN_OR_RETURN(Tensor t, weight_source.Load(w));
    const Value& v = g.values[id];
    if (v.device_format) {  // kernels compute on the origin layout
      auto origin = FromDevice(t, *v.device_format, v.shape, v.device_groups);
      if (!origin.ok()) return Corrupt(path, "weight '" + v.name + "': " + origin.status().message());
      MappedFile::DropResidentPages(t.owner(), t.bytes());  // read once: the weights are not resident twice
      t = std::move(origin.value());
    }
    g.values[id].constant = std::move(t);
  }
  for (const auto& d : gd.input()) {
    NPU_ASSIGN_OR_RETURN(int id, load_desc(d));
    g.inputs.push_back(id);
  }
  // Each saved op's node, and the views put back for removed shape-only ops (a desc naming another tensor).
  std::vector<int> op_node;
  std::vector<bool> restored_view;
  auto restore_view = [&](int source, const om::TensorDesc& d) -> Result<int> {
    if (int id = g.FindValue(d.name()); id >= 0) {  // put back already, for another reader of the same view
      const int p = g.values[id].producer;
      if (p >= 0 && restored_view[static_cast<size_t>(p)] && g.nodes[p].inputs[0] == source) return id;
      return Corrupt(path, "a desc names tensor '" + d.name() + "', which is not a view of '" + g.values[source].name + "'");
    }
    NPU_ASSIGN_OR_RETURN(int id, load_desc(d));
    Node v;
    v.name = d.name();
    v.op_type = v.ascend_type = "Reshape";
    v.opset = 1;  // the target shape as an attribute
    v.attrs["shape"] = g.values[id].shape;
    v.attrs[kRemovedViewAttr] = int64_t{1};
    v.inputs = {source};
    v.outputs = {id};
    g.values[id].producer = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(v));
    restored_view.push_back(true);
    return id;
  };
  for (const auto& op : gd.op()) {
    Node n;
    n.name = op.name();
    n.op_type = op.kernel_type().empty() ? op.type() : op.kernel_type();
    n.ascend_type = op.type();
    n.opset = op.opset();
    n.original_names.assign(op.original_op_names().begin(), op.original_op_names().end());
    int desc = 0;  // omitted inputs have no desc; when the counts disagree (a damaged file) nothing is put back
    const bool descs_align = std::count_if(op.input().begin(), op.input().end(), [](const std::string& in) { return !in.empty(); }) ==
                             op.input_desc_size();
    for (const std::string& in : op.input()) {
      int id = in.empty() ? -1 : g.FindValue(in);
      if (!in.empty() && id < 0) return Corrupt(path, "op '" + op.name() + "' reads unknown tensor '" + in + "'");
      // A desc naming another tensor than the input: a shape-only op stood between them.
      if (id >= 0 && descs_align && !op.input_desc(desc).name().empty() && op.input_desc(desc).name() != in) {
        if (g.values[id].constant) return Corrupt(path, "op '" + op.name() + "' reads constant '" + in + "' as '" + op.input_desc(desc).name() + "'");
        NPU_ASSIGN_OR_RETURN(id, restore_view(id, op.input_desc(desc)));
      }
      desc += id >= 0 ? 1 : 0;
      n.inputs.push_back(id);
    }
    for (int j = 0; j < op.output_desc_size(); ++j) {
      NPU_ASSIGN_OR_RETURN(int id, load_desc(op.output_desc(j)));
      g.values[id].producer = static_cast<int>(g.nodes.size());
      n.outputs.push_back(id);
    }
    for (const auto& [k, a] : op.attr()) {
      switch (a.value_case()) {
        case om::AttrValue::kI: n.attrs[k] = a.i(); break;
        case om::AttrValue::kF: n.attrs[k] = a.f(); break;
        case om::AttrValue::kS: n.attrs[k] = a.s(); break;
        case om::AttrValue::kInts: n.attrs[k] = std::vector<int64_t>(a.ints().v().begin(), a.ints().v().end()); break;
        case om::AttrValue::kFloats: n.attrs[k] = std::vector<float>(a.floats().v().begin(), a.floats().v().end()); break;
        case om::AttrValue::kStrings: n.attrs[k] = std::vector<std::string>(a.strings().v().begin(), a.strings().v().end()); break;
        case om::AttrValue::kT: {
          NPU_ASSIGN_OR_RETURN(Tensor t, weight_source.Load(a.t()));
          n.attrs[k] = std::move(t);
          break;
        }
        default: return Corrupt(path, "op '" + op.name() + "' has an empty attribute '" + k + "'");
      }
    }
    op_node.push_back(static_cast<int>(g.nodes.size()));
    g.nodes.push_back(std::move(n));
    restored_view.push_back(false);
  }
  for (const auto& d : gd.output()) {
    int id = g.FindValue(d.name());
    if (id < 0) return Corrupt(path, "graph output '" + d.name() + "' is not produced");
    g.outputs.push_back(id);
  }
  NPU_RETURN_IF_ERROR(g.Verify().with_context("graph in " + path));
  if (f.partitions.count(om::PartitionType::kTaskInfo)) {
    auto tb = f.partitions[om::PartitionType::kTaskInfo];
    m.task_info_size = tb.size();
    om::ModelTaskDef td;
    if (m.attrs[kTaskInfoAttr] == kTaskInfoDomi) {
      NPU_RETURN_IF_ERROR(DomiTasks(tb, path, *td.mutable_task()));
    } else if (!td.ParseFromArray(tb.data(), static_cast<int>(tb.size()))) {
      return Corrupt(path, "TASK_INFO does not parse");
    }
    std::vector<std::optional<Task>> node_task(g.nodes.size());
    uint32_t next_id = 0;
    for (const auto& t : td.task()) {
      if (t.graph_index() != profile) continue;
      if (t.op_index() >= op_node.size()) return Corrupt(path, "task " + std::to_string(t.task_id()) + " points at a missing op");
      Task task;
      task.task_id = t.task_id();
      next_id = std::max(next_id, t.task_id() + 1);
      task.stream_id = t.stream_id();
      task.op_index = static_cast<uint32_t>(op_node[t.op_index()]);
      task.block_dim = t.block_dim();
      task.kernel_name = t.kernel_name();
      task.engine = t.engine() == "AiCpu" ? Engine::kAiCpu : NodeEngine(g.nodes[task.op_index]);
      auto kind = ParseWorkKind(t.kind());
      if (!kind) return Corrupt(path, "task " + std::to_string(t.task_id()) + " has an unknown kind '" + t.kind() + "'");
      task.kind = *kind;
      LoadTiling(t.tiling(), task);
      if (task.tiling.block_dim < 1) return Corrupt(path, "task " + std::to_string(t.task_id()) + " has block_dim 0");
      if (node_task[task.op_index]) return Corrupt(path, "two tasks run op '" + g.nodes[task.op_index].name + "'");
      node_task[task.op_index] = std::move(task);
    }
    // In graph order; a view put back runs on the host only, on the stream of the op that reads it.
    for (size_t k = 0; k < g.nodes.size(); ++k) {
      if (restored_view[k]) {
        Task view;
        view.task_id = next_id++;
        view.op_index = static_cast<uint32_t>(k);
        view.kind = WorkKind::kView;
        view.kernel_name = "Reshape";
        const int producer = g.values[g.nodes[k].inputs[0]].producer;
        if (producer >= 0 && node_task[static_cast<size_t>(producer)]) view.stream_id = node_task[static_cast<size_t>(producer)]->stream_id;
        node_task[k] = view;
      }
      if (node_task[k]) m.tasks.push_back(std::move(*node_task[k]));
    }
  }
  return m;
}

}  // namespace npu
