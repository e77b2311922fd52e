// msame's inputs: files, or folders (one inference per file, matched across folders by sorted name, outputs
// named after the first folder's file, as CANN's msame does), or none (zeros).
#include <algorithm>
#include <filesystem>

#include "base/file_io.h"
#include "dump/npy.h"
#include "msame.h"

namespace npu::msame {
namespace fs = std::filesystem;

Result<std::vector<InputSet>> InputSets(const std::vector<std::string>& entries, const std::string& model_name) {
  size_t folders = std::count_if(entries.begin(), entries.end(), [](const std::string& e) { return fs::is_directory(e); });
  if (folders == 0) return std::vector<InputSet>{{entries, model_name}};
  if (folders != entries.size())
    return Status::Error("E10001", "--input", SplitJoin(entries), "mixes files and folders", "Give one file per model input, or one folder per model input.");
  std::vector<std::vector<std::string>> listed;
  for (const auto& dir : entries) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file()) files.push_back(e.path().string());
    if (ec) return Status::Error("E13002", "--input", dir, "cannot list the folder: " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty()) return Status::Error("E10004", "--input", dir, "the folder holds no input file: nothing to run");
    if (!listed.empty() && files.size() != listed[0].size())
      return Status::Error("E10001", "--input", dir, "holds " + std::to_string(files.size()) + " file(s), " + entries[0] + " holds " +
                                                         std::to_string(listed[0].size()), "Give every input folder the same number of files.");
    listed.push_back(std::move(files));
  }
  std::vector<InputSet> sets;
  for (size_t k = 0; k < listed[0].size(); ++k) {
    InputSet set{{}, fs::path(listed[0][k]).stem().string()};
    for (const auto& files : listed) set.files.push_back(files[k]);
    sets.push_back(std::move(set));
  }
  return sets;
}

std::string SplitJoin(const std::vector<std::string>& entries) {
  std::string s;
  for (const auto& e : entries) s += (s.empty() ? "" : ",") + e;
  return s;
}

Result<std::vector<Tensor>> ReadInputSet(const Session& s, const InputSet& set) {
  const Graph& g = s.graph();
  const ShapeProfiles& profiles = s.model().profiles;
  // A profile model's selector input is filled here (the user may give it too, as the last file).
  size_t user_inputs = g.inputs.size() - (!profiles.empty() && set.files.size() < g.inputs.size() ? 1 : 0);
  std::vector<Tensor> inputs;
  if (set.files.empty()) {  // like msame: no --input runs on all-zero data
    for (size_t k = 0; k < user_inputs; ++k) {
      const Value& v = g.values[g.inputs[k]];
      if (!v.has_shape || NumElements(v.shape) < 0)
        return Status::Error("EH0001", "--input", "", "input '" + v.name + "' has a dynamic shape; give --input files");
      inputs.push_back(Tensor::Zeros(v.dtype, DeviceShapeOf(v)));
    }
  } else {
    if (set.files.size() != user_inputs)
      return Status::Error("EH0001", "--input", SplitJoin(set.files),
                           std::to_string(set.files.size()) + " file(s) given, the model has " + std::to_string(user_inputs) + " input(s)");
    for (size_t k = 0; k < set.files.size(); ++k) {
      auto t = ReadInput(set.files[k], g.values[g.inputs[k]]);
      if (!t.ok()) {
        Status st = t.status();
        if (!profiles.empty()) st.with_context("shape profile " + profiles.Describe(s.model().profile));
        return st;
      }
      inputs.push_back(std::move(t).value());
    }
  }
  if (inputs.size() < g.inputs.size()) {
    const std::vector<int64_t>& v = profiles.values[s.model().profile];
    Tensor sel = Tensor::Empty(DType::kI64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), sel.mutable_data<int64_t>());
    inputs.push_back(std::move(sel));
  }
  return inputs;
}

}  // namespace npu::msame
