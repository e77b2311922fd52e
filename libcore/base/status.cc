#include "base/status.h"

#include <array>

namespace npu {
namespace {

// The error catalogue. Codes follow the CANN numbering (E1xxxx = graph engine/ATC, EH = ACL runtime);
// titles are ours.
constexpr std::array kCatalogue = {
    ErrorInfo{"E10001", "invalid parameter value", "Check the value against the parameter's description in --help."},
    ErrorInfo{"E10002", "invalid --input_shape", "Use \"name1:n,c,h,w;name2:n,c\" with positive integers, quoted as a whole."},
    ErrorInfo{"E10003", "invalid .om file", "Regenerate the .om with atc; it may be truncated, corrupt or not an .om at all."},
    ErrorInfo{"E10004", "empty parameter", "Give the parameter a value."},
    ErrorInfo{"E10005", "value must be true or false", "Give true or false."},
    ErrorInfo{"E10006", "value must be 1 or 0", "Give 1 or 0."},
    ErrorInfo{"E10007", "required parameter missing", "Add the parameter to the command line."},
    ErrorInfo{"E10009", "dynamic shape flags are mutually exclusive", "Keep one of --dynamic_batch_size, --dynamic_image_size and --dynamic_dims."},
    ErrorInfo{"E10010", "invalid log level", "Use one of debug, info, warning, error, null."},
    ErrorInfo{"E10011", "-1 in --input_shape without a profile", "Give the -1 dims their values with a profile flag, or make them positive."},
    ErrorInfo{"E10018", "--dynamic_batch_size needs -1 at N only", "Put -1 only at the batch dim of --input_shape."},
    ErrorInfo{"E10019", "--dynamic_image_size needs -1 at H and W only", "Put -1 at H and W of an NCHW input."},
    ErrorInfo{"E10020", "invalid --dynamic_image_size", "Use \"h1,w1;h2,w2\" with positive integers."},
    ErrorInfo{"E10023", "single-op file not found", "Check the --singleop path."},
    ErrorInfo{"E10024", "invalid single-op JSON", "Give a JSON list of op descriptions."},
    ErrorInfo{"E10025", "unsupported single op", "Use an Ascend IR op type this build has a kernel for."},
    ErrorInfo{"E10026", "invalid single-op tensor description", "Give each input/output desc a format, a shape of positive dims and a dtype."},
    ErrorInfo{"E10027", "invalid single-op attribute", "Give each attr a name, a type (int, bool, float, str, list_int, list_float) and a value."},
    ErrorInfo{"E10031", "profile flag without -1 in --input_shape", "Mark the dims the profiles set with -1 in --input_shape."},
    ErrorInfo{"E10034", "an AIPP input cannot be fp16", "Drop the input from --input_fp16_nodes: AIPP writes it."},
    ErrorInfo{"E10035", "invalid number of shape profiles", "Give more than 1 and at most 100 profiles."},
    ErrorInfo{"E10036", "profile does not fit --input_shape", "Give one value per -1 of --input_shape in every profile."},
    ErrorInfo{"E10037", "duplicate shape profile", "List every profile once."},
    ErrorInfo{"E10038", "invalid shape profile value", "Use positive integers."},
    ErrorInfo{"E10057", "parameters must be used together", "Add the parameter the message names."},
    ErrorInfo{"E10016", "name not found in the model", "Use a name that exists in the model (listed in the message); separate entries with ';' and quote the value."},
    ErrorInfo{"E10032", "invalid JSON file", "Fix the JSON syntax at the reported position."},
    ErrorInfo{"E10047", "mutually exclusive parameters", "Keep one of the two parameters."},
    ErrorInfo{"E10410", "file not found", "Check the file's path; the parameter needs an existing, readable file."},
    ErrorInfo{"E10040", "ranges cannot take shape profiles", "Use min~max ranges or -1 with a profile flag, not both."},
    ErrorInfo{"E10048", "invalid --input_shape range", "Write ranges as min~max with 1 <= min <= max."},
    ErrorInfo{"E10041", "failed to load the model", "Check that the file exists, is readable, is a valid model and matches --framework."},
    ErrorInfo{"E10052", "invalid AIPP config", "Fix the aipp_op field the message names."},
    ErrorInfo{"E10055", "not supported", "Use a supported value or feature."},
    ErrorInfo{"E13001", "file not found", "Check the path."},
    ErrorInfo{"E13002", "file cannot be read", "Check the file's permissions and that it is a regular file."},
    ErrorInfo{"E13004", "file cannot be written", "Check that the directory exists, is writable and the disk is not full."},
    ErrorInfo{"EC0002", "no dump data found", "Check the dump path; run msame with --acl_json_path first, or point -m/-g at the step folder."},
    ErrorInfo{"EC0011", "invalid dump data", "The dump file is truncated or its header disagrees with its payload; dump the op again."},
    ErrorInfo{"EC0012", "invalid fusion rule JSON", "Regenerate it with atc --mode=1 --om=model.om --json=model.json."},
    ErrorInfo{"EC0013", "invalid dump configuration", "Fix the acl.json \"dump\" section (see msame --help and the message)."},
    ErrorInfo{"EC0014", "invalid HDF5 dump", "Check that the file is an HDF5 dump laid out as /op/seqid/input|output/name."},
    ErrorInfo{"EC0015", "invalid comparison input", "Compare tensors of the same element count; check the paths given to -m and -g."},
    ErrorInfo{"ET0001", "invalid transplt input", "Give an existing Python file or folder with -i."},
    ErrorInfo{"ET0002", "invalid transplt output", "Give -o a folder outside the input; pass --force to replace an old result."},
    ErrorInfo{"ET0003", "invalid custom rule file", "Fix the rule JSON as the message says (rule kind, index and field are named)."},
    ErrorInfo{"ET0004", "invalid distributed main file", "Give distributed -m the training entry script inside the input."},
    ErrorInfo{"EG0000", "invalid aoe usage", "See aoe --help."},
    ErrorInfo{"EG0001", "invalid tune_ops_file", "Fix the JSON as the message says."},
    ErrorInfo{"EG0002", "invalid tune bank path", "Point TUNE_BANK_PATH at an existing, writable folder."},
    ErrorInfo{"EG0003", "invalid aoe parameter value", "Use a value listed in aoe --help."},
    ErrorInfo{"EG0010", "aoe cannot write", "Check that the folder is writable and the disk has room."},
    ErrorInfo{"EG0011", "model not found", "Check the --model / --model_path path."},
    ErrorInfo{"EG0012", "invalid tune bank", "Give the folder a tuning run wrote (its TUNE_BANK_PATH); aoe bank verify checks one."},
    ErrorInfo{"E16002", "unsupported ONNX operator", "Replace the operator in the model, or export with another opset."},
    ErrorInfo{"E16004", "ONNX model has no graph", "Export the model again."},
    ErrorInfo{"E16005", "invalid ONNX model", "Run onnx.checker on the model and export it again."},
    ErrorInfo{"E19002", "not enough memory", "Free memory, or check the input: a size it claims may be far larger than its data."},
    ErrorInfo{"E19999", "internal error", "Report this with the command line and model."},
    ErrorInfo{"EH0001", "invalid runtime input", "Give input files that match the model's inputs in number, size and type."},
    ErrorInfo{"EH0002", "operator execution failed", "Check the input data; see the reason for the operator that failed."},
    ErrorInfo{"EH0003", "a task faulted on the device (the AI Core or AI CPU exception)",
              "A task read outside its input (an index out of range): check the data the model was given; an exception dump "
              "(acl.json's \"dump_scene\": \"lite_exception\") keeps the task's inputs."},
};

const std::string& Empty() {
  static const std::string s;
  return s;
}

}  // namespace

const ErrorInfo* FindError(std::string_view code) {
  for (const auto& e : kCatalogue)
    if (e.code == code) return &e;
  return nullptr;
}

Status Status::Error(std::string_view code, std::string param, std::string value, std::string reason,
                     std::string fix) {
  Status s;
  s.err_ = std::make_shared<Err>(Err{std::string(code), std::move(param), std::move(value), std::move(reason),
                                     std::move(fix)});
  if (s.err_->fix.empty())
    if (const ErrorInfo* info = FindError(code)) s.err_->fix = std::string(info->fix);
  return s;
}

const std::string& Status::code() const { return err_ ? err_->code : Empty(); }
const std::string& Status::param() const { return err_ ? err_->param : Empty(); }
const std::string& Status::reason() const { return err_ ? err_->reason : Empty(); }

Status& Status::with_note(std::string_view note) {
  if (err_) {
    auto copy = std::make_shared<Err>(*err_);
    copy->reason += "; " + std::string(note);
    err_ = std::move(copy);
  }
  return *this;
}

Status& Status::with_param(std::string_view param) {
  if (err_) {
    auto copy = std::make_shared<Err>(*err_);
    copy->param = std::string(param);
    err_ = std::move(copy);
  }
  return *this;
}

Status& Status::with_context(std::string_view ctx) {
  if (err_) {
    auto copy = std::make_shared<Err>(*err_);
    copy->reason = std::string(ctx) + ": " + copy->reason;
    err_ = std::move(copy);
  }
  return *this;
}

std::string Status::message() const {
  if (!err_) return "success";
  const ErrorInfo* info = FindError(err_->code);
  std::string m = err_->code + ": ";
  if (info) m += std::string(info->title) + ". ";
  if (!err_->value.empty() || !err_->param.empty()) {
    if (!err_->value.empty()) m += "Value [" + err_->value + "] for ";
    m += (err_->value.empty() ? "Parameter [" : "parameter [") + err_->param + "]";
    m += err_->value.empty() ? ". " : " is invalid. ";
  }
  m += "Reason: " + err_->reason;
  if (!err_->fix.empty()) m += "\n  Solution: " + err_->fix;
  return m;
}

}  // namespace npu
