// Protobuf text format for the model files that use it (TensorFlow .pbtxt, Caffe .prototxt): a parse error
// names the line and column in the Status instead of going to protobuf's log. Training-only fields npukit
// does not model are skipped (`allow_unknown_fields`).
#pragma once
#include <google/protobuf/message.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace npu {

// On failure: "line L, column C: <protobuf's message>".
Status ParseTextProto(std::string_view text, google::protobuf::Message* out, bool allow_unknown_fields, std::string* where);

}  // namespace npu
