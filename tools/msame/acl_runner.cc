// msame's .om path: the AscendCL calls CANN's msame makes (aclInit with the acl.json, a device, the model and its
// datasets in device memory, aclmdlExecute), so dumps, overflow detection and profiling come from the library.
#include <algorithm>
#include <cstdint>
#include <ostream>
#include <utility>

#include "acl/acl.h"
#include "base/log.h"
#include "runner.h"
#include "soc/soc_spec.h"
#include "tool_hooks.h"

namespace npu::msame {
namespace {

// The Status behind a failed call (acl::RecentStatus), or OK.
Status Check(aclError e) { return e == ACL_SUCCESS ? Status::Ok() : acl::RecentStatus(); }

class AclRunner : public Runner {
 public:
  ~AclRunner() override { (void)Release(); }  // an error run: Finish was not reached, its error was printed
  Status Open(const MsameOptions& o, const std::vector<std::string>& first_files, uint64_t first_step, std::ostream& out);
  const Session& session() const override { return *session_; }
  Status SetInputs(const std::vector<Tensor>& inputs) override;
  Status Infer() override { return Check(aclmdlExecute(model_id_, input_, output_)); }
  Result<std::vector<Tensor>> Outputs() override;
  Status Finish(std::ostream& out) override;

 private:
  Status LoadModel(const std::string& path);
  Status CreateDatasets();
  Status PutInput(size_t i, const Tensor& t);
  Result<Tensor> TakeOutput(size_t i);
  // Writes profile `k`'s values into the selector input, through the setter for the model's kind of profile.
  Status SelectProfile(const ShapeProfiles& p, size_t k);
  Status Release();

  bool initialized_ = false, device_set_ = false;
  uint32_t model_id_ = 0;
  bool loaded_ = false;
  aclmdlDesc* desc_ = nullptr;
  aclmdlDataset* input_ = nullptr;
  aclmdlDataset* output_ = nullptr;
  std::vector<void*> input_memory_, output_memory_;  // device memory of each buffer (null: the runtime allocates it)
  std::vector<bool> dynamic_inputs_;  // inputs whose dims the model leaves open: each run gives them a tensor description
  size_t selector_ = SIZE_MAX;  // the selector input's index in a shape-profile model
  const Session* session_ = nullptr;
};

Status AclRunner::LoadModel(const std::string& path) {
  if (Status st = Check(aclmdlLoadFromFile(path.c_str(), &model_id_)); !st.ok()) return WithModelFlag(st);
  loaded_ = true;
  desc_ = aclmdlCreateDesc();
  return Check(aclmdlGetDesc(desc_, model_id_));
}

// A buffer per input and output, of the size the model gives it. An output of unknown size (a dynamic-shape
// model's) gets an empty buffer, which the runtime allocates as it runs.
Status AclRunner::CreateDatasets() {
  input_ = aclmdlCreateDataset();
  output_ = aclmdlCreateDataset();
  for (size_t i = 0; i < aclmdlGetNumInputs(desc_); ++i) {
    aclmdlIODims dims{};
    NPU_RETURN_IF_ERROR(Check(aclmdlGetInputDims(desc_, i, &dims)));
    dynamic_inputs_.push_back(std::any_of(dims.dims, dims.dims + dims.dimCount, [](int64_t d) { return d < 0; }));
    const size_t bytes = std::max<size_t>(1, aclmdlGetInputSizeByIndex(desc_, i));  // a dynamic input's grows in Run
    void* p = nullptr;
    NPU_RETURN_IF_ERROR(Check(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST)));
    input_memory_.push_back(p);
    NPU_RETURN_IF_ERROR(Check(aclmdlAddDatasetBuffer(input_, aclCreateDataBuffer(p, bytes))));
  }
  for (size_t i = 0; i < aclmdlGetNumOutputs(desc_); ++i) {
    const size_t bytes = aclmdlGetOutputSizeByIndex(desc_, i);
    void* p = nullptr;
    if (bytes) NPU_RETURN_IF_ERROR(Check(aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST)));
    output_memory_.push_back(p);
    NPU_RETURN_IF_ERROR(Check(aclmdlAddDatasetBuffer(output_, aclCreateDataBuffer(p, bytes))));
  }
  return Status::Ok();
}

