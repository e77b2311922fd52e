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
  std::string_view extensions[2];  // the model files msame's reference path and atc's help name ("" = none)
};

// One row per front end: the only place a framework number meets its importer and its files. The flags' help
// and the reference path's choice of importer are both read off this table.
const FrameworkEntry kFrameworks[] = {
    {"0", CaffeImporter(), {".prototxt", ""}},
    {"1", AirImporter(), {".air", ""}},
    {"3", TensorFlowImporter(), {".pb", ".pbtxt"}},
    {"5", OnnxImporter(), {".onnx", ""}},
};

}  // namespace

const Importer* FindImporter(std::string_view framework) {
  for (const FrameworkEntry& f : kFrameworks)
    if (f.number == framework) return &f.importer;
  return nullptr;
}

std::optional<std::string_view> FrameworkOfFile(std::string_view path) {
  for (const FrameworkEntry& f : kFrameworks)
    for (std::string_view ext : f.extensions)
      if (!ext.empty() && path.ends_with(ext)) return f.number;
  return std::nullopt;
}

std::string ModelFileKinds() {
  std::string out;
  for (const FrameworkEntry& f : kFrameworks) {
    std::string exts;
    for (std::string_view ext : f.extensions)
      if (!ext.empty()) exts += (exts.empty() ? "" : "/") + std::string(ext);
    out += (out.empty() ? "" : ", ") + std::string(f.importer.name()) + " " + exts;
  }
  return out;
}

std::string FrameworkNames() {
  std::string out;
  const size_t n = std::size(kFrameworks);
  for (size_t i = 0; i < n; ++i)
    out += std::string(i == 0 ? "" : i + 1 == n ? " and " : ", ") + std::string(kFrameworks[i].importer.name());
  return out;
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
