#include "frontend/text_proto.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

namespace npu {
namespace {

class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty()) first = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, int, const std::string&) override {}
  std::string first;
};

}  // namespace

Status ParseTextProto(std::string_view text, google::protobuf::Message* out, bool allow_unknown_fields, std::string* where) {
  google::protobuf::TextFormat::Parser parser;
  FirstError errors;
  parser.RecordErrorsTo(&errors);
  parser.AllowUnknownField(allow_unknown_fields);
  if (parser.ParseFromString(std::string(text), out)) return Status::Ok();
  *where = errors.first.empty() ? "an unknown position" : errors.first;
  return Status::Error("E10041", "text", "", *where);
}

}  // namespace npu
