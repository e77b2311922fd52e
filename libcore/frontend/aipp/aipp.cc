#include "frontend/aipp/aipp.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "base/file_io.h"
#include "insert_op.pb.h"
#include "frontend/layout.h"
#include "ir/graph_edit.h"
#include "ir/node_attrs.h"

namespace npu {
namespace {

using Params = aipp::AippOpParams;

Status Bad(const std::string& path, const std::string& field, const std::string& why, std::string fix = {}) {
  return Status::Error("E10052", "--insert_op_conf", path, field.empty() ? why : field + ": " + why,
                       fix.empty() ? "Fix the aipp_op field named; see docs/atc.md (static AIPP) for what is supported." : std::move(fix));
}

class Collector : public google::protobuf::io::ErrorCollector {
 public:
  std::string first;
  void AddError(int line, google::protobuf::io::ColumnNumber column, const std::string& message) override {
    if (first.empty()) first = "line " + std::to_string(line + 1) + ", column " + std::to_string(column + 1) + ": " + message;
  }
};

// aipp_mode: dynamic holds where the image goes and how large it may be; the rest comes with each execution.
Result<AippConfig> DynamicFromParams(const Params& p, const std::string& path, const std::string& at) {
  const google::protobuf::Descriptor* d = p.GetDescriptor();
  for (const char* field : {"input_format", "src_image_size_w", "src_image_size_h", "crop", "padding", "csc_switch", "mean_chn_0"})
    if (p.GetReflection()->HasField(p, d->FindFieldByName(field)))
      return Bad(path, at + "aipp_mode", std::string("dynamic takes ") + field + " at run time (aclmdlSetInputAIPP), not from the config",
                 "Leave only related_input_rank and max_src_image_size in a dynamic aipp_op, or make it static.");
  if (p.max_src_image_size() == 0) return Bad(path, at + "max_src_image_size", "is required in dynamic mode: the bytes of the largest source image");
  AippConfig c;
  c.dynamic = true;
  c.related_input_rank = p.related_input_rank();
  c.max_src_image_size = p.max_src_image_size();
  return c;
}

Result<AippConfig> FromParams(const Params& p, const std::string& path, int index) {
  std::string at = "aipp_op #" + std::to_string(index + 1) + " ";
  if (p.aipp_mode() == Params::dynamic) return DynamicFromParams(p, path, at);
  if (p.aipp_mode() != Params::static_) return Bad(path, at + "aipp_mode", "is required (static or dynamic)");
  if (p.has_max_src_image_size()) return Bad(path, at + "max_src_image_size", "belongs to dynamic mode");
  if (!p.has_input_format()) return Bad(path, at + "input_format", "is required");
  AippConfig c;
  c.input_format = Params::InputFormat_Name(p.input_format());
  c.related_input_rank = p.related_input_rank();
  c.src_h = p.src_image_size_h(), c.src_w = p.src_image_size_w();
  c.crop = p.crop();
  c.crop_y = p.load_start_pos_h(), c.crop_x = p.load_start_pos_w(), c.crop_h = p.crop_size_h(), c.crop_w = p.crop_size_w();
  if (p.padding()) c.pad_top = p.top_padding_size(), c.pad_bottom = p.bottom_padding_size(), c.pad_left = p.left_padding_size(), c.pad_right = p.right_padding_size();
  c.padding_value = p.padding_value();
  c.csc = p.csc_switch(), c.rbuv_swap = p.rbuv_swap_switch(), c.ax_swap = p.ax_swap_switch();
  c.matrix = {p.matrix_r0c0(), p.matrix_r0c1(), p.matrix_r0c2(), p.matrix_r1c0(), p.matrix_r1c1(), p.matrix_r1c2(),
              p.matrix_r2c0(), p.matrix_r2c1(), p.matrix_r2c2()};
  c.input_bias = {p.input_bias_0(), p.input_bias_1(), p.input_bias_2()};
  c.output_bias = {p.output_bias_0(), p.output_bias_1(), p.output_bias_2()};
  c.mean = {p.mean_chn_0(), p.mean_chn_1(), p.mean_chn_2(), p.mean_chn_3()};
  c.min = {p.min_chn_0(), p.min_chn_1(), p.min_chn_2(), p.min_chn_3()};
  c.var_reci = {p.var_reci_chn_0(), p.var_reci_chn_1(), p.var_reci_chn_2(), p.var_reci_chn_3()};
  // Ranges of the hardware registers (int16 matrix, uint8 biases and means).
  const char* names[] = {"matrix_r0c0", "matrix_r0c1", "matrix_r0c2", "matrix_r1c0", "matrix_r1c1", "matrix_r1c2", "matrix_r2c0", "matrix_r2c1", "matrix_r2c2"};
  for (size_t i = 0; i < 9; ++i)
    if (c.matrix[i] < -32768 || c.matrix[i] > 32767) return Bad(path, at + names[i], std::to_string(c.matrix[i]) + " is outside int16");
  for (size_t i = 0; i < 3; ++i) {
    if (c.input_bias[i] < 0 || c.input_bias[i] > 255) return Bad(path, at + "input_bias_" + std::to_string(i), "must be in [0, 255]");
    if (c.output_bias[i] < 0 || c.output_bias[i] > 255) return Bad(path, at + "output_bias_" + std::to_string(i), "must be in [0, 255]");
  }
  for (size_t i = 0; i < 4; ++i)
    if (c.mean[i] < 0 || c.mean[i] > 255) return Bad(path, at + "mean_chn_" + std::to_string(i), "must be in [0, 255]");
  if (c.csc && c.input_format == "YUV400_U8") return Bad(path, at + "csc_switch", "YUV400_U8 has one channel: no colour space to convert");
  for (int64_t v : {c.src_h, c.src_w, c.crop_y, c.crop_x, c.crop_h, c.crop_w, c.pad_top, c.pad_bottom, c.pad_left, c.pad_right})
    if (v < 0) return Bad(path, at + "sizes", "sizes and positions must not be negative");
  return c;
}

// The Aipp node in front of input related_input_rank: the float input becomes its output and a new uint8 input
// takes the name (dynamic: one slot of max_src_image_size bytes per image, and the parameters' input at the end).
Status InsertAippNode(Graph& g, const AippConfig& c, bool nhwc) {
  const int in = g.inputs[static_cast<size_t>(c.related_input_rank)];
  const std::string name = g.values[in].name;
  g.RenameValue(in, UniqueValueName(g, name + "_aipp"));
  auto add_input = [&g](const std::string& value, Shape shape) {
    int v = g.AddValue(value);
    g.values[v].dtype = DType::kU8;
    g.values[v].shape = std::move(shape);
    g.values[v].has_shape = true;
    return v;
  };
  const int raw = add_input(name, c.dynamic ? Shape{c.output[0], c.max_src_image_size} : c.InputShape());
  if (!c.dynamic) g.values[raw].layout = "NHWC";
  g.inputs[static_cast<size_t>(c.related_input_rank)] = raw;
  Node n;
  n.name = UniqueNodeName(g, "aipp_" + name);
  n.op_type = n.ascend_type = "Aipp";
  n.inputs = {raw};
  if (c.dynamic) {
    if (g.FindValue(kDynamicAippInput) >= 0) return Bad(c.source, "aipp_mode", "one input of a model can take dynamic AIPP");
    n.inputs.push_back(add_input(kDynamicAippInput, {static_cast<int64_t>(AippDynamicSize(static_cast<uint64_t>(c.output[0])))}));
    g.inputs.push_back(n.inputs.back());
  }
  n.outputs = {in};
  AippToAttrs(c, g.values[in].dtype, n.attrs);
  if (nhwc) {
    int nchw = g.AddValue(UniqueValueName(g, name + "_aipp_nchw"));
    n.outputs = {nchw};
    Node t;
    t.name = UniqueNodeName(g, n.name + "/to_nhwc");
    t.op_type = "Transpose";
    t.inputs = {nchw};
    t.outputs = {in};
    t.attrs = {{"perm", std::vector<int64_t>{0, 2, 3, 1}}, {kLayoutTransposeAttr, int64_t{1}}};
    AppendNode(g, std::move(n));
    AppendNode(g, std::move(t));
    NPU_RETURN_IF_ERROR(SortTopologically(g));
    return CancelLayoutTransposes(g);
  }
  AppendNode(g, std::move(n));
  return SortTopologically(g);
}

}  // namespace

Result<std::vector<AippConfig>> LoadAippConfig(const std::string& path) {
  if (!FileExists(path)) return Status::Error("E10410", "--insert_op_conf", path, "the file does not exist");
  NPU_ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  aipp::InsertOpConf conf;
  google::protobuf::TextFormat::Parser parser;
  Collector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &conf)) return Bad(path, "", errors.first);
  if (conf.aipp_op_size() == 0) return Bad(path, "aipp_op", "the file has no aipp_op { ... } block");
  std::vector<AippConfig> out;
  for (int i = 0; i < conf.aipp_op_size(); ++i) {
    NPU_ASSIGN_OR_RETURN(AippConfig c, FromParams(conf.aipp_op(i), path, i));
    c.source = path;
    out.push_back(std::move(c));
  }
  return out;
}

