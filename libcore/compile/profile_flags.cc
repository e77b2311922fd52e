// Shape profiles: --dynamic_batch_size, --dynamic_image_size and --dynamic_dims give the values of the -1
// dims of --input_shape, one profile per model variant. Every check CANN's ATC makes, with its codes
// (reference/atc.md §1.4); the .om then holds one graph per profile (om/om_model.h).
#include <algorithm>
#include <cerrno>
#include <set>

#include "base/text.h"
#include "compile/compile_config.h"
#include "frontend/input_shape.h"

namespace npu {
namespace {

// CANN's limit: more than one and at most 100 profiles.
constexpr size_t kMaxProfiles = 100;

// "4,8" -> {4, 8}; every value a positive integer (E10038 otherwise).
Result<std::vector<int64_t>> PositiveInts(const std::string& flag, const std::string& spec, const std::string& item) {
  std::vector<int64_t> v;
  for (const std::string& x : SplitFields(item, ',')) {
    char* end = nullptr;
    errno = 0;
    long long n = std::strtoll(x.c_str(), &end, 10);
    if (x.empty() || *end != '\0' || n <= 0)
      return Status::Error("E10038", flag, spec, "'" + x + "' in profile '" + item + "' is not a positive integer");
    if (errno == ERANGE || n > kMaxTensorElements)
      return Status::Error("E10002", flag, spec, "'" + x + "' in profile '" + item + "' exceeds the limit of " + std::to_string(kMaxTensorElements) + " elements");
    v.push_back(n);
  }
  return v;
}

Status CheckCountAndDuplicates(const std::string& flag, const std::string& spec, const std::vector<std::vector<int64_t>>& profiles,
                               const std::vector<std::string>& items) {
  if (profiles.size() <= 1 || profiles.size() > kMaxProfiles)
    return Status::Error("E10035", flag, spec, std::to_string(profiles.size()) + " profile(s) given; the count must be in (1, " + std::to_string(kMaxProfiles) + "]",
                         "Give between 2 and 100 profiles (fewer than 2: convert with a static --input_shape).");
  std::set<std::vector<int64_t>> seen;
  for (size_t k = 0; k < profiles.size(); ++k)
    if (!seen.insert(profiles[k]).second)
      return Status::Error("E10037", flag, spec, "profile '" + items[k] + "' is given twice", "List every profile once.");
  return Status::Ok();
}

// Where the -1 dims are: (input index, dim) pairs in --input_shape order.
std::vector<std::pair<size_t, size_t>> Unknowns(const std::vector<std::pair<std::string, Shape>>& inputs) {
  std::vector<std::pair<size_t, size_t>> at;
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t d = 0; d < inputs[i].second.size(); ++d)
      if (inputs[i].second[d] < 0) at.emplace_back(i, d);
  return at;
}

Result<std::vector<std::vector<int64_t>>> BatchProfiles(const CompileFlags& o, const std::vector<std::pair<std::string, Shape>>& inputs) {
  const std::string flag = "--dynamic_batch_size", spec = o.dynamic_batch_size;
  for (auto [i, d] : Unknowns(inputs))
    if (d != 0)
      return Status::Error("E10018", flag, spec, "input '" + inputs[i].first + "' has -1 at dim " + std::to_string(d) + "; only the batch (first) dim may be -1",
                           "Put -1 only at N in --input_shape, e.g. \"input:-1,3,224,224\".");
  std::vector<std::vector<int64_t>> profiles;
  std::vector<std::string> items = SplitFields(spec, ',');
  for (const std::string& item : items) {
    NPU_ASSIGN_OR_RETURN(auto v, PositiveInts(flag, spec, item));
    profiles.push_back(v);
  }
  NPU_RETURN_IF_ERROR(CheckCountAndDuplicates(flag, spec, profiles, items));
  return profiles;
}

Result<std::vector<std::vector<int64_t>>> ImageProfiles(const CompileFlags& o, const std::vector<std::pair<std::string, Shape>>& inputs) {
  const std::string flag = "--dynamic_image_size", spec = o.dynamic_image_size;
  for (const auto& [name, s] : inputs) {
    bool any = std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
    if (any && (s.size() != 4 || s[0] < 0 || s[1] < 0 || s[2] >= 0 || s[3] >= 0))
      return Status::Error("E10019", flag, spec, "input '" + name + "' is " + ShapeToString(s) + "; only H and W of an NCHW input may be -1, and both",
                           "Use e.g. --input_shape=\"input:1,3,-1,-1\".");
  }
  std::vector<std::vector<int64_t>> profiles;
  std::vector<std::string> items = SplitFields(spec, ';');
  for (const std::string& item : items) {
    if (SplitFields(item, ',').size() != 2)
      return Status::Error("E10020", flag, spec, "profile '" + item + "' is not of the form h,w", "Use \"h1,w1;h2,w2\", e.g. \"224,224;448,448\".");
    NPU_ASSIGN_OR_RETURN(auto v, PositiveInts(flag, spec, item));
    profiles.push_back(v);
  }
  NPU_RETURN_IF_ERROR(CheckCountAndDuplicates(flag, spec, profiles, items));
  return profiles;
}

Result<std::vector<std::vector<int64_t>>> DimsProfiles(const CompileFlags& o, const std::vector<std::pair<std::string, Shape>>& inputs) {
  const std::string flag = "--dynamic_dims", spec = o.dynamic_dims;
  if (o.input_format != "ND")
    return Status::Error("E10001", "--input_format", o.input_format.empty() ? "(NCHW by default)" : o.input_format,
                         "--dynamic_dims needs --input_format=ND", "Add --input_format=ND.");
  size_t unknown = Unknowns(inputs).size();
  std::vector<std::vector<int64_t>> profiles;
  std::vector<std::string> items = SplitFields(spec, ';');
  for (const std::string& item : items) {
    NPU_ASSIGN_OR_RETURN(auto v, PositiveInts(flag, spec, item));
    if (v.size() != unknown)
      return Status::Error("E10036", flag, spec, "profile '" + item + "' has " + std::to_string(v.size()) + " value(s); --input_shape has " +
                           std::to_string(unknown) + " -1 dim(s)", "Give one value per -1 of --input_shape, in its order.");
    profiles.push_back(v);
  }
  NPU_RETURN_IF_ERROR(CheckCountAndDuplicates(flag, spec, profiles, items));
  return profiles;
}

}  // namespace