// Copies input `i` to its device buffer; a dynamic-shape input gets its dims (and a larger buffer if it needs one).
Status AclRunner::PutInput(size_t i, const Tensor& t) {
  const std::span<const std::byte> bytes = t.bytes();
  aclDataBuffer* b = aclmdlGetDatasetBuffer(input_, i);
  if (dynamic_inputs_[i]) {
    const Shape& shape = t.shape();
    aclTensorDesc* d = aclCreateTensorDesc(aclmdlGetInputDataType(desc_, i), static_cast<int>(shape.size()), shape.data(), aclmdlGetInputFormat(desc_, i));
    Status st = d ? Check(aclmdlSetDatasetTensorDesc(input_, d, i)) : acl::RecentStatus();
    aclDestroyTensorDesc(d);
    NPU_RETURN_IF_ERROR(st);
    if (bytes.size() > aclGetDataBufferSizeV2(b)) {
      NPU_RETURN_IF_ERROR(Check(aclrtFree(std::exchange(input_memory_[i], nullptr))));
      NPU_RETURN_IF_ERROR(Check(aclrtMalloc(&input_memory_[i], bytes.size(), ACL_MEM_MALLOC_HUGE_FIRST)));
      NPU_RETURN_IF_ERROR(Check(aclUpdateDataBuffer(b, input_memory_[i], bytes.size())));
    }
  }
  return Check(aclrtMemcpy(aclGetDataBufferAddr(b), aclGetDataBufferSizeV2(b), bytes.data(), bytes.size(), ACL_MEMCPY_HOST_TO_DEVICE));
}

// Output `i` of the execution, with the dims it came out with; an output the runtime allocated is freed after.
Result<Tensor> AclRunner::TakeOutput(size_t i) {
  const aclTensorDesc* d = aclmdlGetDatasetTensorDesc(output_, i);
  if (!d) return acl::RecentStatus();
  Shape shape(aclGetTensorDescNumDims(d));
  for (size_t k = 0; k < shape.size(); ++k) NPU_RETURN_IF_ERROR(Check(aclGetTensorDescDimV2(d, k, &shape[k])));
  const Graph& g = session_->graph();
  Tensor t = Tensor::Empty(g.values[g.outputs[i]].dtype, shape);
  aclDataBuffer* b = aclmdlGetDatasetBuffer(output_, i);
  const size_t bytes = t.bytes().size();
  NPU_RETURN_IF_ERROR(Check(aclrtMemcpy(t.mutable_raw(), bytes, aclGetDataBufferAddr(b), bytes, ACL_MEMCPY_DEVICE_TO_HOST)));
  if (!output_memory_[i]) {  // the runtime's allocation: the program frees it and empties the buffer again
    NPU_RETURN_IF_ERROR(Check(aclrtFree(aclGetDataBufferAddr(b))));
    NPU_RETURN_IF_ERROR(Check(aclUpdateDataBuffer(b, nullptr, 0)));
  }
  return t;
}

Status AclRunner::SelectProfile(const ShapeProfiles& p, size_t k) {
  NPU_RETURN_IF_ERROR(Check(aclmdlGetInputIndexByName(desc_, ACL_DYNAMIC_TENSOR_NAME, &selector_)));
  const std::vector<int64_t>& v = p.values[k];
  if (p.kind == "batch") return Check(aclmdlSetDynamicBatchSize(model_id_, input_, selector_, static_cast<uint64_t>(v.at(0))));
  if (p.kind == "image_size")
    return Check(aclmdlSetDynamicHWSize(model_id_, input_, selector_, static_cast<uint64_t>(v.at(0)), static_cast<uint64_t>(v.at(1))));
  aclmdlIODims dims{};  // every input's dims in order, the profile's values in place of the -1s
  for (const auto& [name, shape] : p.ShapesAt(k))
    for (int64_t d : shape) {
      if (dims.dimCount == ACL_MAX_DIM_CNT)
        return Status::Error("E10001", "--dymDims", p.Describe(k), "the model's inputs have more than " + std::to_string(ACL_MAX_DIM_CNT) + " dims in all");
      dims.dims[dims.dimCount++] = d;
    }
  return Check(aclmdlSetInputDynamicDims(model_id_, input_, selector_, &dims));
}

