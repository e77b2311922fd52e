#include "models.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file_io.h"
#include "base/log.h"
#include "ir/aipp_config.h"
#include "errors.h"
#include "handles.h"
#include "memory.h"
#include "runtime.h"

namespace npu::acl {

std::string ModelName(const std::string& path) { return std::filesystem::path(path).stem().string(); }

aclDataType AclDataType(DType t) {
  static constexpr std::pair<DType, aclDataType> kTable[] = {
      {DType::kF32, ACL_FLOAT}, {DType::kF16, ACL_FLOAT16}, {DType::kI8, ACL_INT8},   {DType::kI32, ACL_INT32},
      {DType::kU8, ACL_UINT8},  {DType::kI16, ACL_INT16},   {DType::kU16, ACL_UINT16}, {DType::kU32, ACL_UINT32},
      {DType::kI64, ACL_INT64}, {DType::kU64, ACL_UINT64},  {DType::kF64, ACL_DOUBLE}, {DType::kBool, ACL_BOOL},
      {DType::kBF16, ACL_BF16}};
  for (auto [d, a] : kTable)
    if (d == t) return a;
  return ACL_DT_UNDEFINED;
}

namespace {

IoDesc DescribeValue(const Value& v) {
  IoDesc d;
  d.name = v.name;
  d.dtype = v.dtype;
  d.format = DeviceFormat(v);
  d.dims = DeviceShapeOf(v);
  const int64_t n = NumElements(d.dims);
  d.bytes = n > 0 ? static_cast<size_t>(n) * DTypeSize(v.dtype) : 0;
  return d;
}

// A loader error as AscendCL reports it: a missing file is a bad path; anything else a model it cannot read.
aclError LoadFailure(const Status& s, const std::string& path, const char* call) {
  if (!FileExists(path)) return Fail(ACL_ERROR_GE_EXEC_MODEL_PATH_INVALID, call, "modelPath " + path + ": no such file");
  return Fail(ACL_ERROR_DESERIALIZE_MODEL, call, s);
}

}  // namespace

Models& Models::Get() {
  static Models* models = new Models();
  return *models;
}

Models::Loaded::~Loaded() {
  if (fd >= 0) ::close(fd);
}

aclError Models::JoinCollection(prof::Collector& c, const char* call) {
  for (auto& [id, m] : models_)
    for (auto& [k, r] : m.runs) {
      auto o = c.AddModel(*r.session, id);
      if (!o.ok()) return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, call, o.status());
      r.session->AddObserver(o.value());
    }
  return ACL_SUCCESS;
}

aclError Models::Subscribe(uint32_t id, int fd, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_INVALID_MODEL_ID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  Loaded& m = it->second;
  if (m.subscriber) return Fail(ACL_ERROR_PROF_REPEAT_SUBSCRIBE, call, "model " + std::to_string(id) + " is subscribed already; aclprofModelUnSubscribe it first");
  m.subscriber = std::make_unique<OpSubscriber>(id, fd);
  for (auto& [k, r] : m.runs) r.session->AddObserver(m.subscriber.get());
  return ACL_SUCCESS;
}

aclError Models::Unsubscribe(uint32_t id, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_INVALID_MODEL_ID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  Loaded& m = it->second;
  if (!m.subscriber) return Fail(ACL_ERROR_PROF_NOT_RUN, call, "model " + std::to_string(id) + " is not subscribed (aclprofModelSubscribe)");
  for (auto& [k, r] : m.runs) r.session->RemoveObserver(m.subscriber.get());
  m.subscriber.reset();
  return ACL_SUCCESS;
}

