#include "frontend/ge/framework_op.h"

#include <google/protobuf/stubs/logging.h>

#include <climits>

#include "frontend/tf/tf_convert.h"
#include "tf_graph.pb.h"

namespace npu {
namespace {

constexpr const char* kOriginalType = "original_type";
constexpr const char* kNodeDef = "node_def";

// A TF attribute as npukit's IR holds it; nullopt for shapes, tensors and functions, which no mapped op reads.
std::optional<Attr> TfAttr(const npukit::tf::AttrValue& a) {
  using V = npukit::tf::AttrValue;
  switch (a.value_case()) {
    case V::kI: return Attr(a.i());
    case V::kF: return Attr(a.f());
    case V::kB: return Attr(int64_t{a.b()});
    case V::kS: return Attr(a.s());
    case V::kType: {
      auto dt = tf::FromTfType(a.type());
      return dt ? std::optional<Attr>(Attr(static_cast<int64_t>(*dt))) : std::nullopt;
    }
    case V::kList:
      if (!a.list().s().empty()) return Attr(std::vector<std::string>(a.list().s().begin(), a.list().s().end()));
      if (!a.list().f().empty()) return Attr(std::vector<float>(a.list().f().begin(), a.list().f().end()));
      return Attr(std::vector<int64_t>(a.list().i().begin(), a.list().i().end()));
    default: return std::nullopt;
  }
}

}  // namespace

std::string UnwrapFrameworkOp(const npukit::ge::OpDef& op, Node& n) {
  auto type = op.attr().find(kOriginalType);
  auto def = op.attr().find(kNodeDef);
  npukit::tf::NodeDef node_def;
  if (def != op.attr().end()) {
    const std::string& bytes = def->second.has_bt() ? def->second.bt() : def->second.s();
    google::protobuf::LogSilencer quiet;
    if (bytes.size() > INT_MAX || !node_def.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      return "its node_def is not a TensorFlow NodeDef";
  }
  const std::string original = type != op.attr().end() && !type->second.s().empty() ? type->second.s() : node_def.op();
  if (original.empty()) return "it names no original TensorFlow type (original_type or node_def)";
  n.op_type = original;
  for (const auto& e : node_def.attr())
    if (auto a = TfAttr(e.value())) n.attrs[e.key()] = std::move(*a);
  return {};
}

}  // namespace npu
