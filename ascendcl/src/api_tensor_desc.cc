// The C interface of tensor descriptions (acl_base.h) and of a dataset's descriptions (acl_mdl.h).
#include <numeric>

#include "acl/acl.h"
#include "errors.h"
#include "handles.h"
#include "memory.h"
#include "models.h"

using npu::acl::Fail;

namespace npu::acl {
Handles<aclmdlDataset>& Datasets();  // api_mdl.cc

Handles<aclTensorDesc>& TensorDescs() {
  static auto* h = new Handles<aclTensorDesc>();
  return *h;
}

void SetDatasetDesc(aclmdlDataset& dataset, size_t index, const aclTensorDesc& desc) {
  aclTensorDesc*& slot = dataset.descs[index];
  if (slot) TensorDescs().Destroy(slot);
  slot = TensorDescs().Make(desc);
}

}  // namespace npu::acl

using npu::acl::TensorDescs;

namespace {

// The description, or null (recorded as the call's error) when it is not a live one.
const aclTensorDesc* Live(const aclTensorDesc* desc, const char* call) {
  if (TensorDescs().Live(desc)) return desc;
  Fail(ACL_ERROR_INVALID_PARAM, call, "desc " + npu::acl::PointerText(desc) + " is not a live tensor description (aclCreateTensorDesc)");
  return nullptr;
}

size_t ElementCount(const aclTensorDesc& d) {
  return std::accumulate(d.dims.begin(), d.dims.end(), size_t{1}, [](size_t n, int64_t x) { return x > 0 ? n * static_cast<size_t>(x) : 0; });
}

}  // namespace

extern "C" {

aclTensorDesc* aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t* dims, aclFormat format) {
  constexpr const char* kCall = "aclCreateTensorDesc";
  if (numDims < 0 || numDims > ACL_MAX_DIM_CNT || (numDims > 0 && !dims)) {
    Fail(ACL_ERROR_INVALID_PARAM, kCall, "numDims " + std::to_string(numDims) + ": give 0 to ACL_MAX_DIM_CNT dims, and dims for any");
    return nullptr;
  }
  for (int i = 0; i < numDims; ++i)
    if (dims[i] < -2) {
      Fail(ACL_ERROR_INVALID_PARAM, kCall, "dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]) + "; a dim is >= 0, or -1 (unknown) or -2 (unknown rank)");
      return nullptr;
    }
  return TensorDescs().Make(aclTensorDesc{dataType, std::vector<int64_t>(dims, dims + numDims), format});
}

void aclDestroyTensorDesc(const aclTensorDesc* desc) {
  if (desc && !TensorDescs().Destroy(desc)) Live(desc, "aclDestroyTensorDesc");  // records the error; returns nothing
}

aclDataType aclGetTensorDescType(const aclTensorDesc* desc) {
  const aclTensorDesc* d = Live(desc, "aclGetTensorDescType");
  return d ? d->dtype : ACL_DT_UNDEFINED;
}

aclFormat aclGetTensorDescFormat(const aclTensorDesc* desc) {
  const aclTensorDesc* d = Live(desc, "aclGetTensorDescFormat");
  return d ? d->format : ACL_FORMAT_UNDEFINED;
}

size_t aclGetTensorDescElementCount(const aclTensorDesc* desc) {
  const aclTensorDesc* d = Live(desc, "aclGetTensorDescElementCount");
  return d ? ElementCount(*d) : 0;
}

size_t aclGetTensorDescSize(const aclTensorDesc* desc) {
  const aclTensorDesc* d = Live(desc, "aclGetTensorDescSize");
  return d ? ElementCount(*d) * aclDataTypeSize(d->dtype) : 0;
}

size_t aclGetTensorDescNumDims(const aclTensorDesc* desc) {
  const aclTensorDesc* d = Live(desc, "aclGetTensorDescNumDims");
  return d ? d->dims.size() : 0;
}

aclError aclGetTensorDescDimV2(const aclTensorDesc* desc, size_t index, int64_t* dimSize) {
  constexpr const char* kCall = "aclGetTensorDescDimV2";
  const aclTensorDesc* d = Live(desc, kCall);
  if (!d) return ACL_ERROR_INVALID_PARAM;
  if (!dimSize) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "dimSize is null");
  if (index >= d->dims.size()) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "index " + std::to_string(index) + " is past the " + std::to_string(d->dims.size()) + " dims");
  *dimSize = d->dims[index];
  return ACL_SUCCESS;
}

int64_t aclGetTensorDescDim(const aclTensorDesc* desc, size_t index) {
  int64_t dim = -1;
  return aclGetTensorDescDimV2(desc, index, &dim) == ACL_SUCCESS ? dim : -1;
}

aclError aclmdlSetDatasetTensorDesc(aclmdlDataset* dataset, aclTensorDesc* tensorDesc, size_t index) {
  constexpr const char* kCall = "aclmdlSetDatasetTensorDesc";
  if (!npu::acl::Datasets().Live(dataset)) return Fail(ACL_ERROR_INVALID_PARAM, kCall, "dataset is not a live dataset (aclmdlCreateDataset)");
  const aclTensorDesc* d = Live(tensorDesc, kCall);
  if (!d) return ACL_ERROR_INVALID_PARAM;
  if (index >= dataset->buffers.size())
    return Fail(ACL_ERROR_INVALID_PARAM, kCall, "index " + std::to_string(index) + " is past the dataset's " + std::to_string(dataset->buffers.size()) + " buffer(s)");
  npu::acl::SetDatasetDesc(*dataset, index, *d);
  return ACL_SUCCESS;
}

aclTensorDesc* aclmdlGetDatasetTensorDesc(const aclmdlDataset* dataset, size_t index) {
  constexpr const char* kCall = "aclmdlGetDatasetTensorDesc";
  if (!npu::acl::Datasets().Live(dataset)) {
    Fail(ACL_ERROR_INVALID_PARAM, kCall, "dataset is not a live dataset (aclmdlCreateDataset)");
    return nullptr;
  }
  auto it = dataset->descs.find(index);
  if (it == dataset->descs.end()) {
    Fail(ACL_ERROR_INVALID_PARAM, kCall, "buffer " + std::to_string(index) + " has no description (aclmdlSetDatasetTensorDesc, or an execution's output)");
    return nullptr;
  }
  return it->second;
}

}  // extern "C"
