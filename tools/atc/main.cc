// atc: model conversion CLI. Flags are parsed as plain strings; libatc validates them all at once.
#include <CLI/CLI.hpp>
#include <iostream>

#include "atc.h"
#include "base/log.h"

int main(int argc, char** argv) {
  npu::log::InitFromEnv();
  npu::atc::AtcOptions o;
  CLI::App app{"atc: convert ONNX models to .om offline models for the simulated NPU"};
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
  app.add_option("--out_nodes", o.out_nodes, "\"node:0;node2:1\" outputs to keep");
  app.add_option("--log", o.log, "debug, info, warning, error, null");
  app.add_option("--json", o.json, "JSON output of mode 1");
  app.add_option("--om", o.om, ".om (or .onnx with --framework=5) read by modes 1 and 6");
  app.add_option("--check_report", o.check_report, "pre-check report path (default ./check_result.json)");
  auto* p = &o.precision;
  app.add_option("--precision_mode", p->precision_mode,
                 "force_fp16 (default), allow_fp32_to_fp16, allow_mix_precision[_fp16|_bf16], allow_fp32_to_bf16, must_keep_origin_dtype, force_fp32");
  app.add_option("--precision_mode_v2", p->precision_mode_v2, "fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16");
  app.add_option("--modify_mixlist", p->modify_mixlist, "JSON changing the mixed-precision black/white/gray lists");
  app.add_option("--keep_dtype", p->keep_dtype, "file: op names (or OpType::X) that keep their origin dtype");
  app.add_option("--customize_dtypes", p->customize_dtypes, "file: OpName::InputDtype:..,OutputDtype:.. lines");
  app.add_option("--op_select_implmode", p->op_select_implmode, "high_performance (default), high_precision, *_for_all");
  app.add_option("--optypelist_for_implmode", p->optypelist_for_implmode, "op types the implmode applies to");
  app.add_option("--op_precision_mode", p->op_precision_mode, "ini: [ByOpType]/[ByNodeName] op=mode");
  app.add_option("--output_type", p->output_type, "net output dtype: FP32, FP16, UINT8");
  app.add_option("--fusion_switch_file", o.fusion_switch_file, "passes to turn off (PassName:off lines or CANN's JSON)");
  app.add_option("--explain-precision,--explain_precision", o.explain_precision, "write each op's dtype, format and the rules that decided them (JSON)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  o.unknown_flags = app.remaining();
  for (int i = 0; i < argc; ++i) o.cmdline += (i ? " " : "") + std::string(argv[i]);
  return npu::atc::RunAtc(o, std::cout, std::cerr);
}