aclError Models::ProfileRun(uint32_t id, Loaded& m, size_t k, const char* call, Run** out) {
  if (auto it = m.runs.find(k); it != m.runs.end()) {
    *out = &it->second;
    return ACL_SUCCESS;
  }
  auto s = Session::FromOm(m.path, k);
  if (!s.ok()) return LoadFailure(s.status(), m.path, call);
  Run r;
  r.session = std::make_unique<Session>(std::move(s).value());
  if (!r.session->soc())
    return Fail(ACL_ERROR_DESERIALIZE_MODEL, call, Status::Error("E10003", "--om", m.path, "the model names no SoC npukit simulates", "Convert it with atc --soc_version."));
  if (const auto& soc = Runtime::Get().simulated_soc) {
    r.session->SetSoc(soc);
    if (r.session->retiled())
      log::Write(log::Level::kWarning, "ACL", std::to_string(r.session->retiled()) + " task tiling(s) of " + m.name + " do not fit " + soc->name +
                                                  "; re-tiled with the built-in heuristic");
  }
  if (prof::Collector* c = Runtime::Get().collector()) {  // acl.json's profiler section, or aclprofStart
    auto o = c->AddModel(*r.session, id);
    if (!o.ok()) return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, call, o.status());
    r.session->AddObserver(o.value());
  }
  if (m.subscriber) r.session->AddObserver(m.subscriber.get());
  const debug::DumpConfig& dump = Runtime::Get().dump;
  if (dump.dump_data || dump.dump_debug) {
    const auto mode = dump.dump_debug ? debug::DumpObserver::kOverflow : debug::DumpObserver::kOpDump;
    r.dumper = std::make_unique<debug::DumpObserver>(dump, r.session->graph(), debug::DumpRoot(dump.path, "0", m.name, id), m.name, mode);
    for (const std::string& l : r.dumper->unknown_layers)
      log::Write(log::Level::kWarning, "ACL", call + std::string(": dump_list layer ") + l + " is not an op of model " + m.name);
    if (!dump.dump_debug && !dump.EntryFor(m.name))
      log::Write(log::Level::kWarning, "ACL", call + std::string(": dump_list names no entry for model ") + m.name + "; nothing is dumped");
    r.session->AddObserver(r.dumper.get());
    r.session->TrackFloatStatus(dump.dump_debug);
  }
  if (dump.exception) {
    r.exception_dumper = std::make_unique<debug::DumpObserver>(dump, r.session->graph(), dump.ExceptionPath() + "/0", m.name,
                                                                debug::DumpObserver::kException);
    r.session->AddObserver(r.exception_dumper.get());
  }
  *out = &m.runs.emplace(k, std::move(r)).first->second;
  return ACL_SUCCESS;
}

namespace {

// A profile model's inputs as AscendCL describes them: the dims --input_shape gave (-1 where the profile decides)
// and the bytes of the largest profile, which a buffer must hold; the selector input's int64 values.
void DescribeProfileInputs(const ShapeProfiles& p, std::vector<IoDesc>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    IoDesc& d = inputs[i];
    if (d.name == kShapeDataInput) continue;
    for (const auto& [name, shape] : p.inputs)
      if (name == d.name) d.dims = shape;
    size_t most = 0;
    for (size_t k = 0; k < p.values.size(); ++k)
      for (const auto& [name, shape] : p.ShapesAt(k))
        if (name == d.name && NumElements(shape) > 0) most = std::max(most, static_cast<size_t>(NumElements(shape)) * DTypeSize(d.dtype));
    d.bytes = std::max(d.bytes, most);
  }
}

// Which inputs feed an Aipp node, statically or with parameters at run time, and which holds those parameters.
void MarkAippInputs(const Graph& g, std::vector<IoDesc>& inputs) {
  for (const Node& n : g.nodes) {
    if (n.op_type != "Aipp" || n.inputs.empty()) continue;
    for (size_t k = 0; k < g.inputs.size() && k < inputs.size(); ++k) {
      if (g.inputs[k] == n.inputs[0]) inputs[k].aipp = n.inputs.size() > 1 ? ACL_DATA_WITH_DYNAMIC_AIPP : ACL_DATA_WITH_STATIC_AIPP;
      if (n.inputs.size() > 1 && g.inputs[k] == n.inputs[1]) inputs[k].aipp = ACL_DYNAMIC_AIPP_NODE;
    }
  }
}

}  // namespace

void Models::StopDumps() {
  for (auto& [id, m] : models_)
    for (auto& [k, r] : m.runs) {
      for (auto* d : {r.dumper.get(), r.exception_dumper.get()})
        if (d) r.session->RemoveObserver(d);
      r.dumper.reset();
      r.exception_dumper.reset();
      r.session->TrackFloatStatus(false);
    }
}

