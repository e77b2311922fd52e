#include "frontend/importer.h"

#include "frontend/caffe/caffe_importer.h"
#include "frontend/ge/air_importer.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/tf/tf_importer.h"

namespace npu {
namespace {

struct FrameworkEntry {
  std::string_view number;  // atc --framework
  const Importer& importer;
};

// One row per front end: the only place a framework number meets its importer.
const FrameworkEntry kFrameworks[] = {
    {"0", CaffeImporter()},
    {"1", AirImporter()},
    {"3", TensorFlowImporter()},
    {"5", OnnxImporter()},
};

}  // namespace

const Importer* FindImporter(std::string_view framework) {
  for (const FrameworkEntry& f : kFrameworks)
    if (f.number == framework) return &f.importer;
  return nullptr;
}

std::optional<std::string_view> FrameworkOfFile(std::string_view path) {
  static constexpr std::pair<std::string_view, std::string_view> kExtensions[] = {
      {".onnx", "5"}, {".pb", "3"}, {".pbtxt", "3"}, {".prototxt", "0"}, {".air", "1"}};
  for (const auto& [ext, framework] : kExtensions)
    if (path.ends_with(ext)) return framework;
  return std::nullopt;
}

std::string UnsupportedList(const std::vector<UnsupportedNode>& bad) {
  std::string list;
  for (const auto& u : bad) list += "\n    " + u.name + " (type " + u.op_type + "): " + u.reason;
  return list;
}

std::string SupportedFrameworks() {
  std::string out;
  for (const FrameworkEntry& f : kFrameworks) out += (out.empty() ? "" : ", ") + std::string(f.number) + " (" + std::string(f.importer.name()) + ")";
  return out;
}

}  // namespace npu
