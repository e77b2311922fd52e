// atc: model conversion CLI. Flags are parsed as plain strings; libatc validates them all at once.
#include <CLI/CLI.hpp>
#include <iostream>

#include "atc.h"
#include "base/cli.h"
#include "base/log.h"
#include "frontend/importer.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::atc::AtcOptions o;
  // The frameworks and their files are read off the importer table, so help cannot fall behind the parser.
  CLI::App app{"atc: convert " + npu::FrameworkNames() + " models to .om offline models for the simulated NPU", "atc"};
  app.allow_extras();
  app.set_version_flag("--version", npu::atc::kVersion);
  // Grouped as CANN's atc --help groups them.
  auto general = [&](auto&&... a) { return app.add_option(a...)->group("General"); };
  auto input = [&](auto&&... a) { return app.add_option(a...)->group("Input"); };
  auto output = [&](auto&&... a) { return app.add_option(a...)->group("Output"); };
  auto target = [&](auto&&... a) { return app.add_option(a...)->group("Target"); };
  auto feature = [&](auto&&... a) { return app.add_option(a...)->group("Feature"); };
  auto debug = [&](auto&&... a) { return app.add_option(a...)->group("Debug"); };
  general("--mode", o.mode, "0 convert (default), 1 .om/.onnx to JSON, 3 pre-check, 6 display .om info, diff A.om B.om, verify");
  general("--om", o.om, ".om (or .onnx with --framework=5) read by modes 1, 6, diff and verify");
  general("--json", o.json, "JSON output of mode 1");
  general("--check_report", o.check_report, "pre-check report path (default $ASCEND_WORK_PATH/check_result.json, else ./check_result.json); also written when conversion meets unsupported ops");
  input("--model", o.model, "source model: " + npu::ModelFileKinds());
  input("--weight", o.weight, "Caffe: the .caffemodel holding the weights of --model");
  input("--framework", o.framework, npu::SupportedFrameworks());
  input("--input_shape", o.input_shape, "\"name:n,c,h,w;name2:...\" (-1 for a profile's dim, min~max for a range)");
  input("--input_format", o.input_format, "ONNX and Caffe: NCHW, ND, NCDHW; TensorFlow: NHWC (default), NCHW, NDHWC, NCDHW, ND");
  input("--dynamic_batch_size", o.dynamic_batch_size, "\"1,2,4,8\": batch profiles for the -1 N of --input_shape");
  input("--dynamic_image_size", o.dynamic_image_size, "\"h1,w1;h2,w2\": image-size profiles for the -1 H,W of --input_shape");
  input("--dynamic_dims", o.dynamic_dims, "\"d1,d2;d3,d4\": values of the -1 dims of --input_shape per profile (--input_format=ND)");
  input("--input_fp16_nodes", o.input_fp16_nodes, "\"in1;in2\": inputs that take fp16 data");
  input("--is_input_adjust_hw_layout", o.is_input_adjust_hw_layout, "\"true,false\": per --input_fp16_nodes input, data in NC1HWC0");
  input("--singleop", o.singleop, "single-op JSON: one .om per op description, into the --output folder");
  output("--output", o.output, "output path without suffix; .om is appended");
  output("--out_nodes", o.out_nodes, "\"node:0;node2:1\" outputs to keep");
  output("--is_output_adjust_hw_layout", o.is_output_adjust_hw_layout, "\"true,false\": per --out_nodes output, fp16 in NC1HWC0");
  output("--external_weight", o.external_weight, "0 weights in the .om (default), 1 one file per weight in weight/, 2 one <output>_weight_combined file");
  output("--save_original_model", o.save_original_model, "true: also write <output>_original.om, the model before fusion, precision and formats");
  target("--soc_version,--soc-version", o.soc_version, "target SoC, e.g. Ascend310P3, Ascend910B1");
  target("--soc_spec", o.soc_spec, "platform .ini of your own chip (CANN layout; see libcore/soc/specs/README.md)");
  feature("--insert_op_conf", o.insert_op_conf, "AIPP config (aipp_op { ... } prototxt): the input becomes a uint8 image");
  npu::AddCompileTuningFlags(app, o);  // precision, fusion, --dump_after: "Model Tuning", "Operator Tuning", "Debug"
  debug("--log", o.log, "debug, info, warning, error, null");
  debug("--display_model_info", o.display_model_info, "1: print the model summary (--mode=6) after converting");
  debug("--explain-precision,--explain_precision", o.explain_precision, "write each op's dtype, format and the rules that decided them (JSON)");
  const std::vector<std::string> args = npu::cli::ArgsInOrder(argc, argv);
  try {
    app.parse(npu::cli::Args(argc, argv));
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "atc", std::cout, args);
  }
  o.unknown_flags = app.remaining();
  o.flag_errors = npu::cli::LeftoverErrors(app, o.unknown_flags, args, "atc", "E10001");
  for (int i = 0; i < argc; ++i) o.cmdline += (i ? " " : "") + std::string(argv[i]);
  return npu::cli::RunGuarded("atc", std::cout, [&] { return npu::atc::RunAtc(o, std::cout); });
}
