#include "compile/compile_config.h"

#include <CLI/CLI.hpp>
#include <cstdlib>

#include "base/file_io.h"
#include "base/text.h"
#include "frontend/aipp/aipp.h"
#include "frontend/input_shape.h"
#include "passes/fusion.h"

namespace npu {
namespace {

// "true,false" -> {1, 0}; E10005 for anything else, E10001 when the count differs from `expected`.
Result<std::vector<bool>> ParseAdjustLayout(const std::string& flag, const std::string& spec, size_t expected, const std::string& of) {
  std::vector<bool> out;
  for (const std::string& v : SplitFields(spec, ',')) {
    if (v != "true" && v != "false") return Status::Error("E10005", flag, spec, "'" + v + "' is not true or false");
    out.push_back(v == "true");
  }
  if (out.size() != expected)
    return Status::Error("E10001", flag, spec, std::to_string(out.size()) + " value(s) for " + std::to_string(expected) + " entr(ies) of " + of,
                         "Give one true/false per entry of " + of + ", in its order.");
  return out;
}

// Keeps the value of a Result, or adds its error to `errors`.
template <class T>
bool Take(Result<T> r, T& into, std::vector<Status>& errors) {
  if (!r.ok()) {
    errors.push_back(r.status());
    return false;
  }
  into = std::move(r).value();
  return true;
}

// TUNE_BANK_PATH: the banks atc reads (only that variable, as CANN's ATC); empty when unset.
std::string TuneBankFromEnv() {
  const char* bank = std::getenv("TUNE_BANK_PATH");
  return bank ? bank : "";
}

// NPUKIT_VERIFY_PASSES=1 (set for every test): Graph::Verify after every compile pass.
bool VerifyPassesFromEnv() {
  const char* v = std::getenv("NPUKIT_VERIFY_PASSES");
  return v && std::string_view(v) == "1";
}

void ParseFramework(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (f.framework.empty() && c.goal == CompileGoal::kReference) {
    c.framework = FrameworkOfFile(f.model).value_or("5");
  } else if (f.framework.empty()) {
    errors.push_back(Status::Error("E10007", "--framework", "", "--framework is required. The value must be one of " + SupportedFrameworks()));
    return;
  } else {
    c.framework = f.framework;
  }
  c.importer = FindImporter(c.framework);
  if (!c.importer)
    errors.push_back(Status::Error("E10001", "--framework", f.framework,
                                   "this build supports " + SupportedFrameworks()));
}

// --weight: Caffe keeps its weights in a .caffemodel beside the .prototxt; other frameworks have none.
void ParseWeight(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  c.import.weight = f.weight;
  if (c.framework == "0" && f.weight.empty())
    errors.push_back(Status::Error("E10004", "--weight", "", "a Caffe model needs its weights", "Give the .caffemodel with --weight."));
  else if (c.framework != "0" && !f.weight.empty())
    errors.push_back(Status::Error("E10001", "--weight", f.weight, "only Caffe models (--framework=0) take a separate weight file"));
  else if (!f.weight.empty() && !FileExists(f.weight))
    errors.push_back(Status::Error("E13001", "--weight", f.weight, "the weight file does not exist"));
}

void ParseSocAndPrecision(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (f.soc_spec.empty() && f.soc_version.empty()) {
    errors.push_back(Status::Error("E10007", "--soc_version", "",
                                   "--soc_version is required to convert. The value must be one of the supported SoCs (e.g. Ascend310P3) or --soc_spec a platform .ini"));
    return;
  }
  if (!Take(TargetSoc(f), c.soc, errors)) return;
  if (!f.soc_spec.empty()) Take(ReadFileToString(f.soc_spec), c.soc_spec_text, errors);
  c.precision = LoadPrecisionConfig(f.precision, *c.soc, errors);
}

void ParseShapes(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (f.input_shape.empty()) {
    Take(ParseShapeProfiles(f), c.profiles, errors);  // a profile flag without --input_shape
    return;
  }
  std::vector<InputRange> ranges;  // parsed once: the import's shapes (a ranged dim unknown) and the ranges
  if (!Take(ParseInputShapeRanges(f.input_shape), ranges, errors)) return;
  for (auto& r : ranges) {
    c.import.input_shapes[r.name] = ShapeOf(r);
    if (r.min != r.max) c.input_ranges.push_back(std::move(r));
  }
  if (c.goal != CompileGoal::kReference) Take(ParseShapeProfiles(f), c.profiles, errors);
}

void ParseInputOptions(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (!f.input_format.empty() && c.importer) {
    auto formats = c.importer->input_formats();
    if (std::find(formats.begin(), formats.end(), f.input_format) == formats.end()) {
      std::string list;
      for (auto fmt : formats) list += (list.empty() ? "" : ", ") + std::string(fmt);
      errors.push_back(Status::Error("E10001", "--input_format", f.input_format,
                                     "for " + std::string(c.importer->name()) + " models the input format must be one of " + list));
    } else {
      c.input_format = f.input_format;
    }
  }
  for (const std::string& name : SplitFields(f.input_fp16_nodes, ';'))
    if (!name.empty()) c.fp16_inputs.push_back(name);
  c.fp16_inputs_nc1hwc0.assign(c.fp16_inputs.size(), false);
  if (!f.is_input_adjust_hw_layout.empty()) {
    if (f.input_fp16_nodes.empty())
      errors.push_back(Status::Error("E10057", "--is_input_adjust_hw_layout", f.is_input_adjust_hw_layout, "it needs --input_fp16_nodes"));
    else
      Take(ParseAdjustLayout("--is_input_adjust_hw_layout", f.is_input_adjust_hw_layout, c.fp16_inputs.size(), "--input_fp16_nodes"),
           c.fp16_inputs_nc1hwc0, errors);
  }
  if (!f.insert_op_conf.empty()) {
    if (!f.dynamic_dims.empty())
      errors.push_back(Status::Error("E10047", "--insert_op_conf", f.insert_op_conf, "--insert_op_conf and --dynamic_dims are mutually exclusive"));
    else
      Take(LoadAippConfig(f.insert_op_conf), c.aipp, errors);
    if (!c.fp16_inputs.empty())  // AIPP writes its own input, so it cannot feed an fp16 one
      errors.push_back(Status::Error("E10034", "--input_fp16_nodes", f.input_fp16_nodes, "the inputs are fed by AIPP (--insert_op_conf), which writes them itself"));
  }
}

void ParseOutputOptions(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (!f.out_nodes.empty()) Take(ParseOutNodes(f.out_nodes), c.import.out_nodes, errors);
  if (f.is_output_adjust_hw_layout.empty()) return;
  if (f.out_nodes.empty()) {
    errors.push_back(Status::Error("E10057", "--is_output_adjust_hw_layout", f.is_output_adjust_hw_layout, "it needs --out_nodes"));
    return;
  }
  if (!Take(ParseAdjustLayout("--is_output_adjust_hw_layout", f.is_output_adjust_hw_layout, c.import.out_nodes.size(), "--out_nodes"),
            c.nc1hwc0_outputs, errors))
    return;
  for (size_t k = 0; k < c.import.out_nodes.size(); ++k)  // those outputs leave as fp16 NC1HWC0
    if (c.nc1hwc0_outputs[k]) c.precision.output_type_by_node[{c.import.out_nodes[k].first, c.import.out_nodes[k].second}] = DType::kF16;
}

void ParseTuningOptions(const CompileFlags& f, CompileConfig& c, std::vector<Status>& errors) {
  if (!f.fusion_switch_file.empty()) Take(LoadFusionSwitchFile(f.fusion_switch_file, c.notes), c.fusion_off, errors);
  if (f.buffer_optimize != "l2_optimize" && f.buffer_optimize != "l1_optimize" && f.buffer_optimize != "off_optimize")
    errors.push_back(Status::Error("E10001", "--buffer_optimize", f.buffer_optimize, "the value must be l2_optimize, l1_optimize or off_optimize"));
  c.subgraph_bank = f.buffer_optimize != "off_optimize";  // CANN applies subgraph decisions only with buffer optimization on
  if (f.qdq_fallback != "error" && f.qdq_fallback != "float")
    errors.push_back(Status::Error("E10001", "--qdq_fallback", f.qdq_fallback, "the value must be error or float"));
  c.qdq.keep_float = f.qdq_fallback == "float";
  if (f.enable_single_stream != "true" && f.enable_single_stream != "false")
    errors.push_back(Status::Error("E10001", "--enable_single_stream", f.enable_single_stream, "the value must be true or false"));
  c.single_stream = f.enable_single_stream == "true";
  if (f.enable_small_channel != "0" && f.enable_small_channel != "1")
    errors.push_back(Status::Error("E10001", "--enable_small_channel", f.enable_small_channel, "the value must be 0 or 1"));
  c.small_channel = f.enable_small_channel == "1";
  c.tune_bank_path = TuneBankFromEnv();
}

}  // namespace

Result<std::shared_ptr<const SocSpec>> TargetSoc(const CompileFlags& f) {
  if (f.soc_spec.empty()) {
    const SocSpec* soc = FindSoc(f.soc_version);
    if (!soc) return Status::Error("E10001", "--soc_version", f.soc_version, "supported SoCs are " + SocNames());
    return std::shared_ptr<const SocSpec>(soc, [](const SocSpec*) {});  // built-in specs live for the program
  }
  NPU_ASSIGN_OR_RETURN(SocSpec soc, LoadSocSpecFile(f.soc_spec));
  if (!f.soc_version.empty() && f.soc_version != soc.name)
    return Status::Error("E10001", "--soc_version", f.soc_version, "--soc_spec " + f.soc_spec + " describes " + soc.name,
                         "Drop --soc_version or make it match the file's SoC_version.");
  return std::shared_ptr<const SocSpec>(std::make_shared<SocSpec>(std::move(soc)));
}

Result<std::vector<std::pair<std::string, int>>> ParseOutNodes(std::string_view spec) {
  std::vector<std::pair<std::string, int>> out;
  for (const std::string& item : SplitFields(spec, ';')) {
    if (item.empty()) continue;
    auto colon = item.rfind(':');
    std::string name = colon == std::string::npos ? item : item.substr(0, colon);
    int idx = 0;
    if (colon != std::string::npos) {
      char* end = nullptr;
      long v = std::strtol(item.c_str() + colon + 1, &end, 10);
      if (*end != '\0' || colon + 1 == item.size() || v < 0 || v > INT32_MAX)
        return Status::Error("E10001", "--out_nodes", std::string(spec), "entry '" + item + "' is not of the form node:index");
      idx = static_cast<int>(v);
    }
    out.emplace_back(name, idx);
  }
  return out;
}

CompileConfig ParseCompileConfig(const CompileFlags& f, CompileGoal goal, std::vector<Status>& errors) {
  CompileConfig c;
  c.goal = goal;
  c.model = f.model;
  c.cmdline = f.cmdline;
  c.verify_passes = VerifyPassesFromEnv();
  ParseFramework(f, c, errors);
  if (f.model.empty()) errors.push_back(Status::Error("E10004", "--model", "", "Value for --model is empty"));
  else if (!FileExists(f.model)) errors.push_back(Status::Error("E13001", "--model", f.model, "the model file does not exist"));
  ParseWeight(f, c, errors);
  if (goal == CompileGoal::kReference) {
    ParseShapes(f, c, errors);
    return c;
  }
  ParseSocAndPrecision(f, c, errors);
  ParseTuningOptions(f, c, errors);
  ParseShapes(f, c, errors);
  ParseInputOptions(f, c, errors);
  ParseOutputOptions(f, c, errors);
  for (const std::string& name : SplitFields(f.dump_after, ','))
    if (!name.empty()) c.dump_after.insert(name);
  return c;
}

Result<CompileConfig> SingleOpConfig(const CompileFlags& f) {
  CompileConfig c;
  c.framework = kSingleOpFramework;
  c.cmdline = f.cmdline;
  NPU_ASSIGN_OR_RETURN(c.soc, TargetSoc(f));
  c.tune_bank_path = TuneBankFromEnv();
  c.verify_passes = VerifyPassesFromEnv();
  return c;
}

Result<CompileConfig> MakeCompileConfig(const CompileFlags& flags, CompileGoal goal) {
  std::vector<Status> errors;
  CompileConfig c = ParseCompileConfig(flags, goal, errors);
  if (!errors.empty()) return errors.front();
  return c;
}

void AddCompileTuningFlags(CLI::App& app, CompileFlags& o) {
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
  app.add_option("--qdq_fallback", o.qdq_fallback, "error (default) or float: a QDQ layer that cannot be quantized is an error, or stays float with a warning")
      ->group(model_tuning);
  app.add_option("--enable_single_stream", o.enable_single_stream,
                 "false (default): independent branches run on parallel streams; true: every task on one stream")
      ->group(model_tuning);
  app.add_option("--enable_small_channel", o.enable_small_channel,
                 "0 (default) or 1: a conv of <= 4 input channels after static AIPP reads NC1HWC0_C04 (FRACTAL_Z_C04 weights)")
      ->group(model_tuning);
  app.add_option("--buffer_optimize", o.buffer_optimize, "l2_optimize (default), l1_optimize, off_optimize (ignores the subgraph bank's decisions)")
      ->group(model_tuning);
  app.add_option("--dump_after", o.dump_after, "PassName[,PassName] or all: write the graph after those compile passes (ge_graph_<n>_<pass>.txt in $DUMP_GRAPH_PATH or .)")
      ->group("Debug");
}

}  // namespace npu