Result<ShapeProfiles> ParseShapeProfiles(const CompileFlags& o) {
  std::vector<std::pair<std::string, std::string>> given;
  for (auto [flag, value] : {std::pair{"--dynamic_batch_size", &o.dynamic_batch_size}, {"--dynamic_image_size", &o.dynamic_image_size},
                             {"--dynamic_dims", &o.dynamic_dims}})
    if (!value->empty()) given.emplace_back(flag, *value);
  if (given.size() > 1)
    return Status::Error("E10009", given[1].first, given[1].second, given[0].first + " is given too; the profile flags are mutually exclusive",
                         "Keep one of --dynamic_batch_size, --dynamic_image_size and --dynamic_dims.");
  ShapeProfiles p;
  if (o.input_shape.empty()) {
    if (given.empty()) return p;
    return Status::Error("E10057", given[0].first, given[0].second, "it needs --input_shape with -1 where the profiles apply",
                         "Add --input_shape, e.g. \"input:-1,3,224,224\".");
  }
  NPU_ASSIGN_OR_RETURN(auto ranges, ParseInputShapeRanges(o.input_shape));
  bool ranged = false;  // a min~max dim: a true dynamic-shape model, which profiles cannot fill
  for (const auto& r : ranges)
    for (size_t d = 0; d < r.min.size(); ++d) ranged |= r.min[d] > 0 && r.max[d] != r.min[d];
  if (ranged && !given.empty())
    return Status::Error("E10040", given[0].first, given[0].second, "--input_shape has min~max ranges, which a profile flag cannot fill",
                         "Use either ranges (a dynamic-shape model) or -1 with a profile flag.");
  NPU_ASSIGN_OR_RETURN(p.inputs, ParseInputShapeList(o.input_shape));
  std::vector<std::pair<size_t, size_t>> unknown;  // -1 dims (ranges are not unknown: they carry their bounds)
  for (size_t i = 0; i < ranges.size(); ++i)
    for (size_t d = 0; d < ranges[i].min.size(); ++d)
      if (ranges[i].min[d] < 0) unknown.emplace_back(i, d);
  if (given.empty()) {
    if (unknown.empty()) return p;
    auto [i, d] = unknown.front();
    return Status::Error("E10011", "--input_shape", o.input_shape,
                         "input '" + p.inputs[i].first + "' has -1 at dim " + std::to_string(d) + " but no profile flag gives its values",
                         "Add --dynamic_batch_size, --dynamic_image_size or --dynamic_dims, or give every dim a positive value.");
  }
  const auto& [flag, spec] = given[0];
  if (unknown.empty())
    return Status::Error("E10031", flag, spec, "--input_shape has no -1 dim for the profiles to fill", "Mark the dims the profiles set with -1 in --input_shape.");
  if (flag == "--dynamic_batch_size") {
    p.kind = "batch";
    NPU_ASSIGN_OR_RETURN(p.values, BatchProfiles(o, p.inputs));
  } else if (flag == "--dynamic_image_size") {
    p.kind = "image_size";
    NPU_ASSIGN_OR_RETURN(p.values, ImageProfiles(o, p.inputs));
  } else {
    p.kind = "dims";
    NPU_ASSIGN_OR_RETURN(p.values, DimsProfiles(o, p.inputs));
  }
  for (size_t k = 0; k < p.values.size(); ++k)  // every profile's shapes must be tensors' (no overflow later)
    for (const auto& [name, shape] : p.ShapesAt(k))
      if (std::string why = ShapeLimitProblem(shape); !why.empty())
        return Status::Error("E10002", given[0].first, given[0].second, "profile '" + p.Describe(k) + "' makes input '" + name + "' " + ShapeToString(shape) + ": " + why);
  return p;
}


}  // namespace npu
