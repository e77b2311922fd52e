// The C interface of acl_mdl.h: loading, descriptions, datasets and execution over Models.
#include <algorithm>
#include <cstring>
#include <vector>

#include "acl/acl.h"
#include "base/log.h"
#include "debug/dump_config.h"
#include "errors.h"
#include "handles.h"
#include "models.h"
#include "runtime.h"

using npu::acl::Fail;
using npu::acl::IoDesc;
using npu::acl::Models;
using npu::acl::Runtime;

namespace npu::acl {
Handles<aclDataBuffer>& DataBuffers();  // api_base.cc

Handles<aclmdlDataset>& Datasets() {
  static auto* h = new Handles<aclmdlDataset>();
  return *h;
}
}  // namespace npu::acl

using npu::acl::Datasets;

namespace {

std::unique_lock<std::mutex> Lock() { return std::unique_lock(Runtime::Get().mu); }

npu::acl::Handles<aclmdlDesc>& Descs() {
  static auto* h = new npu::acl::Handles<aclmdlDesc>();
  return *h;
}

// The input or output `index` of a filled description, or null (recorded as the call's error).
const IoDesc* Io(const aclmdlDesc* d, size_t index, bool input, const char* call) {
  if (!Descs().Live(d) || !d->filled) {
    Fail(ACL_ERROR_INVALID_PARAM, call, "modelDesc is not a description aclmdlGetDesc filled");
    return nullptr;
  }
  const auto& v = input ? d->io.inputs : d->io.outputs;
  if (index >= v.size()) {
    Fail(ACL_ERROR_INVALID_PARAM, call, "index " + std::to_string(index) + ": the model has " + std::to_string(v.size()) + (input ? " input(s)" : " output(s)"));
    return nullptr;
  }
  return &v[index];
}

aclError Dims(const aclmdlDesc* d, size_t index, bool input, aclmdlIODims* dims, const char* call) {
  const IoDesc* io = Io(d, index, input, call);
  if (!io) return ACL_ERROR_INVALID_PARAM;
  if (!dims) return Fail(ACL_ERROR_INVALID_PARAM, call, "dims is null");
  if (io->dims.size() > ACL_MAX_DIM_CNT) return Fail(ACL_ERROR_INVALID_PARAM, call, io->name + " has more than ACL_MAX_DIM_CNT dims");
  std::memset(dims, 0, sizeof *dims);
  std::strncpy(dims->name, io->name.c_str(), ACL_MAX_TENSOR_NAME_LEN - 1);  // CANN truncates longer names too
  dims->dimCount = io->dims.size();
  for (size_t i = 0; i < io->dims.size(); ++i) dims->dims[i] = io->dims[i];
  return ACL_SUCCESS;
}

aclError IndexByName(const aclmdlDesc* d, const char* name, size_t* index, bool input, const char* call) {
  if (!Descs().Live(d) || !d->filled) return Fail(ACL_ERROR_INVALID_PARAM, call, "modelDesc is not a description aclmdlGetDesc filled");
  if (!name || !index) return Fail(ACL_ERROR_INVALID_PARAM, call, "name or index is null");
  const auto& v = input ? d->io.inputs : d->io.outputs;
  for (size_t k = 0; k < v.size(); ++k)
    if (v[k].name == name) {
      *index = k;
      return ACL_SUCCESS;
    }
  return Fail(ACL_ERROR_INVALID_PARAM, call, std::string("the model has no ") + (input ? "input" : "output") + " named '" + name + "'");
}

}  // namespace

extern "C" {

aclError aclmdlLoadFromFile(const char* modelPath, uint32_t* modelId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlLoadFromFile");
  if (aclError e = Runtime::Get().RequireContext("aclmdlLoadFromFile", nullptr)) return e;
  if (!modelPath) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlLoadFromFile", "modelPath is null");
  return Models::Get().LoadFile(modelPath, npu::acl::ModelName(modelPath), modelId, "aclmdlLoadFromFile");
}

aclError aclmdlLoadFromMem(const void* model, size_t modelSize, uint32_t* modelId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlLoadFromMem");
  if (aclError e = Runtime::Get().RequireContext("aclmdlLoadFromMem", nullptr)) return e;
  return Models::Get().LoadMem(model, modelSize, modelId);
}

// The work and weight memory the program gives must be device memory of at least aclmdlQuerySize's sizes;
// the simulator computes in its own buffers, so the memory is checked and held for the model, not written.
aclError aclmdlLoadFromFileWithMem(const char* modelPath, uint32_t* modelId, void* workPtr, size_t workSize, void* weightPtr, size_t weightSize) {
  constexpr const char* kCall = "aclmdlLoadFromFileWithMem";
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlLoadFromFileWithMem");
  if (aclError e = Runtime::Get().RequireContext(kCall, nullptr)) return e;
  if (!modelPath) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "modelPath is null");
  size_t need_work = 0, need_weight = 0;
  if (aclError e = Models::Get().QuerySize(modelPath, &need_work, &need_weight)) return e;
  const auto& mem = Runtime::Get().memory;
  if (workPtr) {
    if (workSize < need_work) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "workSize " + std::to_string(workSize) + " is below the model's " + std::to_string(need_work) + " (aclmdlQuerySize)");
    if (aclError e = mem.RequireDevice(workPtr, workSize, kCall, "workPtr")) return e;
  }
  if (weightPtr) {
    if (weightSize < need_weight) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "weightSize " + std::to_string(weightSize) + " is below the model's " + std::to_string(need_weight) + " (aclmdlQuerySize)");
    if (aclError e = mem.RequireDevice(weightPtr, weightSize, kCall, "weightPtr")) return e;
  }
  return Models::Get().LoadFile(modelPath, npu::acl::ModelName(modelPath), modelId, kCall);
}

