#include "ir/graph.h"

#include "ir/node_attrs.h"

#include <sstream>
#include <unordered_set>

namespace npu {

namespace {
template <class T>
const T* Get(const AttrMap& m, std::string_view k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : std::get_if<T>(&it->second);
}
}  // namespace

int64_t Node::attr_int(std::string_view k, int64_t def) const {
  const auto* v = Get<int64_t>(attrs, k);
  return v ? *v : def;
}
float Node::attr_float(std::string_view k, float def) const {
  if (const auto* v = Get<float>(attrs, k)) return *v;
  if (const auto* v = Get<int64_t>(attrs, k)) return static_cast<float>(*v);
  return def;
}
std::string Node::attr_string(std::string_view k, std::string def) const {
  const auto* v = Get<std::string>(attrs, k);
  return v ? *v : def;
}
std::vector<int64_t> Node::attr_ints(std::string_view k, std::vector<int64_t> def) const {
  const auto* v = Get<std::vector<int64_t>>(attrs, k);
  return v ? *v : def;
}
std::vector<float> Node::attr_floats(std::string_view k) const {
  const auto* v = Get<std::vector<float>>(attrs, k);
  return v ? *v : std::vector<float>{};
}
const Tensor* Node::attr_tensor(std::string_view k) const { return Get<Tensor>(attrs, k); }

bool Node::attr_list_has(std::string_view k, std::string_view item) const {
  const std::string* v = Get<std::string>(attrs, k);
  std::string_view list = v ? std::string_view(*v) : std::string_view();
  while (!list.empty()) {
    size_t comma = list.find(',');
    if (list.substr(0, comma) == item) return true;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return false;
}

void Node::attr_list_add(std::string_view k, std::string_view item) {
  if (attr_list_has(k, item)) return;
  std::string list = attr_string(k);
  attrs[std::string(k)] = list.empty() ? std::string(item) : list + "," + std::string(item);
}

Format OriginFormat(const Value& v) { return FormatFromName(LayoutOf(v)).value_or(Format::kND); }

Format DeviceFormat(const Value& v) { return v.device_format.value_or(OriginFormat(v)); }

DeviceLayout DeviceLayoutOf(const Value& v) { return {DeviceFormat(v), v.shape, DTypeSize(v.dtype), v.device_groups}; }

Shape DeviceShapeOf(const Value& v) {
  if (!v.device_format || !v.has_shape) return v.shape;
  auto s = DeviceShape(DeviceLayoutOf(v));
  return s.ok() ? s.value() : v.shape;
}

int Graph::AddValue(std::string n) {
  if (!n.empty()) {
    auto it = index_.find(n);
    if (it != index_.end()) return it->second;
  }
  int id = static_cast<int>(values.size());
  if (!n.empty()) index_.emplace(n, id);
  Value v;
  v.name = std::move(n);
  values.push_back(std::move(v));
  return id;
}

int Graph::FindValue(std::string_view n) const {
  auto it = index_.find(std::string(n));
  return it == index_.end() ? -1 : it->second;
}

void Graph::RenameValue(int v, std::string new_name) {
  index_.erase(values[v].name);
  index_[new_name] = v;
  values[v].name = std::move(new_name);
}

Status Graph::Verify() const {
  std::vector<bool> ready(values.size(), false);
  for (int i : inputs) ready[i] = true;
  for (const auto& v : values)
    if (v.constant) ready[&v - values.data()] = true;
  std::unordered_set<std::string> node_names;
  for (const auto& n : nodes) {
    if (!n.name.empty() && !node_names.insert(n.name).second)
      return Status::Error("E16005", "node", n.name, "the node name is used twice in the graph");
    for (int in : n.inputs) {
      if (in < 0) continue;
      if (in >= static_cast<int>(values.size()) || !ready[in])
        return Status::Error("E16005", "node", n.name,
                             "input '" + (in < static_cast<int>(values.size()) ? values[in].name : "?") +
                                 "' is used before it is produced (graph not topologically sorted or dangling)");
    }
    for (int out : n.outputs) {
      if (ready[out] && !values[out].name.empty())
        return Status::Error("E16005", "node", n.name, "output '" + values[out].name + "' is produced twice");
      ready[out] = true;
    }
  }
  for (int o : outputs)
    if (!ready[o]) return Status::Error("E16005", "output", values[o].name, "graph output is never produced");
  return Status::Ok();
}

void Graph::RemoveDeadNodes() {
  std::vector<bool> live(values.size(), false);
  for (int o : outputs) live[o] = true;
  std::vector<Node> kept;
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    bool used = false;
    for (int o : it->outputs) used |= live[o];
    if (!used) continue;
    for (int in : it->inputs)
      if (in >= 0) live[in] = true;
    kept.push_back(std::move(*it));
  }
  nodes.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
  for (auto& v : values) v.producer = -1;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (int o : nodes[i].outputs) values[o].producer = static_cast<int>(i);
}

std::string AttrToString(const Attr& a) {
  std::ostringstream os;
  auto list = [&os](const auto& v) {
    os << '[';
    for (size_t i = 0; i < v.size(); ++i) os << (i ? "," : "") << v[i];
    os << ']';
  };
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) os << '"' << v << '"';
        else if constexpr (std::is_same_v<T, Tensor>) os << "tensor<" << DTypeName(v.dtype()) << ShapeToString(v.shape()) << '>';
        else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, float>) os << v;
        else list(v);
      },
      a);
  return os.str();
}

std::string Graph::ToText() const {
  std::ostringstream os;
  auto val = [&](int i) {
    if (i < 0) return std::string("_");
    const Value& v = values[i];
    std::string s = "%" + v.name + ":" + std::string(DTypeName(v.dtype));
    if (v.has_shape) s += ShapeToString(v.shape);
    return s;
  };
  os << "graph " << name << " {\n";
  for (int i : inputs) os << "  input " << val(i) << "\n";
  size_t n_const = 0;
  for (const auto& v : values) n_const += v.constant.has_value();
  os << "  // " << n_const << " constants\n";
  for (const auto& n : nodes) {
    os << "  ";
    for (size_t i = 0; i < n.outputs.size(); ++i) os << (i ? ", " : "") << val(n.outputs[i]);
    os << " = " << ShownType(n) << "(";
    for (size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << (n.inputs[i] < 0 ? "_" : "%" + values[n.inputs[i]].name);
    os << ")";
    if (!n.attrs.empty()) {
      os << " {";
      bool first = true;
      for (const auto& [k, a] : n.attrs) {
        os << (first ? "" : ", ") << k << "=" << AttrToString(a);
        first = false;
      }
      os << "}";
    }
    os << "  # " << n.name << "\n";
  }
  for (int o : outputs) os << "  output " << val(o) << "\n";
  os << "}\n";
  return os.str();
}

std::vector<int64_t> FrameworkLayoutPerm(const Node& n, size_t rank) {
  std::string layout = n.attr_string(kFrameworkLayoutAttr);
  if (layout == "NHWC" && rank == 4) return {0, 2, 3, 1};
  if (layout == "NDHWC" && rank == 5) return {0, 2, 3, 4, 1};
  return {};
}

}  // namespace npu