aclError Models::AippType(uint32_t id, size_t index, aclmdlInputAippType* type, size_t* attached, const char* call) const {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  const std::vector<IoDesc>& ins = it->second.io.inputs;
  if (!type || !attached) return Fail(ACL_ERROR_INVALID_PARAM, call, "type or dynamicAttachedDataIndex is null");
  if (index >= ins.size()) return Fail(ACL_ERROR_INVALID_PARAM, call, "index " + std::to_string(index) + " is past the model's " + std::to_string(ins.size()) + " input(s)");
  *type = ins[index].aipp;
  *attached = ACL_INVALID_NODE_INDEX;
  if (*type == ACL_DATA_WITH_DYNAMIC_AIPP)
    for (size_t k = 0; k < ins.size(); ++k)
      if (ins[k].aipp == ACL_DYNAMIC_AIPP_NODE) *attached = k;
  return ACL_SUCCESS;
}

aclError Models::StaticAippOf(uint32_t id, size_t index, const Node** node, const Graph** graph, const char* call) const {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  const Graph& g = it->second.runs.at(0).session->graph();
  if (index >= g.inputs.size()) return Fail(ACL_ERROR_INVALID_PARAM, call, "index " + std::to_string(index) + " is past the model's " + std::to_string(g.inputs.size()) + " input(s)");
  for (const Node& n : g.nodes)
    if (n.op_type == "Aipp" && !n.inputs.empty() && n.inputs[0] == g.inputs[index]) {
      if (n.inputs.size() > 1)
        return Fail(ACL_ERROR_GE_AIPP_NOT_EXIST, call, "input " + std::to_string(index) + " takes dynamic AIPP: its parameters are the program's (aclmdlSetInputAIPP)");
      *node = &n;
      *graph = &g;
      return ACL_SUCCESS;
    }
  return Fail(ACL_ERROR_GE_AIPP_NOT_EXIST, call, "input " + std::to_string(index) + " has no AIPP (atc --insert_op_conf)");
}

aclError Models::SetAippParams(uint32_t id, aclmdlDataset* dataset, size_t index, bool data_index, uint64_t batch, std::span<const std::byte> block,
                               const char* call) {
  aclmdlInputAippType type = ACL_DATA_WITHOUT_AIPP;
  size_t attached = ACL_INVALID_NODE_INDEX;
  if (aclError e = AippType(id, index, &type, &attached, call)) return e;
  const std::vector<IoDesc>& ins = models_.at(id).io.inputs;
  if (data_index) {
    if (type != ACL_DATA_WITH_DYNAMIC_AIPP) return Fail(ACL_ERROR_INVALID_PARAM, call, "input " + std::to_string(index) + " takes no dynamic AIPP (aclmdlGetAippType)");
    index = attached;
  } else if (type != ACL_DYNAMIC_AIPP_NODE) {
    return Fail(ACL_ERROR_INVALID_PARAM, call, "index " + std::to_string(index) + " is not the input " + kDynamicAippInput +
                                                   " (aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_AIPP_NAME, &index)); the model " +
                                                   (std::any_of(ins.begin(), ins.end(), [](const IoDesc& d) { return d.aipp == ACL_DYNAMIC_AIPP_NODE; })
                                                        ? "has one" : "was not converted with aipp_mode: dynamic"));
  }
  if (AippDynamicSize(batch) != ins[index].bytes)
    return Fail(ACL_ERROR_INVALID_PARAM, call, "the parameters are for a batch of " + std::to_string(batch) + "; the model's input takes " +
                                                   std::to_string(ins[index].bytes) + " bytes of them (aclmdlGetAippDataSize of its batch)");
  if (!dataset || index >= dataset->buffers.size() || !dataset->buffers[index])
    return Fail(ACL_ERROR_INVALID_PARAM, call, "the dataset has no buffer at index " + std::to_string(index));
  aclDataBuffer* b = dataset->buffers[index];
  if (b->size < block.size()) return Fail(ACL_ERROR_INVALID_PARAM, call, "the buffer at index " + std::to_string(index) + " holds " + std::to_string(b->size) + " bytes, the parameters " + std::to_string(block.size()));
  if (aclError e = Runtime::Get().memory.RequireDevice(b->data, block.size(), call, "the dynamic AIPP buffer")) return e;
  std::memcpy(b->data, block.data(), block.size());
  return ACL_SUCCESS;
}

