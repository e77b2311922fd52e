#include "frontend/tf/tf_convert.h"

#include <charconv>
#include <cstring>

namespace npu::tf {

using npukit::tf::AttrValue;
using npukit::tf::NodeDef;
using npukit::tf::TensorProto;

std::pair<std::string, int> ParseInputName(std::string_view s) {
  if (s.starts_with("^")) return {std::string(s.substr(1)), -1};
  size_t colon = s.rfind(':');
  if (colon == std::string_view::npos) return {std::string(s), 0};
  int k = -1;
  auto digits = s.substr(colon + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), k);
  if (ec != std::errc() || end != digits.data() + digits.size() || k < 0) return {std::string(s), 0};  // a ':' inside a name
  return {std::string(s.substr(0, colon)), k};
}

std::string TensorName(std::string_view node, int k) { return std::string(node) + ":" + std::to_string(k); }

// TF's DataType numbers (tf_graph.proto), reference types (+100) read as their base.
std::optional<DType> FromTfType(int t) {
  if (t > 100) t -= 100;
  switch (t) {
    case 1: return DType::kF32;
    case 2: return DType::kF64;
    case 3: return DType::kI32;
    case 4: return DType::kU8;
    case 5: return DType::kI16;
    case 6: return DType::kI8;
    case 9: return DType::kI64;
    case 10: return DType::kBool;
    case 14: return DType::kBF16;
    case 17: return DType::kU16;
    case 19: return DType::kF16;
    case 22: return DType::kU32;
    case 23: return DType::kU64;
    default: return std::nullopt;
  }
}

std::optional<int> Converter::Lookup(const std::string& tensor) const {
  auto [node, k] = ParseInputName(tensor);
  return Bound(TensorName(node, k));
}

int Converter::In(const NodeDef& n, int j) {
  if (j < n.input_size()) return *Lookup(n.input(j));
  SetError(Status::Error("E10041", "node", n.name(),
                         "the " + n.op() + " node has " + std::to_string(n.input_size()) + " input(s); it needs at least " + std::to_string(j + 1),
                         "The GraphDef is corrupt; freeze the graph again."));
  if (missing_ < 0) missing_ = b.Scalar("npukit/missing_input", 0.f);
  return missing_;
}

const Tensor* Converter::ConstIn(const NodeDef& n, int j) const {
  if (j >= n.input_size()) return nullptr;
  auto v = Lookup(n.input(j));
  return v && b.graph().values[*v].constant ? &*b.graph().values[*v].constant : nullptr;
}

std::optional<std::vector<int64_t>> Converter::IntsIn(const NodeDef& n, int j) const {
  const Tensor* t = ConstIn(n, j);
  if (!t || IsFloat(t->dtype()) || t->dtype() == DType::kBool || t->rank() > 2) return std::nullopt;
  return t->ToInt64Vector();
}

int Converter::Readers(const std::string& name, int k) const {
  auto it = readers_.find(TensorName(name, k));
  return it == readers_.end() ? 0 : static_cast<int>(it->second.size());
}

void Converter::Bind(const NodeDef& n, int k, int v) { BindName(TensorName(n.name(), k), v); }

const AttrValue* Converter::Attr(const NodeDef& n, std::string_view key) const {
  const AttrValue* found = nullptr;
  for (const auto& e : n.attr())
    if (e.key() == key) found = &e.value();  // the last entry wins, as in a map
  return found;
}

int64_t Converter::AttrInt(const NodeDef& n, std::string_view key, int64_t def) const {
  const AttrValue* a = Attr(n, key);
  return a && a->value_case() == AttrValue::kI ? a->i() : def;
}
float Converter::AttrFloat(const NodeDef& n, std::string_view key, float def) const {
  const AttrValue* a = Attr(n, key);
  return a && a->value_case() == AttrValue::kF ? a->f() : def;
}
bool Converter::AttrBool(const NodeDef& n, std::string_view key, bool def) const {
  const AttrValue* a = Attr(n, key);
  return a && a->value_case() == AttrValue::kB ? a->b() : def;
}
std::string Converter::AttrString(const NodeDef& n, std::string_view key, std::string def) const {
  const AttrValue* a = Attr(n, key);
  return a && a->value_case() == AttrValue::kS ? a->s() : def;
}
std::vector<int64_t> Converter::AttrInts(const NodeDef& n, std::string_view key) const {
  const AttrValue* a = Attr(n, key);
  if (!a || a->value_case() != AttrValue::kList) return {};
  return {a->list().i().begin(), a->list().i().end()};
}
std::optional<int> Converter::AttrType(const NodeDef& n, std::string_view key) const {
  const AttrValue* a = Attr(n, key);
  if (!a || a->value_case() != AttrValue::kType) return std::nullopt;
  return static_cast<int>(a->type());
}

