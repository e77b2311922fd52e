// pyACL: the Python module `acl` over libascendcl, with pyACL's conventions: pointers and handles are Python ints,
// a call that makes something returns (thing, ret), a call that only acts returns ret, getters return the value.
// acl.util moves bytes between numpy arrays, bytes objects and pointers.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <tuple>

#include "acl/acl.h"

namespace py = pybind11;

namespace {

using Ptr = uintptr_t;  // how pyACL passes pointers and handles: plain integers
template <typename T>
T* As(Ptr p) {
  return reinterpret_cast<T*>(p);
}
template <typename T>
Ptr Int(T* p) {
  return reinterpret_cast<Ptr>(p);
}

py::dict DimsDict(const aclmdlIODims& d) {
  py::list dims;
  for (size_t i = 0; i < d.dimCount && i < ACL_MAX_DIM_CNT; ++i) dims.append(d.dims[i]);
  py::dict out;
  out["name"] = std::string(d.name);
  out["dimCount"] = d.dimCount;
  out["dims"] = dims;
  return out;
}

template <aclError (*F)(const aclmdlDesc*, size_t, aclmdlIODims*)>
std::tuple<py::dict, int> GetDims(Ptr desc, size_t index) {
  aclmdlIODims d{};
  const aclError ret = F(As<const aclmdlDesc>(desc), index, &d);
  return {ret == ACL_SUCCESS ? DimsDict(d) : py::dict(), ret};
}

// numpy's dtype of a pyACL type code (acl.util.ptr_to_numpy's npy_type is numpy's type number).
py::dtype NumpyType(int npy_type) { return py::dtype(npy_type); }

void BindRt(py::module_& rt) {
  rt.def("set_device", [](int32_t id) { return aclrtSetDevice(id); });
  rt.def("reset_device", [](int32_t id) { return aclrtResetDevice(id); });
  rt.def("get_device", [] {
    int32_t id = -1;
    const aclError ret = aclrtGetDevice(&id);
    return std::make_tuple(id, ret);
  });
  rt.def("get_device_count", [] {
    uint32_t n = 0;
    const aclError ret = aclrtGetDeviceCount(&n);
    return std::make_tuple(n, ret);
  });
  rt.def("get_run_mode", [] {
    aclrtRunMode m = ACL_HOST;
    const aclError ret = aclrtGetRunMode(&m);
    return std::make_tuple(static_cast<int>(m), ret);
  });
  rt.def("synchronize_device", [] { return aclrtSynchronizeDevice(); });
  rt.def("get_soc_name", [] {
    const char* name = aclrtGetSocName();
    return name ? std::string(name) : std::string();
  });
  rt.def("create_context", [](int32_t id) {
    aclrtContext c = nullptr;
    const aclError ret = aclrtCreateContext(&c, id);
    return std::make_tuple(Int(c), ret);
  });
  rt.def("destroy_context", [](Ptr c) { return aclrtDestroyContext(As<void>(c)); });
  rt.def("set_context", [](Ptr c) { return aclrtSetCurrentContext(As<void>(c)); });
  rt.def("get_context", [] {
    aclrtContext c = nullptr;
    const aclError ret = aclrtGetCurrentContext(&c);
    return std::make_tuple(Int(c), ret);
  });
  rt.def("create_stream", [] {
    aclrtStream s = nullptr;
    const aclError ret = aclrtCreateStream(&s);
    return std::make_tuple(Int(s), ret);
  });
  rt.def("destroy_stream", [](Ptr s) { return aclrtDestroyStream(As<void>(s)); });
  rt.def("synchronize_stream", [](Ptr s) { return aclrtSynchronizeStream(As<void>(s)); });
  rt.def("create_event", [] {
    aclrtEvent e = nullptr;
    const aclError ret = aclrtCreateEvent(&e);
    return std::make_tuple(Int(e), ret);
  });
  rt.def("destroy_event", [](Ptr e) { return aclrtDestroyEvent(As<void>(e)); });
  rt.def("record_event", [](Ptr e, Ptr s) { return aclrtRecordEvent(As<void>(e), As<void>(s)); });
  rt.def("reset_event", [](Ptr e, Ptr s) { return aclrtResetEvent(As<void>(e), As<void>(s)); });
  rt.def("stream_wait_event", [](Ptr s, Ptr e) { return aclrtStreamWaitEvent(As<void>(s), As<void>(e)); });
  rt.def("synchronize_event", [](Ptr e) { return aclrtSynchronizeEvent(As<void>(e)); });
  rt.def("event_elapsed_time", [](Ptr start, Ptr end) {
    float ms = 0;
    const aclError ret = aclrtEventElapsedTime(&ms, As<void>(start), As<void>(end));
    return std::make_tuple(ms, ret);
  });
  rt.def("malloc", [](size_t size, int policy) {
    void* p = nullptr;
    const aclError ret = aclrtMalloc(&p, size, static_cast<aclrtMemMallocPolicy>(policy));
    return std::make_tuple(Int(p), ret);
  });
  rt.def("free", [](Ptr p) { return aclrtFree(As<void>(p)); });
  rt.def("malloc_host", [](size_t size) {
    void* p = nullptr;
    const aclError ret = aclrtMallocHost(&p, size);
    return std::make_tuple(Int(p), ret);
  });
  rt.def("free_host", [](Ptr p) { return aclrtFreeHost(As<void>(p)); });
  rt.def("memcpy", [](Ptr dst, size_t dst_max, Ptr src, size_t count, int kind) {
    return aclrtMemcpy(As<void>(dst), dst_max, As<const void>(src), count, static_cast<aclrtMemcpyKind>(kind));
  });
  rt.def("memcpy_async", [](Ptr dst, size_t dst_max, Ptr src, size_t count, int kind, Ptr stream) {
    return aclrtMemcpyAsync(As<void>(dst), dst_max, As<const void>(src), count, static_cast<aclrtMemcpyKind>(kind), As<void>(stream));
  });
  rt.def("memset", [](Ptr p, size_t max, int32_t value, size_t count) { return aclrtMemset(As<void>(p), max, value, count); });
  rt.def("get_mem_info", [](int attr) {
    size_t free = 0, total = 0;
    const aclError ret = aclrtGetMemInfo(static_cast<aclrtMemAttr>(attr), &free, &total);
    return std::make_tuple(free, total, ret);
  });
}

void BindMdl(py::module_& mdl) {
  mdl.def("load_from_file", [](const std::string& path) {
    uint32_t id = 0;
    const aclError ret = aclmdlLoadFromFile(path.c_str(), &id);
    return std::make_tuple(id, ret);
  });
  mdl.def("load_from_mem", [](Ptr model, size_t size) {
    uint32_t id = 0;
    const aclError ret = aclmdlLoadFromMem(As<const void>(model), size, &id);
    return std::make_tuple(id, ret);
  });
  mdl.def("query_size", [](const std::string& path) {
    size_t work = 0, weight = 0;
    const aclError ret = aclmdlQuerySize(path.c_str(), &work, &weight);
    return std::make_tuple(work, weight, ret);
  });
  mdl.def("load_from_file_with_mem", [](const std::string& path, Ptr work, size_t work_size, Ptr weight, size_t weight_size) {
    uint32_t id = 0;
    const aclError ret = aclmdlLoadFromFileWithMem(path.c_str(), &id, As<void>(work), work_size, As<void>(weight), weight_size);
    return std::make_tuple(id, ret);
  });
  mdl.def("unload", [](uint32_t id) { return aclmdlUnload(id); });
  mdl.def("create_desc", [] { return Int(aclmdlCreateDesc()); });
  mdl.def("destroy_desc", [](Ptr d) { return aclmdlDestroyDesc(As<aclmdlDesc>(d)); });
  mdl.def("get_desc", [](Ptr d, uint32_t id) { return aclmdlGetDesc(As<aclmdlDesc>(d), id); });
  mdl.def("get_num_inputs", [](Ptr d) { return aclmdlGetNumInputs(As<aclmdlDesc>(d)); });
  mdl.def("get_num_outputs", [](Ptr d) { return aclmdlGetNumOutputs(As<aclmdlDesc>(d)); });
  mdl.def("get_input_size_by_index", [](Ptr d, size_t i) { return aclmdlGetInputSizeByIndex(As<aclmdlDesc>(d), i); });
  mdl.def("get_output_size_by_index", [](Ptr d, size_t i) { return aclmdlGetOutputSizeByIndex(As<aclmdlDesc>(d), i); });
  mdl.def("get_input_dims", &GetDims<aclmdlGetInputDims>);
  mdl.def("get_output_dims", &GetDims<aclmdlGetOutputDims>);
  mdl.def("get_cur_output_dims", &GetDims<aclmdlGetCurOutputDims>);
  mdl.def("get_input_name_by_index", [](Ptr d, size_t i) { return std::string(aclmdlGetInputNameByIndex(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_output_name_by_index", [](Ptr d, size_t i) { return std::string(aclmdlGetOutputNameByIndex(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_input_data_type", [](Ptr d, size_t i) { return static_cast<int>(aclmdlGetInputDataType(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_output_data_type", [](Ptr d, size_t i) { return static_cast<int>(aclmdlGetOutputDataType(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_input_format", [](Ptr d, size_t i) { return static_cast<int>(aclmdlGetInputFormat(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_output_format", [](Ptr d, size_t i) { return static_cast<int>(aclmdlGetOutputFormat(As<const aclmdlDesc>(d), i)); });
  mdl.def("get_input_index_by_name", [](Ptr d, const std::string& name) {
    size_t index = 0;
    const aclError ret = aclmdlGetInputIndexByName(As<const aclmdlDesc>(d), name.c_str(), &index);
    return std::make_tuple(index, ret);
  });
  mdl.def("get_dynamic_batch", [](Ptr d) {
    aclmdlBatch b{};
    const aclError ret = aclmdlGetDynamicBatch(As<const aclmdlDesc>(d), &b);
    py::dict out;
    out["batchCount"] = b.batchCount;
    out["batch"] = std::vector<uint64_t>(b.batch, b.batch + std::min<size_t>(b.batchCount, ACL_MAX_BATCH_NUM));
    return std::make_tuple(out, ret);
  });
  mdl.def("set_dynamic_batch_size", [](uint32_t id, Ptr ds, size_t index, uint64_t batch) {
    return aclmdlSetDynamicBatchSize(id, As<aclmdlDataset>(ds), index, batch);
  });
  mdl.def("set_dynamic_hw_size", [](uint32_t id, Ptr ds, size_t index, uint64_t h, uint64_t w) {
    return aclmdlSetDynamicHWSize(id, As<aclmdlDataset>(ds), index, h, w);
  });
  // dims as pyACL takes them: {"name": ..., "dimCount": n, "dims": [...]}.
  mdl.def("set_input_dynamic_dims", [](uint32_t id, Ptr ds, size_t index, py::dict dims) {
    aclmdlIODims d{};
    const auto values = dims["dims"].cast<std::vector<int64_t>>();
    if (values.size() > ACL_MAX_DIM_CNT) throw py::value_error("set_input_dynamic_dims: more than ACL_MAX_DIM_CNT dims");
    d.dimCount = values.size();
    std::copy(values.begin(), values.end(), d.dims);
    return aclmdlSetInputDynamicDims(id, As<aclmdlDataset>(ds), index, &d);
  });
  mdl.def("create_dataset", [] { return Int(aclmdlCreateDataset()); });
  mdl.def("destroy_dataset", [](Ptr ds) { return aclmdlDestroyDataset(As<const aclmdlDataset>(ds)); });
  mdl.def("add_dataset_buffer", [](Ptr ds, Ptr buffer) {
    const aclError ret = aclmdlAddDatasetBuffer(As<aclmdlDataset>(ds), As<aclDataBuffer>(buffer));
    return std::make_tuple(ds, ret);
  });
  mdl.def("get_dataset_num_buffers", [](Ptr ds) { return aclmdlGetDatasetNumBuffers(As<const aclmdlDataset>(ds)); });
  mdl.def("get_dataset_buffer", [](Ptr ds, size_t i) { return Int(aclmdlGetDatasetBuffer(As<const aclmdlDataset>(ds), i)); });
  mdl.def("set_dataset_tensor_desc", [](Ptr ds, Ptr desc, size_t i) { return aclmdlSetDatasetTensorDesc(As<aclmdlDataset>(ds), As<aclTensorDesc>(desc), i); });
  mdl.def("get_dataset_tensor_desc", [](Ptr ds, size_t i) { return Int(aclmdlGetDatasetTensorDesc(As<const aclmdlDataset>(ds), i)); });
  // The model runs without the interpreter lock: other Python threads go on meanwhile.
  mdl.def("init_dump", [] { return aclmdlInitDump(); });
  mdl.def("set_dump", [](const std::string& path) { return aclmdlSetDump(path.c_str()); });
  mdl.def("finalize_dump", [] { return aclmdlFinalizeDump(); });
  mdl.def("execute", [](uint32_t id, Ptr in, Ptr out) {
    py::gil_scoped_release release;
    return aclmdlExecute(id, As<const aclmdlDataset>(in), As<aclmdlDataset>(out));
  });
  mdl.def("execute_async", [](uint32_t id, Ptr in, Ptr out, Ptr stream) {
    py::gil_scoped_release release;
    return aclmdlExecuteAsync(id, As<const aclmdlDataset>(in), As<aclmdlDataset>(out), As<void>(stream));
  });
}

// Dynamic AIPP's parameter set, as pyACL names its calls.
void BindAipp(py::module_& mdl) {
  mdl.def("create_aipp", [](uint64_t batch) { return Int(aclmdlCreateAIPP(batch)); });
  mdl.def("destroy_aipp", [](Ptr a) { return aclmdlDestroyAIPP(As<const aclmdlAIPP>(a)); });
  mdl.def("get_aipp_data_size", [](uint64_t batch) {
    size_t size = 0;
    const aclError ret = aclmdlGetAippDataSize(batch, &size);
    return std::make_tuple(size, ret);
  });
  mdl.def("set_aipp_input_format", [](Ptr a, int f) { return aclmdlSetAIPPInputFormat(As<aclmdlAIPP>(a), static_cast<aclAippInputFormat>(f)); });
  mdl.def("set_aipp_csc_params", [](Ptr a, int8_t on, int16_t m00, int16_t m01, int16_t m02, int16_t m10, int16_t m11, int16_t m12, int16_t m20, int16_t m21,
                                    int16_t m22, uint8_t o0, uint8_t o1, uint8_t o2, uint8_t i0, uint8_t i1, uint8_t i2) {
    return aclmdlSetAIPPCscParams(As<aclmdlAIPP>(a), on, m00, m01, m02, m10, m11, m12, m20, m21, m22, o0, o1, o2, i0, i1, i2);
  });
  mdl.def("set_aipp_rbuv_swap_switch", [](Ptr a, int8_t on) { return aclmdlSetAIPPRbuvSwapSwitch(As<aclmdlAIPP>(a), on); });
  mdl.def("set_aipp_ax_swap_switch", [](Ptr a, int8_t on) { return aclmdlSetAIPPAxSwapSwitch(As<aclmdlAIPP>(a), on); });
  mdl.def("set_aipp_src_image_size", [](Ptr a, int32_t w, int32_t h) { return aclmdlSetAIPPSrcImageSize(As<aclmdlAIPP>(a), w, h); });
  mdl.def("set_aipp_scf_params", [](Ptr a, int8_t on, int32_t iw, int32_t ih, int32_t ow, int32_t oh, uint64_t b) {
    return aclmdlSetAIPPScfParams(As<aclmdlAIPP>(a), on, iw, ih, ow, oh, b);
  });
  mdl.def("set_aipp_crop_params", [](Ptr a, int8_t on, int32_t x, int32_t y, int32_t w, int32_t h, uint64_t b) {
    return aclmdlSetAIPPCropParams(As<aclmdlAIPP>(a), on, x, y, w, h, b);
  });
  mdl.def("set_aipp_padding_params", [](Ptr a, int8_t on, int32_t top, int32_t bottom, int32_t left, int32_t right, uint64_t b) {
    return aclmdlSetAIPPPaddingParams(As<aclmdlAIPP>(a), on, top, bottom, left, right, b);
  });
  mdl.def("set_aipp_dtc_pixel_mean", [](Ptr a, int16_t c0, int16_t c1, int16_t c2, int16_t c3, uint64_t b) {
    return aclmdlSetAIPPDtcPixelMean(As<aclmdlAIPP>(a), c0, c1, c2, c3, b);
  });
  mdl.def("set_aipp_dtc_pixel_min", [](Ptr a, float c0, float c1, float c2, float c3, uint64_t b) {
    return aclmdlSetAIPPDtcPixelMin(As<aclmdlAIPP>(a), c0, c1, c2, c3, b);
  });
  mdl.def("set_aipp_pixel_var_reci", [](Ptr a, float c0, float c1, float c2, float c3, uint64_t b) {
    return aclmdlSetAIPPPixelVarReci(As<aclmdlAIPP>(a), c0, c1, c2, c3, b);
  });
  mdl.def("set_input_aipp", [](uint32_t id, Ptr ds, size_t index, Ptr a) { return aclmdlSetInputAIPP(id, As<aclmdlDataset>(ds), index, As<const aclmdlAIPP>(a)); });
  mdl.def("set_aipp_by_input_index", [](uint32_t id, Ptr ds, size_t index, Ptr a) {
    return aclmdlSetAIPPByInputIndex(id, As<aclmdlDataset>(ds), index, As<const aclmdlAIPP>(a));
  });
  // pyACL's form: the aclAippInfo fields as a dict (outDims[0] as src_dims / aipp_out_dims lists).
  mdl.def("get_first_aipp_info", [](uint32_t id, size_t index) {
    aclAippInfo a{};
    const aclError ret = aclmdlGetFirstAippInfo(id, index, &a);
    py::dict d;
    if (ret != ACL_SUCCESS) return std::make_tuple(d, ret);
    d["inputFormat"] = static_cast<int>(a.inputFormat), d["srcImageSizeW"] = a.srcImageSizeW, d["srcImageSizeH"] = a.srcImageSizeH;
    d["cropSwitch"] = a.cropSwitch, d["loadStartPosW"] = a.loadStartPosW, d["loadStartPosH"] = a.loadStartPosH;
    d["cropSizeW"] = a.cropSizeW, d["cropSizeH"] = a.cropSizeH, d["paddingSwitch"] = a.paddingSwitch, d["cscSwitch"] = a.cscSwitch;
    d["meanChn"] = std::vector<int32_t>{a.meanChn0, a.meanChn1, a.meanChn2, a.meanChn3};
    d["varReciChn"] = std::vector<float>{a.varReciChn0, a.varReciChn1, a.varReciChn2, a.varReciChn3};
    auto dims = [](const aclmdlIODims& x) { return std::vector<int64_t>(x.dims, x.dims + x.dimCount); };
    d["src_dims"] = dims(a.outDims[0].srcDims), d["aipp_out_dims"] = dims(a.outDims[0].aippOutdims);
    d["srcSize"] = a.outDims[0].srcSize, d["aippOutSize"] = a.outDims[0].aippOutSize;
    return std::make_tuple(d, ret);
  });
  mdl.def("get_aipp_type", [](uint32_t id, size_t index) {
    aclmdlInputAippType type = ACL_DATA_WITHOUT_AIPP;
    size_t attached = 0;
    const aclError ret = aclmdlGetAippType(id, index, &type, &attached);
    return std::make_tuple(static_cast<int>(type), attached, ret);
  });
}

void BindProf(py::module_& prof) {
  prof.def("init", [](const std::string& path) { return aclprofInit(path.c_str(), path.size()); });
  prof.def("finalize", [] { return aclprofFinalize(); });
  // pyACL's form: the device list as a Python list, aicore_events 0 (none).
  prof.def("create_config", [](std::vector<uint32_t> devices, int metrics, Ptr events, uint64_t data_types) {
    return Int(aclprofCreateConfig(devices.data(), static_cast<uint32_t>(devices.size()), static_cast<aclprofAicoreMetrics>(metrics),
                                   As<aclprofAicoreEvents>(events), data_types));
  });
  prof.def("destroy_config", [](Ptr c) { return aclprofDestroyConfig(As<const aclprofConfig>(c)); });
  prof.def("start", [](Ptr c) { return aclprofStart(As<const aclprofConfig>(c)); });
  prof.def("stop", [](Ptr c) { return aclprofStop(As<const aclprofConfig>(c)); });
  // Subscription: pyACL passes the pipe's write end as an int.
  prof.def("create_subscribe_config", [](int8_t time_info, int metrics, int fd) {
    return Int(aclprofCreateSubscribeConfig(time_info, static_cast<aclprofAicoreMetrics>(metrics), &fd));
  });
  prof.def("destroy_subscribe_config", [](Ptr c) { return aclprofDestroySubscribeConfig(As<const aclprofSubscribeConfig>(c)); });
  prof.def("model_subscribe", [](uint32_t id, Ptr c) { return aclprofModelSubscribe(id, As<const aclprofSubscribeConfig>(c)); });
  prof.def("model_unsubscribe", [](uint32_t id) { return aclprofModelUnSubscribe(id); });
  prof.def("get_op_desc_size", [] {
    size_t n = 0;
    const aclError ret = aclprofGetOpDescSize(&n);
    return std::make_tuple(n, ret);
  });
  prof.def("get_op_num", [](Ptr info, size_t len) {
    uint32_t n = 0;
    const aclError ret = aclprofGetOpNum(As<const void>(info), len, &n);
    return std::make_tuple(n, ret);
  });
  // The _v2 forms size the string themselves; the plain ones take the caller's length, as pyACL's do.
  auto text = [](aclError (*get)(const void*, size_t, uint32_t, char*, size_t), Ptr info, size_t len, uint32_t i, size_t cap) {
    std::string out(cap, '\0');
    const aclError ret = get(As<const void>(info), len, i, out.data(), cap);
    out.resize(ret == ACL_SUCCESS ? std::strlen(out.c_str()) : 0);
    return std::make_tuple(out, ret);
  };
  prof.def("get_op_type", [text](Ptr info, size_t len, uint32_t i, size_t cap) { return text(aclprofGetOpType, info, len, i, cap); });
  prof.def("get_op_name", [text](Ptr info, size_t len, uint32_t i, size_t cap) { return text(aclprofGetOpName, info, len, i, cap); });
  prof.def("get_op_type_v2", [text](Ptr info, size_t len, uint32_t i) { return text(aclprofGetOpType, info, len, i, ACL_PROF_MAX_OP_TYPE_LEN); });
  prof.def("get_op_name_v2", [text](Ptr info, size_t len, uint32_t i) { return text(aclprofGetOpName, info, len, i, ACL_PROF_MAX_OP_NAME_LEN); });
  prof.def("get_op_start", [](Ptr info, size_t len, uint32_t i) { return aclprofGetOpStart(As<const void>(info), len, i); });
  prof.def("get_op_end", [](Ptr info, size_t len, uint32_t i) { return aclprofGetOpEnd(As<const void>(info), len, i); });
  prof.def("get_op_duration", [](Ptr info, size_t len, uint32_t i) { return aclprofGetOpDuration(As<const void>(info), len, i); });
  prof.def("get_model_id", [](Ptr info, size_t len, uint32_t i) { return aclprofGetModelId(As<const void>(info), len, i); });
}

void BindUtil(py::module_& util) {
  // The address of an array's data: a C-contiguous array is required (a view with strides is refused, not copied).
  util.def("numpy_to_ptr", [](py::array a) {
    if (!(a.flags() & py::array::c_style)) throw py::value_error("numpy_to_ptr: the array is not C-contiguous; use np.ascontiguousarray");
    return Int(a.mutable_data());
  });
  util.def("numpy_contiguous_to_ptr", [](py::array a) {
    if (!(a.flags() & py::array::c_style)) throw py::value_error("numpy_contiguous_to_ptr: the array is not C-contiguous");
    return Int(a.mutable_data());
  });
  // The bytes object's own buffer (as pyACL: valid while the object lives; Python bytes are immutable, so write
  // into memory from acl.rt.malloc_host or a numpy array instead).
  util.def("bytes_to_ptr", [](py::bytes b) { return Int(PyBytes_AsString(b.ptr())); });
  util.def("ptr_to_bytes", [](Ptr p, size_t size) { return py::bytes(As<const char>(p), size); });
  // A numpy array over memory at p (no copy): shape as a tuple or list, npy_type numpy's type number (np.float32 ->
  // 11, as np.dtype(np.float32).num gives).
  util.def("ptr_to_numpy", [](Ptr p, std::vector<ssize_t> shape, int npy_type) {
    return py::array(NumpyType(npy_type), shape, As<void>(p), py::none());
  });
}

}  // namespace

PYBIND11_MODULE(acl, m) {
  m.doc() = "npukit's pyACL: AscendCL for Python on the simulated NPU";
  m.attr("ACL_DYNAMIC_TENSOR_NAME") = ACL_DYNAMIC_TENSOR_NAME;
  m.def("init", [](const std::string& config) { return aclInit(config.c_str()); }, py::arg("config_path") = "");
  m.def("finalize", [] { return aclFinalize(); });
  m.def("get_recent_err_msg", [] { return std::string(aclGetRecentErrMsg()); });
  m.def("create_data_buffer", [](Ptr data, size_t size) { return Int(aclCreateDataBuffer(As<void>(data), size)); });
  m.def("destroy_data_buffer", [](Ptr b) { return aclDestroyDataBuffer(As<const aclDataBuffer>(b)); });
  m.def("update_data_buffer", [](Ptr b, Ptr data, size_t size) { return aclUpdateDataBuffer(As<aclDataBuffer>(b), As<void>(data), size); });
  m.def("get_data_buffer_addr", [](Ptr b) { return Int(aclGetDataBufferAddr(As<const aclDataBuffer>(b))); });
  m.def("get_data_buffer_size", [](Ptr b) { return aclGetDataBufferSizeV2(As<const aclDataBuffer>(b)); });
  m.def("get_data_buffer_size_v2", [](Ptr b) { return aclGetDataBufferSizeV2(As<const aclDataBuffer>(b)); });
  m.def("create_tensor_desc", [](int dtype, const std::vector<int64_t>& dims, int format) {
    return Int(aclCreateTensorDesc(static_cast<aclDataType>(dtype), static_cast<int>(dims.size()), dims.data(), static_cast<aclFormat>(format)));
  });
  m.def("destroy_tensor_desc", [](Ptr d) { aclDestroyTensorDesc(As<const aclTensorDesc>(d)); });
  m.def("get_tensor_desc_type", [](Ptr d) { return static_cast<int>(aclGetTensorDescType(As<const aclTensorDesc>(d))); });
  m.def("get_tensor_desc_format", [](Ptr d) { return static_cast<int>(aclGetTensorDescFormat(As<const aclTensorDesc>(d))); });
  m.def("get_tensor_desc_size", [](Ptr d) { return aclGetTensorDescSize(As<const aclTensorDesc>(d)); });
  m.def("get_tensor_desc_element_count", [](Ptr d) { return aclGetTensorDescElementCount(As<const aclTensorDesc>(d)); });
  m.def("get_tensor_desc_num_dims", [](Ptr d) { return aclGetTensorDescNumDims(As<const aclTensorDesc>(d)); });
  m.def("get_tensor_desc_dim_v2", [](Ptr d, size_t index) {
    int64_t dim = -1;
    const aclError ret = aclGetTensorDescDimV2(As<const aclTensorDesc>(d), index, &dim);
    return std::make_tuple(dim, ret);
  });
  m.def("float16_to_float", [](uint16_t v) { return aclFloat16ToFloat(v); });
  m.def("float_to_float16", [](float v) { return aclFloatToFloat16(v); });
  py::module_ rt = m.def_submodule("rt", "devices, contexts, streams, events and memory");
  BindRt(rt);
  py::module_ mdl = m.def_submodule("mdl", "offline models");
  BindMdl(mdl);
  BindAipp(mdl);
  py::module_ prof = m.def_submodule("prof", "profiling into a PROF folder");
  BindProf(prof);
  py::module_ util = m.def_submodule("util", "pointers, numpy arrays and bytes");
  BindUtil(util);
}
