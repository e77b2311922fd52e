#include "ir/shape_profiles.h"

namespace npu {

std::vector<std::pair<std::string, Shape>> ShapeProfiles::ShapesAt(size_t k) const {
  auto shapes = inputs;
  size_t next = 0;
  for (auto& [name, shape] : shapes) {
    if (kind == "image_size") next = 0;  // every dynamic image input takes the profile's h,w
    for (int64_t& d : shape)
      if (d < 0 && k < values.size()) d = kind == "batch" ? values[k][0] : next < values[k].size() ? values[k][next++] : d;
  }
  return shapes;
}

std::string ShapeProfiles::Describe(size_t k) const {
  std::string v;
  for (int64_t x : k < values.size() ? values[k] : std::vector<int64_t>{}) v += (v.empty() ? "" : ",") + std::to_string(x);
  return (kind == "batch" ? "batch " : kind == "image_size" ? "image size " : "dims ") + v;
}

std::string ShapeProfiles::DescribeAll() const {
  std::string all;
  for (size_t k = 0; k < values.size(); ++k) all += (k ? "; " : "") + Describe(k);
  return all;
}

Result<size_t> ShapeProfiles::Find(const std::vector<int64_t>& want, const std::string& flag) const {
  for (size_t k = 0; k < values.size(); ++k)
    if (values[k] == want) return k;
  std::string v;
  for (int64_t x : want) v += (v.empty() ? "" : ",") + std::to_string(x);
  return Status::Error("EH0001", flag, v, "the model has no such shape profile; its profiles are: " + DescribeAll(),
                       "Pick one of the profiles the model was converted with (atc --mode=6 lists them).");
}

}  // namespace npu
