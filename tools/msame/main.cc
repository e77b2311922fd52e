// msame: run an .om (or .onnx reference) model on input files.
#include <CLI/CLI.hpp>
#include <iostream>

#include "base/cli.h"
#include "base/log.h"
#include "frontend/importer.h"
#include "msame.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::msame::MsameOptions o;
  CLI::App app{"msame: run an .om on the simulated NPU, or a framework model on the fp32 reference path", "msame"};
  app.allow_extras();
  app.set_version_flag("--version", npu::msame::kVersion);
  app.add_option("--model", o.model, "model file: .om, or on the fp32 reference path " + npu::ModelFileKinds());
  app.add_option("--weight", o.weight, "the .caffemodel of a Caffe .prototxt --model");
  app.add_option("--input", o.input, "comma-separated input files (.npy or raw .bin), or folders (one inference per file); none = zeros");
  app.add_option("--input_shape", o.input_shape, "the .onnx reference path: \"name:n,c,h,w;...\" as atc takes it");
  app.add_option("--output", o.output, "directory for the outputs");
  app.add_option("--outfmt", o.outfmt, "BIN (default), NPY or TXT");
  app.add_option("--loop", o.loop, "number of inferences (default 1)");
  app.add_option("--device", o.device, "device id (0)");
  app.add_option("--acl_json_path", o.acl_json_path, "acl.json with a \"dump\" section (op dumps, golden data, overflow)");
  app.add_option("--log", o.log, "debug, info, warning, error, null");
  app.add_option("--soc_spec", o.soc_spec, "simulate on this platform .ini (your own chip) instead of the .om's SoC");
  app.add_option("--dymBatch", o.dym_batch, "batch size: the --dynamic_batch_size profile to run");
  app.add_option("--dymHW", o.dym_hw, "h,w: the --dynamic_image_size profile to run");
  app.add_option("--dymDims", o.dym_dims, "\"name:d1,d2,...;name2:...\": the --dynamic_dims profile to run");
  app.add_option("--dymShape", o.dym_shape, "\"name:d1,d2,...\": input shapes that select the profile (as --dymDims)");
  app.add_option("--shard", o.shard, "K/N, auto or auto/N (a Slurm array task, a Kubernetes Indexed Job): run only shard K of N of an --input DIR batch");
  app.add_option("--sim_mode", o.sim_mode, "full (compute and time, default) or timing (simulated clock only, no outputs)");
  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);
  try {
    app.parse(npu::cli::Args(argc, argv));
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "msame", std::cout, args);
  }
  o.unknown_flags = app.remaining();
  o.flag_errors = npu::cli::LeftoverErrors(app, o.unknown_flags, args, "msame", "E10001");
  return npu::cli::RunGuarded("msame", std::cout, [&] { return npu::msame::RunMsame(o, std::cout); });
}