aclError Models::LoadSession(const std::string& path, const std::string& name, int fd, uint32_t* id, const char* call) {
  Loaded m;  // owns fd from here: closed with the model, or now if the load fails
  m.path = path, m.name = name, m.fd = fd;
  if (!id) return Fail(ACL_ERROR_INVALID_PARAM, call, "modelId is null");
  Run* run = nullptr;
  if (aclError e = ProfileRun(next_id_, m, 0, call, &run)) return e;
  const Session& s = *m.runs.at(0).session;
  const Graph& g = s.graph();
  Runtime::Get().soc_name = s.soc()->name;
  for (int v : g.inputs) m.io.inputs.push_back(DescribeValue(g.values[v]));
  for (int v : g.outputs) m.io.outputs.push_back(DescribeValue(g.values[v]));
  MarkAippInputs(g, m.io.inputs);
  m.profiles = s.model().profiles;
  m.io.profiles = m.profiles;
  if (!m.profiles.empty()) {
    DescribeProfileInputs(m.profiles, m.io.inputs);
    // Every profile is loaded now, as GE loads them: an output buffer must hold the largest profile's output.
    for (size_t k = 1; k < m.profiles.values.size(); ++k) {
      Run* other = nullptr;
      if (aclError e = ProfileRun(next_id_, m, k, call, &other)) return e;
      const Graph& og = other->session->graph();
      for (size_t o = 0; o < og.outputs.size() && o < m.io.outputs.size(); ++o)
        m.io.outputs[o].bytes = std::max(m.io.outputs[o].bytes, DescribeValue(og.values[og.outputs[o]]).bytes);
    }
  }
  *id = next_id_++;
  models_.emplace(*id, std::move(m));
  return ACL_SUCCESS;
}

aclError Models::LoadFile(const std::string& path, const std::string& name, uint32_t* id, const char* call) {
  return LoadSession(path, name, -1, id, call);
}

// The bytes go to an anonymous in-memory file, which the .om loader maps as it maps a file on disk (and maps
// again for another shape profile: the file stays open while the model is loaded).
aclError Models::LoadMem(const void* bytes, size_t size, uint32_t* id) {
  constexpr const char* kCall = "aclmdlLoadFromMem";
  if (!bytes || size == 0) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "model is null or modelSize is 0");
  const int fd = ::memfd_create("acl_model.om", MFD_CLOEXEC);
  if (fd < 0) return Fail(ACL_ERROR_RT_INTERNAL_ERROR, kCall, std::string("memfd_create: ") + std::strerror(errno));
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, static_cast<const char*>(bytes) + done, size - done);
    if (n <= 0) {
      ::close(fd);
      return Fail(ACL_ERROR_RT_INTERNAL_ERROR, kCall, std::string("writing the model: ") + std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  return LoadSession("/proc/self/fd/" + std::to_string(fd), "model", fd, id, kCall);  // it owns the fd now
}

aclError Models::Unload(uint32_t id) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, "aclmdlUnload", "modelId " + std::to_string(id) + " is not a loaded model");
  models_.erase(it);
  return ACL_SUCCESS;
}

void Models::UnloadAll() { models_.clear(); }

const Session* Models::SessionOf(uint32_t id, size_t profile) const {
  auto it = models_.find(id);
  if (it == models_.end()) return nullptr;
  auto run = it->second.runs.find(profile);
  return run == it->second.runs.end() ? nullptr : run->second.session.get();
}

aclError Models::SetStep(uint32_t id, uint64_t step, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  it->second.step = step;
  return ACL_SUCCESS;
}

DumpTally Models::Tally(uint32_t id) const {
  DumpTally t;
  auto it = models_.find(id);
  if (it == models_.end()) return t;
  const debug::DumpConfig& dump = Runtime::Get().dump;
  t.on = dump.dump_data || dump.dump_debug;
  t.overflow = dump.dump_debug;
  t.path = dump.path;
  for (const auto& [k, r] : it->second.runs)
    if (r.dumper) {
      t.files += r.dumper->files_written();
      t.overflows += r.dumper->overflows();
    }
  return t;
}

aclError Models::QuerySize(const std::string& path, size_t* work, size_t* weight) {
  constexpr const char* kCall = "aclmdlQuerySize";
  if (!work || !weight) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "workSize or weightSize is null");
  auto m = LoadOm(path);
  if (!m.ok()) return LoadFailure(m.status(), path, kCall);
  size_t feature_map = 0;
  for (const Value& v : m.value().graph.values)
    if (!v.constant && v.has_shape && NumElements(v.shape) > 0) feature_map += static_cast<size_t>(NumElements(v.shape)) * DTypeSize(v.dtype);
  *work = feature_map;
  *weight = m.value().weight_size;
  return ACL_SUCCESS;
}

