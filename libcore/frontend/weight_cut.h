// Parsing a model without protobuf copying its weights. protobuf copies every bytes field into a fresh
// std::string: for a 100 MB model that is 100 MB of new pages, faulted in one at a time, and most of the
// import time. So the weight payloads are cut out of the serialized model first (a walk over the wire format
// with protobuf's own reader), protobuf parses the small remainder, and each tensor is given its bytes in the
// file instead. ONNX cuts TensorProto.raw_data of graph.initializer; TensorFlow cuts TensorProto.tensor_content
// of every Const's `value` attr.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace npu {

// Where the payloads are: the length-delimited fields leading from the top message to a tensor message, and
// the tensor's bytes field that is cut.
struct CutPath {
  std::vector<uint32_t> to_tensor;
  uint32_t payload;
};

// What happens at each tensor on the path: `enter` when the walk enters one (in file order), `cut` for its
// payload, which may append a replacement field to the tensor's remaining bytes.
struct CutHandlers {
  std::function<void()> enter;
  std::function<void(std::span<const std::byte> payload, std::string& tensor_bytes)> cut;
};

// The message without the payloads. nullopt when the bytes are not a well-formed protobuf message; the
// caller then parses the file whole and reports what protobuf finds.
std::optional<std::string> CutPayloads(std::span<const std::byte> message, const CutPath& path, const CutHandlers& on);

struct CutModel {
  std::string bytes;  // the ModelProto without graph.initializer[*].raw_data
  // Per graph.initializer, in order: where its raw_data lies in the file (none: it had no raw_data).
  std::vector<std::optional<std::span<const std::byte>>> raw;
};

// Cuts graph.initializer[*].raw_data out of a serialized ONNX ModelProto.
std::optional<CutModel> CutInitializerData(std::span<const std::byte> model);

}  // namespace npu
