// Parsing an ONNX model without protobuf copying its weights. protobuf copies every bytes field into a
// fresh std::string: for a 100 MB model that is 100 MB of new pages, faulted in one at a time, and most of
// atc's import time. So the initializers' raw_data payloads are cut out of the serialized model first (a
// walk over the wire format with protobuf's own reader), protobuf parses the small remainder, and each
// initializer is given its bytes in the file instead.
#pragma once
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace npu {

struct CutModel {
  std::string bytes;  // the ModelProto without graph.initializer[*].raw_data
  // Per graph.initializer, in order: where its raw_data lies in the file (none: it had no raw_data).
  std::vector<std::optional<std::span<const std::byte>>> raw;
};

// Cuts graph.initializer[*].raw_data out of a serialized ModelProto. nullopt when the bytes are not a
// well-formed protobuf message; the caller then parses the file whole and reports what protobuf finds.
std::optional<CutModel> CutInitializerData(std::span<const std::byte> model);

}  // namespace npu