aclError Models::Describe(uint32_t id, ModelIo* io, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  *io = it->second.io;
  return ACL_SUCCESS;
}

std::optional<Shape> Models::CurrentOutputDims(uint32_t id, size_t index) const {
  auto it = models_.find(id);
  if (it == models_.end()) return std::nullopt;
  auto run = it->second.runs.find(it->second.current);
  if (run == it->second.runs.end()) return std::nullopt;
  const Graph& g = run->second.session->graph();
  if (index >= g.outputs.size()) return std::nullopt;
  return DeviceShapeOf(g.values[g.outputs[index]]);
}

aclError Models::SetProfile(uint32_t id, aclmdlDataset* dataset, size_t index, const std::string& kind, const std::vector<int64_t>& given,
                            const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  const Loaded& m = it->second;
  if (m.profiles.kind != kind)
    return Fail(ACL_ERROR_INVALID_PARAM, call, m.profiles.empty() ? "the model has no shape profiles (convert it with atc --dynamic_batch_size, --dynamic_image_size or --dynamic_dims)"
                                                                 : "the model's profiles are " + m.profiles.kind + " profiles: " + m.profiles.DescribeAll());
  if (index >= m.io.inputs.size() || m.io.inputs[index].name != kShapeDataInput)
    return Fail(ACL_ERROR_INVALID_PARAM, call, "index " + std::to_string(index) + " is not the input " + kShapeDataInput +
                                                   " (aclmdlGetInputIndexByName(desc, ACL_DYNAMIC_TENSOR_NAME, &index))");
  if (!dataset || index >= dataset->buffers.size() || !dataset->buffers[index])
    return Fail(ACL_ERROR_INVALID_PARAM, call, "the dataset has no buffer at index " + std::to_string(index));
  auto k = m.profiles.Find(given, call);
  if (!k.ok()) return Fail(ACL_ERROR_INVALID_PARAM, call, k.status());
  const std::vector<int64_t>& values = m.profiles.values[k.value()];
  const size_t bytes = values.size() * sizeof(int64_t);
  aclDataBuffer* b = dataset->buffers[index];
  if (b->size < bytes) return Fail(ACL_ERROR_INVALID_PARAM, call, "the buffer at index " + std::to_string(index) + " holds " + std::to_string(b->size) + " bytes, the profile " + std::to_string(bytes));
  if (aclError e = Runtime::Get().memory.RequireDevice(b->data, bytes, call, "the selector buffer")) return e;
  std::memcpy(b->data, values.data(), bytes);
  return ACL_SUCCESS;
}

aclError Models::SetProfileDims(uint32_t id, aclmdlDataset* dataset, size_t index, const std::vector<int64_t>& dims, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  std::vector<int64_t> values;
  size_t at = 0;
  for (const auto& [name, shape] : it->second.profiles.inputs)
    for (int64_t d : shape) {
      if (at >= dims.size())
        return Fail(ACL_ERROR_INVALID_PARAM, call, "dims has " + std::to_string(dims.size()) + " values; the model's inputs have more dims");
      if (d < 0) values.push_back(dims[at]);
      ++at;
    }
  return SetProfile(id, dataset, index, "dims", values, call);
}

