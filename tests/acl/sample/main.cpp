// An inference program written for an Ascend device, with the life cycle of Ascend's sample programs: initialise,
// set the device, create a context and a stream, load the .om, describe it, copy the input to the device, execute
// on the stream, copy the outputs back, release everything. It knows nothing of npukit.
//
// usage: main MODEL.om INPUT.bin OUT_PREFIX [acl.json] [--from-mem]
//   writes OUT_PREFIX_<k>.bin per output and prints each output's dims, the top-5 classes of output 0 (as the
//   samples print them) and the device time between two events.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <vector>

#include "acl/acl.h"

#define CHECK(call)                                                                                   \
  do {                                                                                                \
    aclError ret_ = (call);                                                                           \
    if (ret_ != ACL_SUCCESS) {                                                                        \
      std::fprintf(stderr, "%s failed: %d (%s)\n", #call, ret_, aclGetRecentErrMsg());                \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (0)

// The five largest scores of a float or float16 output, best first.
static std::vector<size_t> Top5(const void* data, size_t size, aclDataType type) {
  std::vector<float> scores;
  if (type == ACL_FLOAT16) {
    for (size_t i = 0; i < size / 2; ++i) scores.push_back(aclFloat16ToFloat(static_cast<const aclFloat16*>(data)[i]));
  } else if (type == ACL_FLOAT) {
    scores.assign(static_cast<const float*>(data), static_cast<const float*>(data) + size / 4);
  }
  std::vector<size_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0);
  const size_t k = std::min<size_t>(5, order.size());
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  order.resize(k);
  return order;
}

static std::vector<char> ReadFile(const char* path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.om INPUT.bin OUT_PREFIX [acl.json] [--from-mem]\n", argv[0]);
    return 2;
  }
  const char* config = argc > 4 && std::strcmp(argv[4], "--from-mem") != 0 ? argv[4] : "";
  bool from_mem = false;
  for (int i = 4; i < argc; ++i) from_mem = from_mem || std::strcmp(argv[i], "--from-mem") == 0;

  CHECK(aclInit(config));
  CHECK(aclrtSetDevice(0));
  aclrtContext context = nullptr;
  CHECK(aclrtCreateContext(&context, 0));
  aclrtStream stream = nullptr;
  CHECK(aclrtCreateStream(&stream));
  aclrtRunMode run_mode;
  CHECK(aclrtGetRunMode(&run_mode));

  uint32_t model_id = 0;
  std::vector<char> model_bytes;
  if (from_mem) {
    model_bytes = ReadFile(argv[1]);
    CHECK(aclmdlLoadFromMem(model_bytes.data(), model_bytes.size(), &model_id));
  } else {
    CHECK(aclmdlLoadFromFile(argv[1], &model_id));
  }
  aclmdlDesc* desc = aclmdlCreateDesc();
  CHECK(aclmdlGetDesc(desc, model_id));

  // The input: one file for the first input; any other input is zero-filled.
  std::vector<char> input = ReadFile(argv[2]);
  aclmdlDataset* inputs = aclmdlCreateDataset();
  std::vector<void*> device_buffers;
  for (size_t i = 0; i < aclmdlGetNumInputs(desc); ++i) {
    const size_t size = aclmdlGetInputSizeByIndex(desc, i);
    void* dev = nullptr;
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_NORMAL_ONLY));
    device_buffers.push_back(dev);
    if (i == 0) {
      if (input.size() != size) {
        std::fprintf(stderr, "input file has %zu bytes, the model's input 0 (%s) %zu\n", input.size(), aclmdlGetInputNameByIndex(desc, 0), size);
        return 1;
      }
      CHECK(aclrtMemcpy(dev, size, input.data(), size, run_mode == ACL_HOST ? ACL_MEMCPY_HOST_TO_DEVICE : ACL_MEMCPY_DEVICE_TO_DEVICE));
    } else {
      CHECK(aclrtMemset(dev, size, 0, size));
    }
    CHECK(aclmdlAddDatasetBuffer(inputs, aclCreateDataBuffer(dev, size)));
  }
  aclmdlDataset* outputs = aclmdlCreateDataset();
  for (size_t i = 0; i < aclmdlGetNumOutputs(desc); ++i) {
    const size_t size = aclmdlGetOutputSizeByIndex(desc, i);
    void* dev = nullptr;
    CHECK(aclrtMalloc(&dev, size, ACL_MEM_MALLOC_HUGE_FIRST));
    device_buffers.push_back(dev);
    CHECK(aclmdlAddDatasetBuffer(outputs, aclCreateDataBuffer(dev, size)));
  }

  aclrtEvent start = nullptr, end = nullptr;
  CHECK(aclrtCreateEvent(&start));
  CHECK(aclrtCreateEvent(&end));
  CHECK(aclrtRecordEvent(start, stream));
  CHECK(aclmdlExecuteAsync(model_id, inputs, outputs, stream));
  CHECK(aclrtRecordEvent(end, stream));
  CHECK(aclrtSynchronizeStream(stream));
  float ms = 0;
  CHECK(aclrtEventElapsedTime(&ms, start, end));
  std::printf("device time %.6f ms\n", ms);

  for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(outputs); ++i) {
    aclDataBuffer* buffer = aclmdlGetDatasetBuffer(outputs, i);
    const size_t size = aclGetDataBufferSizeV2(buffer);
    void* host = nullptr;
    CHECK(aclrtMallocHost(&host, size));
    CHECK(aclrtMemcpy(host, size, aclGetDataBufferAddr(buffer), size, ACL_MEMCPY_DEVICE_TO_HOST));
    aclmdlIODims dims;
    CHECK(aclmdlGetCurOutputDims(desc, i, &dims));
    std::printf("output %zu %s dtype %d format %d dims", i, dims.name, static_cast<int>(aclmdlGetOutputDataType(desc, i)),
                static_cast<int>(aclmdlGetOutputFormat(desc, i)));
    for (size_t d = 0; d < dims.dimCount; ++d) std::printf(" %lld", static_cast<long long>(dims.dims[d]));
    std::printf("\n");
    if (i == 0) {
      std::printf("top5");
      for (size_t c : Top5(host, size, aclmdlGetOutputDataType(desc, 0))) std::printf(" %zu", c);
      std::printf("\n");
    }
    const std::string path = std::string(argv[3]) + "_" + std::to_string(i) + ".bin";
    std::ofstream(path, std::ios::binary).write(static_cast<const char*>(host), static_cast<std::streamsize>(size));
    CHECK(aclrtFreeHost(host));
  }

  for (aclmdlDataset* set : {inputs, outputs}) {
    for (size_t i = 0; i < aclmdlGetDatasetNumBuffers(set); ++i) CHECK(aclDestroyDataBuffer(aclmdlGetDatasetBuffer(set, i)));
    CHECK(aclmdlDestroyDataset(set));
  }
  for (void* dev : device_buffers) CHECK(aclrtFree(dev));
  CHECK(aclrtDestroyEvent(start));
  CHECK(aclrtDestroyEvent(end));
  CHECK(aclmdlDestroyDesc(desc));
  CHECK(aclmdlUnload(model_id));
  CHECK(aclrtDestroyStream(stream));
  CHECK(aclrtDestroyContext(context));
  CHECK(aclrtResetDevice(0));
  CHECK(aclFinalize());
  return 0;
}