aclError aclmdlQuerySize(const char* fileName, size_t* workSize, size_t* weightSize) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlQuerySize");
  if (aclError e = Runtime::Get().RequireInit("aclmdlQuerySize")) return e;
  if (!fileName) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlQuerySize", "fileName is null");
  return Models::Get().QuerySize(fileName, workSize, weightSize);
}

aclError aclmdlUnload(uint32_t modelId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlUnload");
  if (aclError e = Runtime::Get().RequireInit("aclmdlUnload")) return e;
  return Models::Get().Unload(modelId);
}

aclmdlDesc* aclmdlCreateDesc(void) { return Descs().Make(aclmdlDesc{}); }

aclError aclmdlDestroyDesc(aclmdlDesc* modelDesc) {
  if (!Descs().Destroy(modelDesc)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDesc", "modelDesc is not a live description (aclmdlCreateDesc)");
  return ACL_SUCCESS;
}

aclError aclmdlGetDesc(aclmdlDesc* modelDesc, uint32_t modelId) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlGetDesc");
  if (aclError e = Runtime::Get().RequireInit("aclmdlGetDesc")) return e;
  if (!Descs().Live(modelDesc)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDesc", "modelDesc is not a live description (aclmdlCreateDesc)");
  if (aclError e = Models::Get().Describe(modelId, &modelDesc->io, "aclmdlGetDesc")) return e;
  modelDesc->model_id = modelId;
  modelDesc->filled = true;
  return ACL_SUCCESS;
}

size_t aclmdlGetNumInputs(aclmdlDesc* modelDesc) { return Descs().Live(modelDesc) ? modelDesc->io.inputs.size() : 0; }
size_t aclmdlGetNumOutputs(aclmdlDesc* modelDesc) { return Descs().Live(modelDesc) ? modelDesc->io.outputs.size() : 0; }

size_t aclmdlGetInputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, true, "aclmdlGetInputSizeByIndex");
  return io ? io->bytes : 0;
}

size_t aclmdlGetOutputSizeByIndex(aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, false, "aclmdlGetOutputSizeByIndex");
  return io ? io->bytes : 0;
}

aclError aclmdlGetInputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) { return Dims(modelDesc, index, true, dims, "aclmdlGetInputDims"); }
aclError aclmdlGetOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) { return Dims(modelDesc, index, false, dims, "aclmdlGetOutputDims"); }
// The dims the last execution gave (a profile model's follow its profile); the declared ones before any.
aclError aclmdlGetCurOutputDims(const aclmdlDesc* modelDesc, size_t index, aclmdlIODims* dims) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlGetCurOutputDims");
  if (aclError e = Dims(modelDesc, index, false, dims, "aclmdlGetCurOutputDims")) return e;
  if (auto cur = Models::Get().CurrentOutputDims(modelDesc->model_id, index)) {
    dims->dimCount = std::min<size_t>(cur->size(), ACL_MAX_DIM_CNT);
    for (size_t i = 0; i < dims->dimCount; ++i) dims->dims[i] = (*cur)[i];
  }
  return ACL_SUCCESS;
}

// A static model has no batch or image-size choices: count 0, as CANN reports it.
aclError aclmdlGetDynamicBatch(const aclmdlDesc* modelDesc, aclmdlBatch* batch) {
  if (!Descs().Live(modelDesc) || !modelDesc->filled) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicBatch", "modelDesc is not a description aclmdlGetDesc filled");
  if (!batch) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicBatch", "batch is null");
  *batch = aclmdlBatch{};
  const npu::ShapeProfiles& p = modelDesc->io.profiles;
  if (p.kind != "batch") return ACL_SUCCESS;
  for (const auto& v : p.values)
    if (batch->batchCount < ACL_MAX_BATCH_NUM && !v.empty()) batch->batch[batch->batchCount++] = static_cast<uint64_t>(v[0]);
  return ACL_SUCCESS;
}