Status InsertAipp(Graph& g, AippConfig c) {
  const std::string& path = c.source;
  if (c.related_input_rank < 0 || c.related_input_rank >= static_cast<int64_t>(g.inputs.size()))
    return Bad(path, "related_input_rank", std::to_string(c.related_input_rank) + " is not an input of the model (it has " + std::to_string(g.inputs.size()) + ")");
  int in = g.inputs[c.related_input_rank];
  const Value& v = g.values[in];
  if (!v.has_shape || v.shape.size() != 4 || NumElements(v.shape) < 0)
    return Bad(path, "related_input_rank", "input '" + v.name + "' is " + ShapeToString(v.shape) + "; AIPP feeds a static 4-D NCHW input",
               "Give the input a static NCHW shape with --input_shape.");
  if (!IsFloat(v.dtype)) return Bad(path, "related_input_rank", "input '" + v.name + "' is " + std::string(DTypeName(v.dtype)) + ", not a float image");
  // AIPP writes NCHW; a channels-last input (TensorFlow's NHWC) gets it through a layout transpose, which the
  // model's own transpose to channels-first then cancels (frontend/layout.h).
  const bool nhwc = v.layout == "NHWC";
  c.output = nhwc ? Shape{v.shape[0], v.shape[3], v.shape[1], v.shape[2]} : v.shape;
  if (c.dynamic) return InsertAippNode(g, c, nhwc);
  int64_t C = c.output[1], H = c.output[2], W = c.output[3];
  int64_t channels = c.input_format == "YUV400_U8" ? 1 : 3;
  if (C != channels)
    return Bad(path, "input_format", c.input_format + " gives " + std::to_string(channels) + " channel(s); input '" + v.name + "' has " + std::to_string(C));
  int64_t inner_h = H - c.pad_top - c.pad_bottom, inner_w = W - c.pad_left - c.pad_right;
  if (inner_h <= 0 || inner_w <= 0) return Bad(path, "padding", "the padding leaves no image inside the model's " + std::to_string(H) + "x" + std::to_string(W));
  if (c.src_h == 0) c.src_h = c.crop ? c.crop_y + (c.crop_h ? c.crop_h : inner_h) : inner_h;
  if (c.src_w == 0) c.src_w = c.crop ? c.crop_x + (c.crop_w ? c.crop_w : inner_w) : inner_w;
  if (c.input_format == "YUV420SP_U8" && (c.src_h % 2 || c.src_w % 2))
    return Bad(path, "src_image_size_w/h", "YUV420SP_U8 needs an even width and height, got " + std::to_string(c.src_w) + "x" + std::to_string(c.src_h));
  if (!c.crop) c.crop_y = c.crop_x = 0, c.crop_h = c.src_h, c.crop_w = c.src_w;
  if (c.crop_h == 0) c.crop_h = inner_h;
  if (c.crop_w == 0) c.crop_w = inner_w;
  if (c.crop_y + c.crop_h > c.src_h || c.crop_x + c.crop_w > c.src_w)
    return Bad(path, "crop", "load_start_pos + crop_size (" + std::to_string(c.crop_x + c.crop_w) + "x" + std::to_string(c.crop_y + c.crop_h) +
               ") leaves the " + std::to_string(c.src_w) + "x" + std::to_string(c.src_h) + " source image");
  if (c.crop_h != inner_h || c.crop_w != inner_w)
    return Bad(path, c.crop ? "crop_size_w/h" : "src_image_size_w/h",
               std::to_string(c.crop_w) + "x" + std::to_string(c.crop_h) + " (after padding " + std::to_string(c.crop_w + c.pad_left + c.pad_right) + "x" +
                   std::to_string(c.crop_h + c.pad_top + c.pad_bottom) + ") does not make the model input's " + std::to_string(W) + "x" + std::to_string(H),
               "Crop (or size) the image to the model's H and W minus the padding; resize is not supported.");
  return InsertAippNode(g, c, nhwc);
}

}  // namespace npu
