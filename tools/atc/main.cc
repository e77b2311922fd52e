// atc: model conversion CLI. Flags are parsed as plain strings; libatc validates them all at once.
#include <CLI/CLI.hpp>
#include <iostream>

#include "atc.h"
#include "atc_flags.h"
#include "base/cli.h"
#include "base/log.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::atc::AtcOptions o;
  CLI::App app{"atc: convert ONNX models to .om offline models for the simulated NPU", "atc"};
  app.allow_extras();
  app.set_version_flag("--version", npu::atc::kVersion);
  app.add_option("--mode", o.mode, "0 convert (default), 1 .om/.onnx to JSON, 3 pre-check, 6 display .om info");
  app.add_option("--model", o.model, "source model (.onnx)");
  app.add_option("--framework", o.framework, "5 = ONNX");
  app.add_option("--output", o.output, "output path without suffix; .om is appended");
  app.add_option("--soc_version,--soc-version", o.soc_version, "target SoC, e.g. Ascend310P3, Ascend910B1");
  app.add_option("--soc_spec", o.soc_spec, "platform .ini of your own chip (CANN layout; see libcore/soc/specs/README.md)");
  app.add_option("--input_shape", o.input_shape, "\"name:n,c,h,w;name2:...\"");
  app.add_option("--input_format", o.input_format, "NCHW, ND or NCDHW");
  app.add_option("--external_weight", o.external_weight, "0 weights in the .om (default), 1 one file per weight in weight/, 2 one <output>_weight_combined file");
  app.add_option("--input_fp16_nodes", o.input_fp16_nodes, "\"in1;in2\": inputs that take fp16 data");
  app.add_option("--is_input_adjust_hw_layout", o.is_input_adjust_hw_layout, "\"true,false\": per --input_fp16_nodes input, data in NC1HWC0");
  app.add_option("--is_output_adjust_hw_layout", o.is_output_adjust_hw_layout, "\"true,false\": per --out_nodes output, fp16 in NC1HWC0");
  app.add_option("--display_model_info", o.display_model_info, "1: print the model summary (--mode=6) after converting");
  app.add_option("--save_original_model", o.save_original_model, "true: also write <output>_original.om, the model before fusion, precision and formats");
  app.add_option("--singleop", o.singleop, "single-op JSON: one .om per op description, into the --output folder");
  app.add_option("--insert_op_conf", o.insert_op_conf, "AIPP config (aipp_op { ... } prototxt): the input becomes a uint8 image");
  app.add_option("--dynamic_batch_size", o.dynamic_batch_size, "\"1,2,4,8\": batch profiles for the -1 N of --input_shape");
  app.add_option("--dynamic_image_size", o.dynamic_image_size, "\"h1,w1;h2,w2\": image-size profiles for the -1 H,W of --input_shape");
  app.add_option("--dynamic_dims", o.dynamic_dims, "\"d1,d2;d3,d4\": values of the -1 dims of --input_shape per profile (--input_format=ND)");
  app.add_option("--out_nodes", o.out_nodes, "\"node:0;node2:1\" outputs to keep");
  app.add_option("--log", o.log, "debug, info, warning, error, null");
  app.add_option("--json", o.json, "JSON output of mode 1");
  app.add_option("--om", o.om, ".om (or .onnx with --framework=5) read by modes 1 and 6");
  app.add_option("--check_report", o.check_report, "pre-check report path (default $ASCEND_WORK_PATH/check_result.json, else ./check_result.json); also written when conversion meets unsupported ops");
  npu::atc::AddBuildFlags(app, o);
  app.add_option("--explain-precision,--explain_precision", o.explain_precision, "write each op's dtype, format and the rules that decided them (JSON)");
  try {
    app.parse(npu::cli::Args(argc, argv));
  } catch (const CLI::ParseError& e) {
    return npu::cli::ParseFailed(app, e, "atc", std::cout);
  }
  o.unknown_flags = app.remaining();
  for (int i = 0; i < argc; ++i) o.cmdline += (i ? " " : "") + std::string(argv[i]);
  return npu::atc::RunAtc(o, std::cout, std::cerr);
}