aclError aclmdlGetDynamicHW(const aclmdlDesc* modelDesc, size_t index, aclmdlHW* hw) {
  if (!Descs().Live(modelDesc) || !modelDesc->filled) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicHW", "modelDesc is not a description aclmdlGetDesc filled");
  if (!hw) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlGetDynamicHW", "hw is null");
  (void)index;  // every input of a model shares its image sizes
  *hw = aclmdlHW{};
  const npu::ShapeProfiles& p = modelDesc->io.profiles;
  if (p.kind != "image_size") return ACL_SUCCESS;
  for (const auto& v : p.values)
    if (hw->hwCount < ACL_MAX_HW_NUM && v.size() == 2) {
      hw->hw[hw->hwCount][0] = static_cast<uint64_t>(v[0]);
      hw->hw[hw->hwCount][1] = static_cast<uint64_t>(v[1]);
      ++hw->hwCount;
    }
  return ACL_SUCCESS;
}

aclError aclmdlSetDynamicBatchSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t batchSize) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlSetDynamicBatchSize");
  if (aclError e = Runtime::Get().RequireInit("aclmdlSetDynamicBatchSize")) return e;
  if (!Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlSetDynamicBatchSize", "dataset is not a live dataset (aclmdlCreateDataset)");
  return Models::Get().SetProfile(modelId, dataset, index, "batch", {static_cast<int64_t>(batchSize)}, "aclmdlSetDynamicBatchSize");
}

aclError aclmdlSetDynamicHWSize(uint32_t modelId, aclmdlDataset* dataset, size_t index, uint64_t height, uint64_t width) {
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlSetDynamicHWSize");
  if (aclError e = Runtime::Get().RequireInit("aclmdlSetDynamicHWSize")) return e;
  if (!Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlSetDynamicHWSize", "dataset is not a live dataset (aclmdlCreateDataset)");
  return Models::Get().SetProfile(modelId, dataset, index, "image_size", {static_cast<int64_t>(height), static_cast<int64_t>(width)}, "aclmdlSetDynamicHWSize");
}

aclError aclmdlSetInputDynamicDims(uint32_t modelId, aclmdlDataset* dataset, size_t index, const aclmdlIODims* dims) {
  constexpr const char* kCall = "aclmdlSetInputDynamicDims";
  auto l = Lock();
  npu::acl::ApiTrace trace("aclmdlSetInputDynamicDims");
  if (aclError e = Runtime::Get().RequireInit(kCall)) return e;
  if (!Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "dataset is not a live dataset (aclmdlCreateDataset)");
  if (!dims || dims->dimCount > ACL_MAX_DIM_CNT) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "dims is null or has more than ACL_MAX_DIM_CNT dims");
  std::vector<int64_t> all(dims->dims, dims->dims + dims->dimCount);
  return Models::Get().SetProfileDims(modelId, dataset, index, all, kCall);
}

const char* aclmdlGetInputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, true, "aclmdlGetInputNameByIndex");
  return io ? io->name.c_str() : "";
}

const char* aclmdlGetOutputNameByIndex(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, false, "aclmdlGetOutputNameByIndex");
  return io ? io->name.c_str() : "";
}

// npukit's Format and DType values are GE's, which AscendCL's aclFormat and (for formats) share.
aclFormat aclmdlGetInputFormat(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, true, "aclmdlGetInputFormat");
  return io ? static_cast<aclFormat>(io->format) : ACL_FORMAT_UNDEFINED;
}

aclFormat aclmdlGetOutputFormat(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, false, "aclmdlGetOutputFormat");
  return io ? static_cast<aclFormat>(io->format) : ACL_FORMAT_UNDEFINED;
}

aclDataType aclmdlGetInputDataType(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, true, "aclmdlGetInputDataType");
  return io ? npu::acl::AclDataType(io->dtype) : ACL_DT_UNDEFINED;
}

aclDataType aclmdlGetOutputDataType(const aclmdlDesc* modelDesc, size_t index) {
  const IoDesc* io = Io(modelDesc, index, false, "aclmdlGetOutputDataType");
  return io ? npu::acl::AclDataType(io->dtype) : ACL_DT_UNDEFINED;
}

aclError aclmdlGetInputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return IndexByName(modelDesc, name, index, true, "aclmdlGetInputIndexByName");
}

aclError aclmdlGetOutputIndexByName(const aclmdlDesc* modelDesc, const char* name, size_t* index) {
  return IndexByName(modelDesc, name, index, false, "aclmdlGetOutputIndexByName");
}

aclmdlDataset* aclmdlCreateDataset(void) { return Datasets().Make(aclmdlDataset{}); }

