#include "om/ge_json.h"

#include <google/protobuf/descriptor.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string_view>
#include <vector>

#include "om/ge_model.h"

namespace npu {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;
using Json = nlohmann::ordered_json;

// The fields ATC's printer leaves out (kOmBlackFields in GE's atc tool): weight bytes, memory sizes and
// offsets, raw-bytes attrs. They are field names at any depth, not attribute keys.
constexpr std::array<std::string_view, 10> kHiddenFields = {"output",      "data_offset", "data", "workspace", "workspace_bytes",
                                                            "memory_size", "weight_size", "size", "bt",        "quantize_factor"};
// GE stops descending here (a GraphDef inside an attr inside a GraphDef...); deeper messages print as null.
constexpr int kMaxDepth = 20;
// GE formats a float field with "%g" into a 10-byte buffer; text that does not fit is printed as a number.
constexpr size_t kFloatTextBuffer = 10;

Json MessageJson(const Message& m, int depth);

Json FloatJson(float f) {
  std::array<char, 64> text{};
  int n = std::snprintf(text.data(), text.size(), "%g", static_cast<double>(f));
  if (n > 0 && static_cast<size_t>(n) < kFloatTextBuffer) return std::string(text.data(), static_cast<size_t>(n));
  return f;
}

Json EnumJson(const FieldDescriptor* f, int number) {
  const auto* v = f->enum_type()->FindValueByNumber(number);
  return v ? Json(v->name()) : Json(number);  // a value this schema does not name stays a number
}

Json SubMessageJson(const Message& sub, int depth) { return sub.ByteSizeLong() == 0 ? Json() : MessageJson(sub, depth + 1); }

Json ElementJson(const Message& m, const Reflection* r, const FieldDescriptor* f, int i, int depth) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE: return SubMessageJson(r->GetRepeatedMessage(m, f, i), depth);
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetRepeatedBool(m, f, i);
    case FieldDescriptor::CPPTYPE_ENUM: return EnumJson(f, r->GetRepeatedEnumValue(m, f, i));
    case FieldDescriptor::CPPTYPE_INT32: return r->GetRepeatedInt32(m, f, i);
    case FieldDescriptor::CPPTYPE_UINT32: return r->GetRepeatedUInt32(m, f, i);
    case FieldDescriptor::CPPTYPE_INT64: return r->GetRepeatedInt64(m, f, i);
    case FieldDescriptor::CPPTYPE_UINT64: return r->GetRepeatedUInt64(m, f, i);
    case FieldDescriptor::CPPTYPE_FLOAT: return r->GetRepeatedFloat(m, f, i);  // GE prints list floats as numbers
    case FieldDescriptor::CPPTYPE_DOUBLE: return r->GetRepeatedDouble(m, f, i);
    case FieldDescriptor::CPPTYPE_STRING: return r->GetRepeatedString(m, f, i);
  }
  return nullptr;
}

Json SingleJson(const Message& m, const Reflection* r, const FieldDescriptor* f, int depth) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE: return SubMessageJson(r->GetMessage(m, f), depth);
    case FieldDescriptor::CPPTYPE_BOOL: return r->GetBool(m, f);
    case FieldDescriptor::CPPTYPE_ENUM: return EnumJson(f, r->GetEnumValue(m, f));
    case FieldDescriptor::CPPTYPE_INT32: return r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT32: return r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64: return r->GetInt64(m, f);
    case FieldDescriptor::CPPTYPE_UINT64: return r->GetUInt64(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT: return FloatJson(r->GetFloat(m, f));
    case FieldDescriptor::CPPTYPE_DOUBLE: return r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_STRING: return r->GetString(m, f);
  }
  return nullptr;
}

// A map's entries sorted by key: protobuf's map order is not stable between runs, and ATC's own order is that
// unstable order, so a sorted list is the one a diff of two runs can rely on.
Json MapJson(const Message& m, const Reflection* r, const FieldDescriptor* f, int depth) {
  const FieldDescriptor* key = f->message_type()->map_key();
  std::vector<std::pair<std::string, int>> order;
  for (int i = 0; i < r->FieldSize(m, f); ++i) {
    const Message& e = r->GetRepeatedMessage(m, f, i);
    order.emplace_back(e.GetReflection()->GetString(e, key), i);
  }
  std::sort(order.begin(), order.end());
  Json out = Json::array();
  for (const auto& [k, i] : order) out.push_back(ElementJson(m, r, f, i, depth));
  return out;
}

Json MessageJson(const Message& m, int depth) {
  if (depth > kMaxDepth) return nullptr;
  const auto* d = m.GetDescriptor();
  const Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  for (int i = 0; i < d->field_count(); ++i)
    if (std::find(kHiddenFields.begin(), kHiddenFields.end(), d->field(i)->name()) == kHiddenFields.end()) fields.push_back(d->field(i));
  std::sort(fields.begin(), fields.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
  Json j;  // stays null when nothing is printable, as ATC's does
  for (const FieldDescriptor* f : fields) {
    if (f->is_map()) {
      if (r->FieldSize(m, f) > 0) j[f->name()] = MapJson(m, r, f, depth);
    } else if (f->is_repeated()) {
      if (r->FieldSize(m, f) == 0) continue;
      Json list = Json::array();
      for (int i = 0; i < r->FieldSize(m, f); ++i) list.push_back(ElementJson(m, r, f, i, depth));
      j[f->name()] = std::move(list);
    } else if (r->HasField(m, f)) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && r->GetMessage(m, f).ByteSizeLong() == 0) continue;
      j[f->name()] = SingleJson(m, r, f, depth);
    }
  }
  return j;
}

}  // namespace

Json GeMessageJson(const Message& m) { return MessageJson(m, 0); }

Result<Json> OmModelDefJson(const std::string& path) {
  NPU_ASSIGN_OR_RETURN(npukit::ge::ModelDef md, ReadOmModelDef(path));
  return GeMessageJson(md);
}

}  // namespace npu
