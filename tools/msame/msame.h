// libmsame: run a model (.om on the simulated SoC, or .onnx on the fp32 reference path) on input files.
#pragma once
#include <iosfwd>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/version.h"
#include "frontend/importer.h"
#include "ir/tensor.h"
#include "runtime/runtime.h"

namespace npu::msame {

struct MsameOptions {
  std::string model, weight, input, output, outfmt = "BIN", loop = "1", device = "0", log, acl_json_path;
  std::string soc_spec;           // simulate on this platform .ini instead of the .om's SoC
  std::string sim_mode = "full";  // full: compute and time; timing: advance the simulated clock only
  std::string dym_batch, dym_hw, dym_dims, dym_shape;  // which shape profile of the .om to run
  std::string input_shape;  // the .onnx reference path: "name:dims;..." as atc takes it
  std::string shard;        // K/N, auto or auto/N: run only this shard of an --input DIR batch (base/shard.h)
  std::vector<std::string> unknown_flags;
  std::vector<Status> flag_errors;  // what unknown_flags mean: cli::LeftoverErrors
};

constexpr const char* kVersion = NPUKIT_TOOL_VERSION("msame");

// The .om reader names the model file by atc's flag, --om; msame's is --model.
inline Status WithModelFlag(Status st) { return st.param() == "--om" ? st.with_param("--model") : st; }
// Loads an .om, or imports an .onnx (with `input_shape` when given) and folds it (the golden reference path).
Result<Session> LoadModel(const std::string& path, const std::string& input_shape = {}, const std::string& weight = {});
// A framework model (.onnx, .pb, .pbtxt, .prototxt) that msame runs on the fp32 reference path.
inline bool IsReferenceModel(const std::string& path) { return FrameworkOfFile(path).has_value(); }

// One inference's input files and the name its outputs take (<name>_output_<i>).
struct InputSet {
  std::vector<std::string> files;
  std::string name;
};
// --input as given: files (one set, named after the model), or folders (one set per file, matched by sorted
// name across the folders and named after the first folder's file), or nothing (one set of zeros).
Result<std::vector<InputSet>> InputSets(const std::vector<std::string>& entries, const std::string& model_name);
// The tensors of one set for session `s` (zeros when it has no files; the profile selector filled in).
Result<std::vector<Tensor>> ReadInputSet(const Session& s, const InputSet& set);
std::string SplitJoin(const std::vector<std::string>& entries);  // "a,b"
// Reads one input file: .npy as is, anything else as raw bytes in the model input's dtype and shape.
Result<Tensor> ReadInput(const std::string& path, const Value& model_input);
// Writes output i as DIR/<model>_output_<i>.<bin|npy|txt>; returns the path written.
Result<std::string> WriteOutput(const std::string& dir, const std::string& model_name, size_t index, const Tensor& t,
                                const std::string& fmt);
std::vector<Status> ValidateOptions(const MsameOptions& o);
// The shape profile to run (profile.cc): from --dymBatch/--dymHW/--dymDims/--dymShape, else from the .npy
// inputs' shapes or the one profile raw .bin sizes fit; an error names every profile when none fits.
// `g` is the model's profile-0 graph (input names and dtypes).
Result<size_t> ChooseProfile(const MsameOptions& o, const ShapeProfiles& p, const std::vector<std::string>& files, const Graph& g);
int RunMsame(const MsameOptions& o, std::ostream& out);

}  // namespace npu::msame
