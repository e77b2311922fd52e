// Offline models under AscendCL: loading an .om into a runtime Session (the simulated SoC it was converted for),
// describing its inputs and outputs as AscendCL does, and executing it on device buffers.
#pragma once
#include <map>
#include <optional>
#include <span>
#include <memory>
#include <string>
#include <vector>

#include "acl/acl_mdl.h"
#include "debug/dump_observer.h"
#include "prof/collector.h"
#include "runtime/runtime.h"
#include "subscribe.h"
#include "tool_hooks.h"

// The C interface's opaque types.
struct aclDataBuffer {
  void* data;
  size_t size;
};
struct aclTensorDesc {
  aclDataType dtype = ACL_DT_UNDEFINED;
  std::vector<int64_t> dims;
  aclFormat format = ACL_FORMAT_UNDEFINED;
};
struct aclmdlDataset {
  std::vector<aclDataBuffer*> buffers;
  // By buffer index: aclmdlSetDatasetTensorDesc's copies (inputs), or what the last execution made (outputs).
  // Each is a live handle of TensorDescs(), destroyed with the dataset.
  std::map<size_t, aclTensorDesc*> descs;
};

namespace npu::acl {

struct Stream;
template <typename T>
class Handles;
Handles<aclTensorDesc>& TensorDescs();  // api_tensor_desc.cc
// Sets dataset's description `index` to a copy of `desc` (replacing and destroying the one before).
void SetDatasetDesc(aclmdlDataset& dataset, size_t index, const aclTensorDesc& desc);

// One input or output as the device sees it: the shape and format atc gave it on the device, its bytes.
struct IoDesc {
  std::string name;
  aclmdlInputAippType aipp = ACL_DATA_WITHOUT_AIPP;  // inputs: what AIPP the input feeds (aclmdlGetAippType)
  DType dtype = DType::kF32;
  Format format = Format::kND;
  Shape dims;
  size_t bytes = 0;
};
struct ModelIo {
  std::vector<IoDesc> inputs, outputs;
  ShapeProfiles profiles;  // a shape-profile model's (empty for a static one)
};

// A model's name in dump paths: its file's stem, as msame names it.
std::string ModelName(const std::string& path);

// AscendCL's code of a dtype (aclDataType: ge::DataType's numbering, not the ge.proto numbering DType keeps).
aclDataType AclDataType(DType t);

class Models {
 public:
  static Models& Get();
  // `name`: the model's name in dump paths (the file's stem).
  aclError LoadFile(const std::string& path, const std::string& name, uint32_t* id, const char* call);
  aclError LoadMem(const void* bytes, size_t size, uint32_t* id);
  aclError Unload(uint32_t id);
  void UnloadAll();
  // aclmdlFinalizeDump: loaded models stop dumping (their dump observers leave their sessions).
  void StopDumps();
  // The work (feature map) and weight bytes of an .om, as aclmdlQuerySize reports them.
  aclError QuerySize(const std::string& path, size_t* work, size_t* weight);
  aclError Describe(uint32_t id, ModelIo* io, const char* call);
  // Every loaded model's sessions join the collection `c` (aclprofStart: models loaded before it are profiled too).
  aclError JoinCollection(prof::Collector& c, const char* call);
  // The dims of output `index` as the last execution gave them (a profile model's depend on its profile).
  std::optional<Shape> CurrentOutputDims(uint32_t id, size_t index) const;
  // A shape-profile model's selector: writes the profile's values into the dataset's buffer `index` (the input
  // named ACL_DYNAMIC_TENSOR_NAME), which Execute reads to pick the profile. `kind`: "batch", "image_size", "dims".
  aclError SetProfile(uint32_t id, aclmdlDataset* dataset, size_t index, const std::string& kind, const std::vector<int64_t>& given,
                      const char* call);
  // aclmdlSetInputDynamicDims: `dims` holds every input's dims in order; the profile's values are those at the -1s.
  aclError SetProfileDims(uint32_t id, aclmdlDataset* dataset, size_t index, const std::vector<int64_t>& dims, const char* call);
  // aclprofModelSubscribe / UnSubscribe: every execution of model `id` writes its op records to `fd`.
  aclError Subscribe(uint32_t id, int fd, const char* call);
  aclError Unsubscribe(uint32_t id, const char* call);
  // aclmdlSetInputAIPP: writes the dynamic AIPP parameters `block` into the dataset's buffer `index`, which must be
  // the model's kDynamicAippInput (`data_index`: the image input's index instead, aclmdlSetAIPPByInputIndex).
  aclError SetAippParams(uint32_t id, aclmdlDataset* dataset, size_t index, bool data_index, uint64_t batch, std::span<const std::byte> block,
                         const char* call);
  aclError AippType(uint32_t id, size_t index, aclmdlInputAippType* type, size_t* attached, const char* call) const;
  // The static Aipp node reading input `index` of model `id`, in profile 0's graph.
  aclError StaticAippOf(uint32_t id, size_t index, const Node** node, const Graph** graph, const char* call) const;
  // tool_hooks.h's view of a loaded model: a profile's session (null if none), the next dump step, the dump counts.
  const Session* SessionOf(uint32_t id, size_t profile) const;
  aclError SetStep(uint32_t id, uint64_t step, const char* call);
  DumpTally Tally(uint32_t id) const;
  // Runs model `id` on `stream` (its simulated clock advances by the iteration's time).
  aclError Execute(uint32_t id, const aclmdlDataset* input, aclmdlDataset* output, Stream& stream, const char* call);

 private:
  // One shape profile's session (the only one of a static model) with the observers acl.json asked for.
  struct Run {
    std::unique_ptr<Session> session;
    std::unique_ptr<debug::DumpObserver> dumper;  // ... its dump section
    std::unique_ptr<debug::DumpObserver> exception_dumper;  // ... its dump_scene lite_exception
  };
  struct Loaded {
    std::string path, name;  // the .om (a memfd's path for aclmdlLoadFromMem: `fd` keeps it open)
    int fd = -1;
    ModelIo io;
    ShapeProfiles profiles;
    std::map<size_t, Run> runs;  // by profile; profile 0 at load, the others when first selected
    size_t current = 0;          // the profile of the last execution
    uint64_t step = 0;           // executions so far (dump_step counts them)
    std::unique_ptr<OpSubscriber> subscriber;  // aclprofModelSubscribe's, on every run
    ~Loaded();
    Loaded() = default;
    Loaded(Loaded&&) = default;
  };
  // Copies output `k` of an execution into its buffer (allocating one the program left empty) and describes it.
  static aclError DeliverOutput(const Tensor& t, const IoDesc& declared, size_t k, aclmdlDataset& output, const char* call);
  // Loads `path` (profile 0, and every other profile of a shape-profile model). `fd` (or -1): the memfd behind a
  // /proc/self/fd path, owned from here on.
  aclError LoadSession(const std::string& path, const std::string& name, int fd, uint32_t* id, const char* call);
  // Profile k's run of model `id`, loaded when first asked for; an error code recorded for `call` if it cannot be.
  aclError ProfileRun(uint32_t id, Loaded& m, size_t k, const char* call, Run** out);
  std::map<uint32_t, Loaded> models_;
  uint32_t next_id_ = 1;
};

}  // namespace npu::acl

// aclmdlDesc: a snapshot of a loaded model's inputs and outputs, and the model it describes.
struct aclmdlDesc {
  npu::acl::ModelIo io;
  uint32_t model_id = 0;
  bool filled = false;
};
