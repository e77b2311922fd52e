#include "atc_flags.h"

#include <CLI/CLI.hpp>

namespace npu::atc {

void AddBuildFlags(CLI::App& app, AtcOptions& o) {
  PrecisionFlags* p = &o.precision;
  const char* model_tuning = "Model Tuning";
  const char* op_tuning = "Operator Tuning";
  app.add_option("--precision_mode", p->precision_mode,
                 "force_fp16 (default), allow_fp32_to_fp16, allow_mix_precision[_fp16|_bf16], allow_fp32_to_bf16, must_keep_origin_dtype, force_fp32")
      ->group(model_tuning);
  app.add_option("--precision_mode_v2", p->precision_mode_v2, "fp16, origin, cube_fp16in_fp32out, mixed_float16, mixed_bfloat16")->group(model_tuning);
  app.add_option("--modify_mixlist", p->modify_mixlist, "JSON changing the mixed-precision black/white/gray lists")->group(model_tuning);
  app.add_option("--keep_dtype", p->keep_dtype, "file: op names (or OpType::X) that keep their origin dtype")->group(model_tuning);
  app.add_option("--customize_dtypes", p->customize_dtypes, "file: OpName::InputDtype:..,OutputDtype:.. lines")->group(model_tuning);
  app.add_option("--op_select_implmode", p->op_select_implmode, "high_performance (default), high_precision, *_for_all")->group(op_tuning);
  app.add_option("--optypelist_for_implmode", p->optypelist_for_implmode, "op types the implmode applies to")->group(op_tuning);
  app.add_option("--op_precision_mode", p->op_precision_mode, "ini: [ByOpType]/[ByNodeName] op=mode")->group(op_tuning);
  app.add_option("--output_type", p->output_type, "net output dtype: FP32, FP16, UINT8, or node:index:TYPE;... per output")->group(model_tuning);
  app.add_option("--fusion_switch_file", o.fusion_switch_file, "passes to turn off (PassName:off lines or CANN's JSON)")->group(op_tuning);
  app.add_option("--buffer_optimize", o.buffer_optimize, "l2_optimize (default), l1_optimize, off_optimize (ignores the subgraph bank's decisions)")
      ->group(model_tuning);
}

}  // namespace npu::atc
