#include "frontend/importer.h"

#include "frontend/onnx/onnx_importer.h"

namespace npu {
namespace {

struct FrameworkEntry {
  std::string_view number;  // atc --framework
  const Importer& importer;
};

// One row per front end: the only place a framework number meets its importer.
const FrameworkEntry kFrameworks[] = {
    {"5", OnnxImporter()},
};

}  // namespace

const Importer* FindImporter(std::string_view framework) {
  for (const FrameworkEntry& f : kFrameworks)
    if (f.number == framework) return &f.importer;
  return nullptr;
}

std::string SupportedFrameworks() {
  std::string out;
  for (const FrameworkEntry& f : kFrameworks) out += (out.empty() ? "" : ", ") + std::string(f.number) + " (" + std::string(f.importer.name()) + ")";
  return out;
}

}  // namespace npu
