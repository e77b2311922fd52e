// Which shape profile of an .om msame runs: --dymBatch, --dymHW, --dymDims / --dymShape (CANN msame's
// spellings), or, without them, the shapes of the .npy inputs.
#include <filesystem>
#include <map>
#include <optional>

#include "base/text.h"
#include "dump/npy.h"
#include "msame.h"

namespace npu::msame {
namespace {

Result<std::vector<int64_t>> Ints(const std::string& flag, const std::string& spec, std::string_view list) {
  std::vector<int64_t> v;
  for (const std::string& x : SplitFields(list, ',')) {
    char* end = nullptr;
    long long n = std::strtoll(x.c_str(), &end, 10);
    if (x.empty() || *end != '\0' || n <= 0) return Status::Error("E10001", flag, spec, "'" + x + "' is not a positive integer");
    v.push_back(n);
  }
  return v;
}

Status WrongKind(const std::string& flag, const std::string& value, const ShapeProfiles& p) {
  return Status::Error("E10001", flag, value, "the model's profiles are " + p.kind + " profiles: " + p.DescribeAll(),
                       p.kind == "batch" ? "Use --dymBatch." : p.kind == "image_size" ? "Use --dymHW h,w." : "Use --dymDims \"name:d1,d2,...\".");
}

// The profile values that full input shapes imply: the dims --input_shape left at -1.
Result<std::vector<int64_t>> ValuesOf(const ShapeProfiles& p, const std::map<std::string, Shape>& shapes, const std::string& flag,
                                      const std::string& spec) {
  std::vector<int64_t> values;
  for (const auto& [name, pattern] : p.inputs) {
    auto it = shapes.find(name);
    bool dynamic = std::any_of(pattern.begin(), pattern.end(), [](int64_t d) { return d < 0; });
    if (it == shapes.end()) {
      if (!dynamic) continue;
      return Status::Error("E10001", flag, spec, "no shape for dynamic input '" + name + "' " + ShapeToString(pattern));
    }
    if (it->second.size() != pattern.size())
      return Status::Error("E10001", flag, spec, "input '" + name + "' is " + ShapeToString(pattern) + ", given " + ShapeToString(it->second));
    std::vector<int64_t> mine;
    for (size_t d = 0; d < pattern.size(); ++d)
      if (pattern[d] < 0) mine.push_back(it->second[d]);
    // A batch profile is one value for every input; an image size one h,w for every image input.
    if (p.kind == "dims" || values.empty()) values.insert(values.end(), mine.begin(), mine.end());
    else if (!mine.empty() && std::vector<int64_t>(values.begin(), values.begin() + static_cast<long>(std::min(values.size(), mine.size()))) != mine)
      return Status::Error("E10001", flag, spec, "input '" + name + "' disagrees with the other inputs on the " + p.kind + " profile");
  }
  if (p.kind == "batch" && !values.empty()) values.resize(1);
  if (p.kind == "image_size" && values.size() > 2) values.resize(2);
  return values;
}

}  // namespace

// The one profile whose input sizes match raw .bin files of these sizes, if exactly one does.
std::optional<size_t> ProfileBySize(const ShapeProfiles& p, const Graph& g, const std::vector<std::string>& files) {
  std::optional<size_t> found;
  for (size_t k = 0; k < p.values.size(); ++k) {
    auto shapes = p.ShapesAt(k);
    bool fits = true;
    for (size_t i = 0; fits && i < files.size() && i < g.inputs.size(); ++i) {
      const Value& v = g.values[g.inputs[i]];
      auto it = std::find_if(shapes.begin(), shapes.end(), [&](const auto& e) { return e.first == v.name; });
      const Shape& s = it != shapes.end() ? it->second : v.shape;
      std::error_code ec;
      fits = std::filesystem::file_size(files[i], ec) == static_cast<uintmax_t>(NumElements(s)) * DTypeSize(v.dtype) && !ec;
    }
    if (fits && found) return std::nullopt;  // ambiguous
    if (fits) found = k;
  }
  return found;
}

Result<size_t> ChooseProfile(const MsameOptions& o, const ShapeProfiles& p, const std::vector<std::string>& files, const Graph& g) {
  if (!o.dym_batch.empty()) {
    if (p.kind != "batch") return WrongKind("--dymBatch", o.dym_batch, p);
    NPU_ASSIGN_OR_RETURN(auto v, Ints("--dymBatch", o.dym_batch, o.dym_batch));
    if (v.size() != 1) return Status::Error("E10001", "--dymBatch", o.dym_batch, "give one batch size");
    return p.Find(v, "--dymBatch");
  }
  if (!o.dym_hw.empty()) {
    if (p.kind != "image_size") return WrongKind("--dymHW", o.dym_hw, p);
    NPU_ASSIGN_OR_RETURN(auto v, Ints("--dymHW", o.dym_hw, o.dym_hw));
    if (v.size() != 2) return Status::Error("E10001", "--dymHW", o.dym_hw, "give h,w");
    return p.Find(v, "--dymHW");
  }
  std::string flag = !o.dym_dims.empty() ? "--dymDims" : "--dymShape", spec = !o.dym_dims.empty() ? o.dym_dims : o.dym_shape;
  std::map<std::string, Shape> shapes;
  if (!spec.empty()) {
    for (const std::string& item : SplitFields(spec, ';')) {
      if (item.empty()) continue;
      size_t colon = item.rfind(':');
      if (colon == std::string::npos || colon == 0) return Status::Error("E10001", flag, spec, "'" + item + "' is not of the form name:d1,d2,...");
      NPU_ASSIGN_OR_RETURN(shapes[item.substr(0, colon)], Ints(flag, spec, std::string_view(item).substr(colon + 1)));
    }
  } else {  // the shapes the .npy inputs carry, or the one profile raw .bin sizes fit
    flag = "--input";
    spec = o.input;
    bool raw = std::any_of(files.begin(), files.end(), [](const std::string& f) { return !f.ends_with(".npy"); });
    if (raw) {
      if (auto k = ProfileBySize(p, g, files)) return *k;
      return Status::Error("EH0001", "--input", o.input,
                           "the model has " + p.kind + " profiles (" + p.DescribeAll() + ") and the raw input sizes fit none of them, or several",
                           "Choose one with --dymBatch, --dymHW or --dymDims, or give .npy inputs.");
    }
    for (size_t k = 0; k < files.size() && k < g.inputs.size(); ++k) {
      NPU_ASSIGN_OR_RETURN(Tensor t, ReadNpy(files[k]));
      shapes[g.values[g.inputs[k]].name] = t.shape();
    }
    if (files.empty())
      return Status::Error("EH0001", "--input", "", "the model has " + p.kind + " profiles (" + p.DescribeAll() + ")",
                           "Choose one with --dymBatch, --dymHW or --dymDims, or give .npy inputs.");
  }
  NPU_ASSIGN_OR_RETURN(auto values, ValuesOf(p, shapes, flag, spec));
  return p.Find(values, flag);
}

}  // namespace npu::msame