Status AclRunner::Open(const MsameOptions& o, const std::vector<std::string>& first_files, uint64_t first_step, std::ostream& out) {
  if (!o.soc_spec.empty()) {
    NPU_ASSIGN_OR_RETURN(SocSpec soc, LoadSocSpecFile(o.soc_spec));
    acl::SimulateOn(std::make_shared<const SocSpec>(std::move(soc)));
  }
  NPU_RETURN_IF_ERROR(Check(aclInit(o.acl_json_path.empty() ? nullptr : o.acl_json_path.c_str())));
  initialized_ = true;
  NPU_RETURN_IF_ERROR(Check(aclrtSetDevice(std::stoi(o.device))));
  device_set_ = true;
  NPU_RETURN_IF_ERROR(LoadModel(o.model));
  session_ = acl::LoadedSession(model_id_, 0);
  NPU_RETURN_IF_ERROR(CreateDatasets());
  if (const ShapeProfiles& p = session_->model().profiles; !p.empty()) {
    NPU_ASSIGN_OR_RETURN(size_t k, ChooseProfile(o, p, first_files, session_->graph()));
    if (log::ShowInfo()) out << "[INFO] shape profile " << k << ": " << p.Describe(k) << "\n";
    NPU_RETURN_IF_ERROR(SelectProfile(p, k));
    session_ = acl::LoadedSession(model_id_, k);
  }
  if (session_->retiled())
    out << "[WARNING] " << session_->retiled() << " task tiling(s) do not fit " << session_->soc()->name << "; re-tiled with the built-in heuristic\n";
  return Check(acl::SetDumpStep(model_id_, first_step));
}

Status AclRunner::SetInputs(const std::vector<Tensor>& inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    NPU_RETURN_IF_ERROR(session_->CheckInput(i, inputs[i]));  // a device buffer holds bytes: what they are is checked here
    if (i != selector_) NPU_RETURN_IF_ERROR(PutInput(i, inputs[i]));  // SelectProfile wrote the selector
  }
  return Status::Ok();
}

Result<std::vector<Tensor>> AclRunner::Outputs() {
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(output_); ++i) {
    NPU_ASSIGN_OR_RETURN(Tensor t, TakeOutput(i));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Status AclRunner::Finish(std::ostream& out) {
  if (const acl::DumpTally t = acl::DumpTallyOf(model_id_); t.on && log::ShowInfo())
    out << "[INFO] " << (t.overflow ? std::to_string(t.overflows) + " overflow(s), " : std::string()) << t.files << " dump file(s) under " << t.path << "\n";
  const std::string prof_dir = acl::ProfilingDir();
  NPU_RETURN_IF_ERROR(Release());  // aclFinalize ends the collection: its files are whole after it
  if (!prof_dir.empty() && log::ShowInfo()) out << "[INFO] profiling data written to " << prof_dir << "\n";
  return Status::Ok();
}

// Undoes what Open did, in reverse; the error of aclFinalize (a profile it could not write), if any.
Status AclRunner::Release() {
  for (aclmdlDataset* set : {input_, output_}) {
    if (!set) continue;
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(set); ++i) aclDestroyDataBuffer(aclmdlGetDatasetBuffer(set, i));
    aclmdlDestroyDataset(set);
  }
  input_ = output_ = nullptr;
  for (auto* memory : {&input_memory_, &output_memory_}) {
    for (void* p : *memory)
      if (p) aclrtFree(p);
    memory->clear();
  }
  if (desc_) aclmdlDestroyDesc(std::exchange(desc_, nullptr));
  if (std::exchange(loaded_, false)) aclmdlUnload(model_id_);
  if (std::exchange(device_set_, false)) aclrtResetDevice(0);
  return std::exchange(initialized_, false) ? Check(aclFinalize()) : Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Runner>> OpenAclRunner(const MsameOptions& o, const std::vector<std::string>& first_files, uint64_t first_step,
                                              std::ostream& out) {
  auto r = std::make_unique<AclRunner>();
  NPU_RETURN_IF_ERROR(r->Open(o, first_files, first_step, out));
  return std::unique_ptr<Runner>(std::move(r));
}

}  // namespace npu::msame