namespace {

// A model buffer: a live data buffer of at least `need` bytes in device memory.
aclError CheckBuffer(const aclDataBuffer* b, const IoDesc& d, size_t need, const std::string& what, const char* call) {
  if (!b) return Fail(ACL_ERROR_INVALID_PARAM, call, what + " (" + d.name + ") is a null buffer");
  if (b->size < need)
    return Fail(ACL_ERROR_INVALID_PARAM, call, what + " (" + d.name + ") has " + std::to_string(b->size) + " bytes, the model needs " +
                                                   std::to_string(need) + " (aclmdlGet" + (what[0] == 'i' ? "Input" : "Output") + "SizeByIndex)");
  return Runtime::Get().memory.RequireDevice(b->data, need, call, (what + " buffer").c_str());
}

// The profile a shape-profile model's selector input holds (aclmdlSetDynamicBatchSize and the like wrote it).
aclError SelectProfile(const ModelIo& io, const ShapeProfiles& profiles, const aclmdlDataset* input, const char* call, size_t* profile) {
  size_t sel = io.inputs.size();
  for (size_t k = 0; k < io.inputs.size(); ++k)
    if (io.inputs[k].name == kShapeDataInput) sel = k;
  if (sel == io.inputs.size()) return Fail(ACL_ERROR_RT_INTERNAL_ERROR, call, "the profile model has no selector input");
  if (aclError e = CheckBuffer(input->buffers[sel], io.inputs[sel], io.inputs[sel].bytes, "input " + std::to_string(sel), call)) return e;
  std::vector<int64_t> values(io.inputs[sel].bytes / sizeof(int64_t));
  std::memcpy(values.data(), input->buffers[sel]->data, io.inputs[sel].bytes);
  auto k = profiles.Find(values, "the selector input " + std::string(kShapeDataInput));
  if (!k.ok())
    return Fail(ACL_ERROR_INVALID_PARAM, call, k.status(), "set it with aclmdlSetDynamicBatchSize, aclmdlSetDynamicHWSize or aclmdlSetInputDynamicDims");
  *profile = k.value();
  return ACL_SUCCESS;
}

// A dynamic-shape input's dims, from the description the program gave it (aclmdlSetDatasetTensorDesc): of the
// model's rank and data type, equal to the model's dims where those are known.
aclError GivenDims(const aclmdlDataset* input, size_t k, IoDesc& d, const char* call) {
  auto it = input->descs.find(k);
  const std::string what = "input " + std::to_string(k) + " (" + d.name + ") has the dynamic dims " + ShapeToString(d.dims);
  if (it == input->descs.end() || !TensorDescs().Live(it->second))
    return Fail(ACL_ERROR_INVALID_PARAM, call, Status::Error("EH0001", "input", d.name, what, "Give its dims with aclmdlSetDatasetTensorDesc(input, desc, " + std::to_string(k) + ")."));
  const aclTensorDesc& given = *it->second;
  bool fits = given.dims.size() == d.dims.size() && given.dtype == AclDataType(d.dtype);
  for (size_t i = 0; fits && i < d.dims.size(); ++i) fits = given.dims[i] > 0 && (d.dims[i] < 0 || d.dims[i] == given.dims[i]);
  if (!fits)
    return Fail(ACL_ERROR_INVALID_PARAM, call, Status::Error("EH0001", "input", d.name, what + "; its description gives " + ShapeToString(given.dims) + " of data type " + std::to_string(given.dtype)));
  d.dims = given.dims;
  d.bytes = static_cast<size_t>(NumElements(d.dims)) * DTypeSize(d.dtype);
  return ACL_SUCCESS;
}

bool IsDynamic(const Shape& dims) { return std::any_of(dims.begin(), dims.end(), [](int64_t x) { return x < 0; }); }

// An output buffer the program left empty (nullptr, 0) for the runtime to allocate.
bool LeftEmpty(const aclDataBuffer* b) { return b && !b->data && b->size == 0; }

// The session's inputs over the device buffers: read in place when aligned for the dtype, else copied.
aclError ViewInputs(const Graph& g, const aclmdlDataset* input, const char* call, std::vector<Tensor>& inputs) {
  for (size_t k = 0; k < g.inputs.size() && k < input->buffers.size(); ++k) {
    IoDesc d = DescribeValue(g.values[g.inputs[k]]);  // this profile's dims
    if (IsDynamic(d.dims))
      if (aclError e = GivenDims(input, k, d, call)) return e;
    if (aclError e = CheckBuffer(input->buffers[k], d, d.bytes, "input " + std::to_string(k), call)) return e;
    const void* data = input->buffers[k]->data;
    if (reinterpret_cast<uintptr_t>(data) % DTypeSize(d.dtype) == 0) {
      inputs.push_back(Tensor::View(d.dtype, d.dims, nullptr, data));
    } else {
      Tensor t = Tensor::Empty(d.dtype, d.dims);
      std::memcpy(t.mutable_raw(), data, d.bytes);
      inputs.push_back(std::move(t));
    }
  }
  return ACL_SUCCESS;
}

}  // namespace