aclError aclmdlDestroyDataset(const aclmdlDataset* dataset) {
  if (!Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlDestroyDataset", "dataset is not a live dataset (aclmdlCreateDataset)");
  for (const auto& [index, desc] : dataset->descs) npu::acl::TensorDescs().Destroy(desc);
  Datasets().Destroy(dataset);
  return ACL_SUCCESS;
}

aclError aclmdlAddDatasetBuffer(aclmdlDataset* dataset, aclDataBuffer* dataBuffer) {
  if (!Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlAddDatasetBuffer", "dataset is not a live dataset (aclmdlCreateDataset)");
  if (!npu::acl::DataBuffers().Live(dataBuffer)) return Fail(ACL_ERROR_INVALID_PARAM, "aclmdlAddDatasetBuffer", "dataBuffer is not a live buffer (aclCreateDataBuffer)");
  dataset->buffers.push_back(dataBuffer);
  return ACL_SUCCESS;
}

size_t aclmdlGetDatasetNumBuffers(const aclmdlDataset* dataset) { return Datasets().Live(dataset) ? dataset->buffers.size() : 0; }

aclDataBuffer* aclmdlGetDatasetBuffer(const aclmdlDataset* dataset, size_t index) {
  return Datasets().Live(dataset) && index < dataset->buffers.size() ? dataset->buffers[index] : nullptr;
}

aclError aclmdlExecute(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output) {
  return aclmdlExecuteAsync(modelId, input, output, nullptr);  // the default stream; work runs as it is issued
}

aclError aclmdlExecuteAsync(uint32_t modelId, const aclmdlDataset* input, aclmdlDataset* output, aclrtStream stream) {
  const char* call = stream ? "aclmdlExecuteAsync" : "aclmdlExecute";
  auto l = Lock();
  npu::acl::Stream* s = nullptr;
  if (aclError e = Runtime::Get().FindStream(stream, call, &s)) return e;
  if (!Datasets().Live(input) || !Datasets().Live(output)) return Fail(ACL_ERROR_INVALID_PARAM, call, "input or output is not a live dataset (aclmdlCreateDataset)");
  for (const aclmdlDataset* d : {input, static_cast<const aclmdlDataset*>(output)})
    for (const aclDataBuffer* b : d->buffers)
      if (!npu::acl::DataBuffers().Live(b)) return Fail(ACL_ERROR_INVALID_PARAM, call, "a dataset holds a data buffer that was destroyed");
  return Models::Get().Execute(modelId, input, output, *s, call);
}

// The dump API: models loaded between aclmdlSetDump and aclmdlFinalizeDump dump as aclInit's dump section would make
// them; the file is the same JSON (its dump section).
aclError aclmdlInitDump() {
  auto l = Lock();
  Runtime& rt = Runtime::Get();
  if (aclError e = rt.RequireInit("aclmdlInitDump")) return e;
  if (rt.dump_api) return Fail(ACL_ERROR_REPEAT_INITIALIZE, "aclmdlInitDump", "the dump API is initialized already; call aclmdlFinalizeDump first");
  rt.dump_api = true;
  return ACL_SUCCESS;
}

aclError aclmdlSetDump(const char* dumpCfgPath) {
  constexpr const char* kCall = "aclmdlSetDump";
  auto l = Lock();
  Runtime& rt = Runtime::Get();
  if (aclError e = rt.RequireInit(kCall)) return e;
  if (rt.dump_from_init) return Fail(ACL_ERROR_DUMP_ALREADY_RUN, kCall, "aclInit's configuration set the dump already; configure it in one place");
  if (!rt.dump_api) return Fail(ACL_ERROR_DUMP_NOT_RUN, kCall, "call aclmdlInitDump first");
  if (!dumpCfgPath) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "dumpCfgPath is null");
  auto d = npu::debug::ParseDumpConfig(dumpCfgPath);
  if (!d.ok()) return Fail(ACL_ERROR_INVALID_DUMP_CONFIG, kCall, d.status());
  for (const std::string& w : d.value().warnings) npu::log::Write(npu::log::Level::kWarning, "ACL", std::string(kCall) + ": " + dumpCfgPath + ": " + w);
  rt.dump = std::move(d).value();
  return ACL_SUCCESS;
}

aclError aclmdlFinalizeDump() {
  auto l = Lock();
  Runtime& rt = Runtime::Get();
  if (aclError e = rt.RequireInit("aclmdlFinalizeDump")) return e;
  if (!rt.dump_api) return Fail(ACL_ERROR_DUMP_NOT_RUN, "aclmdlFinalizeDump", "call aclmdlInitDump first");
  rt.dump_api = false;
  rt.dump = {};
  Models::Get().StopDumps();
  return ACL_SUCCESS;
}

}  // extern "C"