namespace {

// Typed values (no tensor_content): the field the dtype uses; fewer values than elements repeat the last.
template <class T, class Field>
Result<Tensor> FromValues(DType dt, const Shape& shape, const Field& f, int64_t n, const std::string& where) {
  if (f.size() == 0 && n > 0) return Status::Error("E10041", "Const", where, "the tensor has " + std::to_string(n) + " elements but no values");
  if (f.size() > n) return Status::Error("E10041", "Const", where, "the tensor holds " + std::to_string(f.size()) + " values for " + std::to_string(n) + " elements");
  Tensor t = Tensor::Empty(dt, shape);
  T* d = t.mutable_data<T>();
  for (int64_t i = 0; i < n; ++i) d[i] = static_cast<T>(f.Get(static_cast<int>(std::min<int64_t>(i, f.size() - 1))));
  return t;
}

}  // namespace

Result<Tensor> Converter::TensorOf(const TensorProto& t, const std::string& where) const {
  auto dt = FromTfType(t.dtype());
  if (!dt) return Status::Error("E13010", "Const", where, "a constant of TF type " + std::to_string(t.dtype()) + " (strings, resources and complex numbers are not supported)");
  Shape shape;
  for (const auto& d : t.tensor_shape().dim()) {
    if (d.size() < 0) return Status::Error("E10041", "Const", where, "a constant with an unknown dim");
    shape.push_back(d.size());
  }
  if (std::string why = ShapeLimitProblem(shape); !why.empty()) return Status::Error("E10041", "Const", where, "shape " + ShapeToString(shape) + ": " + why);
  const int64_t n = NumElements(shape);
  const size_t bytes = static_cast<size_t>(n) * DTypeSize(*dt);
  std::span<const std::byte> content;
  std::shared_ptr<const void> owner;
  if (t.npukit_cut_content() > 0) {
    if (t.npukit_cut_content() > cuts_.size()) return Status::Error("E10041", "Const", where, "internal: a cut tensor index is out of range");
    content = cuts_[t.npukit_cut_content() - 1];
    owner = file_;
  } else if (!t.tensor_content().empty()) {
    content = std::as_bytes(std::span(t.tensor_content().data(), t.tensor_content().size()));
  }
  if (!content.empty() || (n > 0 && t.npukit_cut_content() > 0)) {
    if (content.size() != bytes)
      return Status::Error("E10041", "Const", where,
                           "tensor_content holds " + std::to_string(content.size()) + " bytes, but shape " + ShapeToString(shape) + " of " +
                               std::string(DTypeName(*dt)) + " needs " + std::to_string(bytes),
                           "The GraphDef is corrupt; freeze the graph again.");
    if (owner) return Tensor::ViewAnyAlignment(*dt, shape, owner, content.data());
    Tensor x = Tensor::Empty(*dt, shape);
    std::memcpy(x.mutable_raw(), content.data(), bytes);
    return x;
  }
  switch (*dt) {
    case DType::kF32: return FromValues<float>(*dt, shape, t.float_val(), n, where);
    case DType::kF64: return FromValues<double>(*dt, shape, t.double_val(), n, where);
    case DType::kI64: return FromValues<int64_t>(*dt, shape, t.int64_val(), n, where);
    case DType::kI32: return FromValues<int32_t>(*dt, shape, t.int_val(), n, where);
    case DType::kI16: return FromValues<int16_t>(*dt, shape, t.int_val(), n, where);
    case DType::kI8: return FromValues<int8_t>(*dt, shape, t.int_val(), n, where);
    case DType::kU8: return FromValues<uint8_t>(*dt, shape, t.int_val(), n, where);
    case DType::kU16: return FromValues<uint16_t>(*dt, shape, t.int_val(), n, where);
    case DType::kBool: return FromValues<uint8_t>(*dt, shape, t.bool_val(), n, where);
    case DType::kF16:
    case DType::kBF16: return FromValues<uint16_t>(*dt, shape, t.half_val(), n, where);
    case DType::kU32: return FromValues<uint32_t>(*dt, shape, t.uint32_val(), n, where);
    case DType::kU64: return FromValues<uint64_t>(*dt, shape, t.uint64_val(), n, where);
    default: return Status::Error("E13010", "Const", where, "a constant of type " + std::string(DTypeName(*dt)));
  }
}

}  // namespace npu::tf