aclError Models::Execute(uint32_t id, const aclmdlDataset* input, aclmdlDataset* output, Stream& stream, const char* call) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, call, "modelId " + std::to_string(id) + " is not a loaded model");
  if (!input || !output) return Fail(ACL_ERROR_INVALID_PARAM, call, "input or output dataset is null");
  Loaded& m = it->second;
  if (input->buffers.size() != m.io.inputs.size())
    return Fail(ACL_ERROR_INVALID_PARAM, call, "the input dataset has " + std::to_string(input->buffers.size()) + " buffer(s), the model " +
                                                   std::to_string(m.io.inputs.size()) + " input(s)");
  if (output->buffers.size() != m.io.outputs.size())
    return Fail(ACL_ERROR_INVALID_PARAM, call, "the output dataset has " + std::to_string(output->buffers.size()) + " buffer(s), the model " +
                                                   std::to_string(m.io.outputs.size()) + " output(s)");
  size_t profile = 0;
  if (!m.profiles.empty())
    if (aclError e = SelectProfile(m.io, m.profiles, input, call, &profile)) return e;
  Run* run = nullptr;
  if (aclError e = ProfileRun(id, m, profile, call, &run)) return e;
  Session& session = *run->session;
  const Graph& g = session.graph();
  std::vector<Tensor> inputs;
  if (aclError e = ViewInputs(g, input, call, inputs)) return e;
  std::vector<IoDesc> outs;
  for (size_t k = 0; k < g.outputs.size() && k < m.io.outputs.size(); ++k) {
    outs.push_back(DescribeValue(g.values[g.outputs[k]]));
    if (!LeftEmpty(output->buffers[k]))  // a dynamic output's size is known after the run
      if (aclError e = CheckBuffer(output->buffers[k], outs.back(), outs.back().bytes, "output " + std::to_string(k), call)) return e;
  }
  const double before = session.simulated_ns();
  if (run->dumper) run->dumper->BeginStep(m.step, inputs);
  ++m.step;
  std::vector<Tensor> outputs;
  if (Status s = session.Run(inputs, outputs); !s.ok()) {
    if (const Task* t = session.faulted_task()) {  // the device's exception, as the runtime reports it
      std::string where;
      if (run->exception_dumper && run->exception_dumper->files_written())
        where = "the exception dump of its inputs is in " + Runtime::Get().dump.ExceptionPath() + "/0";
      return Fail(t->engine == Engine::kAiCpu ? ACL_ERROR_RT_AICPU_EXCEPTION : ACL_ERROR_RT_AICORE_EXCEPTION, call, s, where);
    }
    return Fail(ACL_ERROR_GE_PARAM_INVALID, call, s);
  }
  if (run->dumper && !run->dumper->status().ok()) return Fail(ACL_ERROR_WRITE_FILE, call, run->dumper->status());
  if (m.subscriber && !m.subscriber->error().empty()) return Fail(ACL_ERROR_WRITE_FILE, call, "aclprofModelSubscribe: " + m.subscriber->error());
  stream.clock_ns += session.simulated_ns() - before;
  m.current = profile;
  for (size_t k = 0; k < outputs.size() && k < outs.size(); ++k)
    if (aclError e = DeliverOutput(outputs[k], outs[k], k, *output, call)) return e;
  return ACL_SUCCESS;
}

aclError Models::DeliverOutput(const Tensor& t, const IoDesc& declared, size_t k, aclmdlDataset& output, const char* call) {
  const std::span<const std::byte> bytes = t.bytes();
  aclDataBuffer* b = output.buffers[k];
  if (!IsDynamic(declared.dims) && bytes.size() != declared.bytes)
    return Fail(ACL_ERROR_RT_INTERNAL_ERROR, call, "output " + std::to_string(k) + " came out with " + std::to_string(bytes.size()) + " bytes, the model declares " +
                                                       std::to_string(declared.bytes));
  if (LeftEmpty(b)) {  // the runtime allocates it; the program frees it (aclrtFree)
    if (aclError e = Runtime::Get().memory.Allocate(MemKind::kDevice, std::max<size_t>(1, bytes.size()), &b->data, call)) return e;
    b->size = bytes.size();
  } else if (aclError e = CheckBuffer(b, declared, bytes.size(), "output " + std::to_string(k), call)) {
    return e;
  }
  std::memcpy(b->data, bytes.data(), bytes.size());
  SetDatasetDesc(output, k, aclTensorDesc{AclDataType(t.dtype()), t.shape(), static_cast<aclFormat>(declared.format)});
  return ACL_SUCCESS;
}

}  // namespace npu::acl
