// `atc --mode=1` of an .om: its ge.proto.ModelDef as JSON, printed as CANN's ATC prints one, for .om files
// ATC wrote and npukit wrote alike. ATC's printer walks the message by reflection: every field that is set,
// keys in alphabetical order, enums by name, a float attr as "%g" text, a map as a [{key, value}] list, a
// message with nothing printable as null, and ten field names never shown (weights, sizes, raw bytes).
#pragma once
#include <google/protobuf/message.h>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace npu {

nlohmann::ordered_json GeMessageJson(const google::protobuf::Message& m);

// The ModelDef of the .om at `path` (compressed attribute names expanded, as ATC expands them).
Result<nlohmann::ordered_json> OmModelDefJson(const std::string& path);

}  // namespace npu
