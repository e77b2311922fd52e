// Caffe import: the prototxt (text format) and the caffemodel (binary) of one net, the V1 upgrade, weights
// matched by name and every layer converter. Input: u32 prototxt length (little endian), the prototxt, then
// the caffemodel.
#include <cstring>

#include "frontend/caffe/caffe_importer.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  uint32_t text = 0;
  if (size < sizeof text) return 0;
  std::memcpy(&text, data, sizeof text);
  data += sizeof text;
  size -= sizeof text;
  text = static_cast<uint32_t>(std::min<size_t>(text, size));
  npu::fuzz::MemFile prototxt({data, text}), caffemodel({data + text, size - text});
  npu::ImportOptions opts;
  opts.weight = caffemodel.path();
  (void)npu::ImportCaffe(prototxt.path(), opts);
  return 0;
}
