#include "frontend/input_shape.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/text.h"

namespace npu {
namespace {

Status ShapeError(std::string_view spec, std::string why) {
  return Status::Error("E10002", "--input_shape", std::string(spec), std::move(why),
                       "Use \"name1:n,c,h,w;name2:n,c\" (e.g. --input_shape=\"input:1,3,224,224\") and quote the whole value.");
}

}  // namespace

Result<std::map<std::string, Shape>> ParseInputShape(std::string_view spec) {
  NPU_ASSIGN_OR_RETURN(auto list, ParseInputShapeList(spec));
  return std::map<std::string, Shape>(list.begin(), list.end());
}

Shape ShapeOf(const InputRange& r) {
  Shape s;
  for (size_t d = 0; d < r.min.size(); ++d) s.push_back(r.min[d] == r.max[d] ? r.min[d] : -1);
  return s;
}

Result<std::vector<std::pair<std::string, Shape>>> ParseInputShapeList(std::string_view spec) {
  NPU_ASSIGN_OR_RETURN(auto ranges, ParseInputShapeRanges(spec));
  std::vector<std::pair<std::string, Shape>> out;
  for (const auto& r : ranges) out.emplace_back(r.name, ShapeOf(r));
  return out;
}

Result<std::vector<InputRange>> ParseInputShapeRanges(std::string_view spec) {
  std::vector<InputRange> out;
  auto number = [](const std::string& d, long long& v) {  // out of range is not a number here
    char* end = nullptr;
    errno = 0;
    v = std::strtoll(d.c_str(), &end, 10);
    return !d.empty() && *end == '\0' && errno != ERANGE;
  };
  for (const std::string& item : SplitFields(spec, ';')) {
    if (item.empty()) continue;
    size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0)
      return ShapeError(spec, "entry '" + item + "' is not of the form name:dims");
    InputRange r;
    r.name = item.substr(0, colon);
    std::string dims = item.substr(colon + 1);
    if (!dims.empty())
      for (const std::string& d : SplitFields(dims, ',')) {
        long long lo = 0, hi = 0;
        if (size_t tilde = d.find('~'); tilde != std::string::npos) {  // a range: a true dynamic-shape dim
          if (!number(d.substr(0, tilde), lo) || !number(d.substr(tilde + 1), hi) || lo < 1 || hi < lo)
            return Status::Error("E10048", "--input_shape", std::string(spec), "range '" + d + "' of '" + r.name + "' is not min~max with 1 <= min <= max",
                                 "Write a range as e.g. \"input:1~8,3,224,224\".");
        } else {
          if (!number(d, lo))
            return ShapeError(spec, "dim '" + d + "' of '" + r.name + "' is not an integer" + (errno == ERANGE ? " that fits in 64 bits" : ""));
          if (lo == 0 || lo < -1) return ShapeError(spec, "dim " + d + " of '" + r.name + "' must be positive (or -1 for dynamic)");
          hi = lo;
        }
        r.min.push_back(lo);
        r.max.push_back(hi);
      }
    if (std::string why = ShapeLimitProblem(r.max); !why.empty()) return ShapeError(spec, "input '" + r.name + "': " + why);
    if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.name == r.name; }))
      return ShapeError(spec, "input '" + r.name + "' is given twice");
    out.push_back(std::move(r));
  }
  if (out.empty()) return ShapeError(spec, "no input shape given");
  return out;
}


std::string InputShapeSpec(const std::vector<std::pair<std::string, Shape>>& shapes) {
  std::string spec;
  for (const auto& [name, shape] : shapes) {
    spec += (spec.empty() ? "" : ";") + name + ":";
    for (size_t d = 0; d < shape.size(); ++d) spec += (d ? "," : "") + std::to_string(shape[d]);
  }
  return spec;
}

}  // namespace npu
