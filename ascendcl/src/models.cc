#include "models.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include "base/file_io.h"
#include "base/log.h"
#include "errors.h"
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
  return Fail(ACL_ERROR_DESERIALIZE_MODEL, call, s.message());
}

}  // namespace

Models& Models::Get() {
  static Models* models = new Models();
  return *models;
}

aclError Models::LoadFile(const std::string& path, const std::string& name, uint32_t* id, const char* call) {
  if (!id) return Fail(ACL_ERROR_INVALID_PARAM, call, "modelId is null");
  auto s = Session::FromOm(path);
  if (!s.ok()) return LoadFailure(s.status(), path, call);
  Loaded m;
  m.session = std::make_unique<Session>(std::move(s).value());
  if (!m.session->soc())
    return Fail(ACL_ERROR_DESERIALIZE_MODEL, call, path + " names no SoC npukit simulates; convert it with atc --soc_version");
  const Graph& g = m.session->graph();
  for (int v : g.inputs) m.io.inputs.push_back(DescribeValue(g.values[v]));
  for (int v : g.outputs) m.io.outputs.push_back(DescribeValue(g.values[v]));
  const prof::ProfilerConfig& p = Runtime::Get().profiler;
  if (p.enabled) {
    auto c = prof::Collector::Start(p, *m.session, "libascendcl " + path);
    if (!c.ok()) return Fail(ACL_ERROR_INVALID_PROFILING_CONFIG, call, c.status().message());
    m.collector = std::move(c).value();
    m.session->AddObserver(m.collector.get());
  }
  const debug::DumpConfig& dump = Runtime::Get().dump;
  if (dump.dump_data || dump.dump_debug) {
    const auto mode = dump.dump_debug ? debug::DumpObserver::kOverflow : debug::DumpObserver::kOpDump;
    m.dumper = std::make_unique<debug::DumpObserver>(dump, m.session->graph(), debug::DumpRoot(dump.path, "0", name, next_id_), name, mode);
    for (const std::string& l : m.dumper->unknown_layers)
      log::Write(log::Level::kWarning, "ACL", call + std::string(": dump_list layer ") + l + " is not an op of model " + name);
    m.session->AddObserver(m.dumper.get());
    m.session->TrackFloatStatus(dump.dump_debug);
  }
  *id = next_id_++;
  models_.emplace(*id, std::move(m));
  return ACL_SUCCESS;
}

// The bytes go to an anonymous in-memory file, which the .om loader maps as it maps a file on disk.
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
  const aclError e = LoadFile("/proc/self/fd/" + std::to_string(fd), "model", id, kCall);
  ::close(fd);  // the loader's mapping keeps the bytes
  return e;
}

aclError Models::Unload(uint32_t id) {
  auto it = models_.find(id);
  if (it == models_.end()) return Fail(ACL_ERROR_GE_EXEC_MODEL_ID_INVALID, "aclmdlUnload", "modelId " + std::to_string(id) + " is not a loaded model");
  aclError e = ACL_SUCCESS;
  if (it->second.collector)
    if (Status s = it->second.collector->Finish(); !s.ok()) e = Fail(ACL_ERROR_WRITE_FILE, "aclmdlUnload", "profiling data: " + s.message());
  models_.erase(it);
  return e;
}

void Models::UnloadAll() {
  for (auto& [id, m] : models_)
    if (m.collector) (void)m.collector->Finish();
  models_.clear();
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
  const MemoryBook& mem = Runtime::Get().memory;
  auto check = [&](const aclDataBuffer* b, const IoDesc& d, const std::string& what) -> aclError {
    if (!b) return Fail(ACL_ERROR_INVALID_PARAM, call, what + " (" + d.name + ") is a null buffer");
    if (b->size < d.bytes)
      return Fail(ACL_ERROR_INVALID_PARAM, call, what + " (" + d.name + ") has " + std::to_string(b->size) + " bytes, the model needs " +
                                                     std::to_string(d.bytes) + " (aclmdlGet" + (what[0] == 'i' ? "Input" : "Output") + "SizeByIndex)");
    return mem.RequireDevice(b->data, d.bytes, call, (what + " buffer").c_str());
  };
  std::vector<Tensor> inputs;
  for (size_t k = 0; k < m.io.inputs.size(); ++k) {
    const IoDesc& d = m.io.inputs[k];
    if (aclError e = check(input->buffers[k], d, "input " + std::to_string(k))) return e;
    // The kernels read the device buffer in place when it is aligned for the dtype; else a copy.
    const void* data = input->buffers[k]->data;
    if (reinterpret_cast<uintptr_t>(data) % DTypeSize(d.dtype) == 0) {
      inputs.push_back(Tensor::View(d.dtype, d.dims, nullptr, data));
    } else {
      Tensor t = Tensor::Empty(d.dtype, d.dims);
      std::memcpy(t.mutable_raw(), data, d.bytes);
      inputs.push_back(std::move(t));
    }
  }
  for (size_t k = 0; k < m.io.outputs.size(); ++k)
    if (aclError e = check(output->buffers[k], m.io.outputs[k], "output " + std::to_string(k))) return e;
  const double before = m.session->simulated_ns();
  if (m.dumper) m.dumper->BeginStep(m.step, inputs);
  ++m.step;
  std::vector<Tensor> outputs;
  if (Status s = m.session->Run(inputs, outputs); !s.ok()) return Fail(ACL_ERROR_GE_PARAM_INVALID, call, s.message());
  if (m.dumper && !m.dumper->status().ok()) return Fail(ACL_ERROR_WRITE_FILE, call, "dump: " + m.dumper->status().message());
  stream.clock_ns += m.session->simulated_ns() - before;
  for (size_t k = 0; k < outputs.size() && k < m.io.outputs.size(); ++k) {
    const std::span<const std::byte> bytes = outputs[k].bytes();
    if (bytes.size() != m.io.outputs[k].bytes)
      return Fail(ACL_ERROR_RT_INTERNAL_ERROR, call, "output " + std::to_string(k) + " came out with " + std::to_string(bytes.size()) + " bytes, the model declares " +
                                                         std::to_string(m.io.outputs[k].bytes));
    std::memcpy(output->buffers[k]->data, bytes.data(), bytes.size());
  }
  return ACL_SUCCESS;
}

}  // namespace npu::acl
