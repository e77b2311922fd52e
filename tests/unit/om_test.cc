// The .om container and the model JSON: what atc writes is what msame, msaccucmp and atc --mode read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compile/compile.h"
#include "compile/compile_config.h"
#include "ir/ascend_types.h"
#include "lower/lower.h"
#include "om/model_json.h"
#include "om/om_file.h"
#include "om/om_model.h"
#include "passes/formats.h"
#include "passes/precision.h"
#include "soc/soc_spec.h"
#include "test_util.h"

namespace npu {
namespace {

// A grouped conv (FRACTAL_Z with sub_format), a matmul (FRACTAL_NZ) and one attr of every kind, converted
// as atc does for Ascend310P3.
Graph ConvertedNet() {
  Builder b;
  int x = b.In("x", {1, 8, 6, 6});
  int c = b.Op("Conv", {x, b.Const("w", Random({8, 4, 3, 3}, 1))},
               {{"group", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  int r = b.Op("LeakyRelu", {c}, {{"alpha", 0.125f}});
  int y = b.Op("Gemm", {b.Op("Flatten", {r}), b.Const("fc", Random({5, 288}, 2))}, {{"transB", int64_t{1}}});
  Graph g = b.Done(y);
  MapAscendOpTypes(g);
  g.nodes[1].attrs["note"] = std::string("kept");
  g.nodes[1].attrs["scales"] = std::vector<float>{0.5f, 2.0f};
  g.nodes[1].attrs["names"] = std::vector<std::string>{"a", "b"};
  g.nodes[1].original_names = {"leaky", "its_bias"};
  std::vector<Status> errors;
  PrecisionConfig cfg = LoadPrecisionConfig({}, *FindSoc("Ascend310P3"), errors);
  std::vector<std::string> warnings;
  EXPECT_TRUE(AssignPrecision(g, cfg, warnings).ok());
  EXPECT_TRUE(AssignDeviceFormats(g, *FindSoc("Ascend310P3")).ok());
  return g;
}

TEST(ModelJson, RoundTripsThroughTheReaderMsaccucmpUses) {
  Graph g = ConvertedNet();
  const std::map<std::string, std::string> attrs = {{"soc_version", "Ascend310P3"}, {"framework_type", "5"}};
  OrderedJson written = ModelToJson(g, attrs);
  auto read = ModelFromJson(nlohmann::json::parse(written.dump()));
  ASSERT_TRUE(read.ok()) << read.status().message();
  const Graph& r = read.value().graph;
  EXPECT_EQ(ModelToJson(r, read.value().attrs).dump(), written.dump()) << "write(read(write(g))) == write(g)";
  EXPECT_EQ(read.value().attrs, attrs);
  ASSERT_EQ(r.nodes.size(), g.nodes.size());
  for (size_t k = 0; k < g.nodes.size(); ++k) {
    EXPECT_EQ(ShownType(r.nodes[k]), ShownType(g.nodes[k]));
    EXPECT_EQ(r.nodes[k].original_names, g.nodes[k].original_names);
    ASSERT_EQ(r.nodes[k].inputs.size(), g.nodes[k].inputs.size());
    for (size_t i = 0; i < g.nodes[k].inputs.size(); ++i) EXPECT_EQ(ValueRef(r, r.nodes[k].inputs[i]), ValueRef(g, g.nodes[k].inputs[i]));
  }
  int w = -1;
  for (const Node& n : r.nodes)
    if (ShownType(n) == "Conv2D") w = n.inputs[1];
  ASSERT_GE(w, 0);
  EXPECT_EQ(r.values[w].device_format, Format::kFractalZ);
  EXPECT_EQ(r.values[w].device_groups, 2) << "the grouped FRACTAL_Z's sub_format survives";
  EXPECT_EQ(r.values[w].shape, (Shape{8, 4, 3, 3})) << "origin shapes survive";
}

TEST(ModelJson, ReaderIsLenientWithCannFilesAndStrictWithBrokenOnes) {
  // CANN's files: no ids, attr kinds this build does not model, ops without descs; a Data op is the graph's
  // input (read as "a:0"), NetOutput names its outputs, a control edge ("b:-1") carries no tensor.
  auto lenient = ModelFromJson(nlohmann::json::parse(R"({"graph":[{"op":[
      {"name":"a","type":"Data"},
      {"name":"b","type":"Relu","input":["a:0"],"attr":[{"key":"flag","value":{"b":true}},
        {"key":"_datadump_original_op_names","value":{"list":{"s":["relu"]}}}],"output_desc":[{}]},
      {"name":"out","type":"NetOutput","input":["b:0","b:-1"]}]}]})"));
  ASSERT_TRUE(lenient.ok()) << lenient.status().message();
  const Graph& g = lenient.value().graph;
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].original_names, std::vector<std::string>{"relu"});
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, std::vector<int>{g.inputs[0]});
  EXPECT_EQ(ValueRef(g, g.nodes[0].inputs[0]), "a");
  EXPECT_EQ(g.outputs, g.nodes[0].outputs);
  // The last one: an op that names itself as its input (found by fuzz/blackbox.py, it crashed the reader).
  for (const char* bad : {R"({"graph":[{"op":[{"name":"a","type":"Relu","input":["a:0"],"output_desc":[{}]}]}]})",
                          R"({"graph":[{"op":[{"type":"Relu"}]}]})", R"({"graph":[{"op":[{"name":"a"},{"name":"a"}]}]})",
                          R"({"graph":[{"op":[{"name":"a","input":"x"}]}]})", R"({"net":1})"})
    EXPECT_FALSE(ModelFromJson(nlohmann::json::parse(bad)).ok()) << bad;
}

TEST(OmFile, SavesAndLoadsAConvertedModel) {
  Graph g = ConvertedNet();
  OmModel m;
  m.graph = g;
  m.tasks = LowerToTasks(m.graph, &*FindSoc("Ascend310P3"));
  m.header.platform_version = "Ascend310P3";
  std::string path = ::testing::TempDir() + "/om_test.om";
  ASSERT_TRUE(SaveOm(path, m).ok());
  auto loaded = LoadOm(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  // The .om does not list the Flatten (a shape-only op, as GE removes them): the reader puts a view back where the
  // Gemm's desc shows the flattened shape, and the model JSON (--mode=1) leaves it out again.
  Graph expect = g;
  for (Node& n : expect.nodes)
    if (n.op_type == "Flatten") n.attrs[kRemovedViewAttr] = int64_t{1};
  EXPECT_EQ(ModelToJson(loaded.value().graph, {}).dump(), ModelToJson(expect, {}).dump());
  const auto& nodes = loaded.value().graph.nodes;
  EXPECT_EQ(std::count_if(nodes.begin(), nodes.end(), [](const Node& n) { return n.has_attr(kRemovedViewAttr); }), 1);
  EXPECT_EQ(loaded.value().tasks.size(), m.tasks.size());
  std::filesystem::remove(path);
}

TEST(OmFile, RefusesTruncatedAndTamperedFiles) {
  Graph g = ConvertedNet();
  OmModel m;
  m.graph = g;
  m.header.platform_version = "Ascend310P3";
  std::string path = ::testing::TempDir() + "/om_tamper.om";
  ASSERT_TRUE(SaveOm(path, m).ok());
  std::string bytes = ReadFileToString(path).value();
  auto write = [&](const std::string& b) { std::ofstream(path, std::ios::binary | std::ios::trunc) << b; };
  write(bytes.substr(0, bytes.size() - 1));
  EXPECT_FALSE(om::ReadOmFile(path).ok()) << "truncated";
  std::string flipped = bytes;
  flipped[bytes.size() / 2] ^= 1;
  write(flipped);
  auto r = om::ReadOmFile(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().reason().find("checksum"), std::string::npos) << r.status().message();
  std::filesystem::remove(path);
}

TEST(OmFile, SameModelSameBytes) {  // builds are reproducible: attr maps are written in key order
  OmModel m;
  m.graph = ConvertedNet();
  m.header.platform_version = "Ascend310P3";
  std::string a = ::testing::TempDir() + "/om_det_a.om", b = ::testing::TempDir() + "/om_det_b.om";
  ASSERT_TRUE(SaveOm(a, m).ok());
  ASSERT_TRUE(SaveOm(b, m).ok());
  std::string x = ReadFileToString(a).value(), y = ReadFileToString(b).value();
  EXPECT_EQ(x.substr(om::kHeaderSize), y.substr(om::kHeaderSize));
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

TEST(OmFile, WriteReadWriteGivesTheSameBytes) {  // MODEL_DEF is a ge.proto.ModelDef (om/ge_convert.h): nothing lost
  OmModel m;
  m.graph = ConvertedNet();
  m.tasks = LowerToTasks(m.graph, &*FindSoc("Ascend310P3"));
  m.header.platform_version = "Ascend310P3";
  m.attrs = {{"soc_version", "Ascend310P3"}, {"atc_version", "test"}};
  std::string a = ::testing::TempDir() + "/om_rt_a.om", b = ::testing::TempDir() + "/om_rt_b.om";
  ASSERT_TRUE(SaveOm(a, m).ok());
  auto loaded = LoadOm(a);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(SaveOm(b, loaded.value()).ok());
  EXPECT_EQ(ReadFileToString(a).value(), ReadFileToString(b).value());
  std::filesystem::remove(a);
  std::filesystem::remove(b);
}

// Every front end's model, in several precision modes and with shape profiles: written, read and written again,
// the .om is the same bytes (nothing of MODEL_DEF, WEIGHTS_DATA or TASK_INFO is lost or reordered on the way).
TEST(OmFile, EveryFrontEndsOmRoundTrips) {
  const std::string src = NPUKIT_SOURCE_DIR, corpora = src + "/tests/data";
  struct Case {
    std::string framework, model, weight, input_shape, precision, dynamic_batch;
  };
  const Case cases[] = {
      {"5", src + "/examples/tinynet.onnx", "", "", "force_fp16", ""},
      {"5", src + "/examples/tinynet.onnx", "", "", "must_keep_origin_dtype", ""},
      {"5", src + "/examples/tinynet.onnx", "", "image:-1,3,32,32", "allow_mix_precision", "1,4"},
      {"3", corpora + "/tf/a3c_pong_model.pb", "", "s:1,42,42,1", "force_fp16", ""},
      {"3", corpora + "/tf/tf2onnx_lstm.pb", "", "", "force_fp16", ""},
      {"0", corpora + "/caffe/lenet.prototxt", corpora + "/caffe/lenet.caffemodel", "", "force_fp16", ""},
      {"0", corpora + "/caffe/mtcnn_det1.prototxt", corpora + "/caffe/mtcnn_det1.caffemodel", "", "allow_fp32_to_fp16", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.model + " " + c.precision + " " + c.dynamic_batch);
    CompileFlags f;
    f.framework = c.framework, f.model = c.model, f.weight = c.weight, f.soc_version = "Ascend310P3";
    f.input_shape = c.input_shape, f.dynamic_batch_size = c.dynamic_batch, f.precision.precision_mode = c.precision;
    auto config = MakeCompileConfig(f, CompileGoal::kConvert);
    ASSERT_TRUE(config.ok()) << config.status().message();
    auto m = Compile(config.value());
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::string a = ::testing::TempDir() + "/om_rt_fe_a.om", b = ::testing::TempDir() + "/om_rt_fe_b.om";
    ASSERT_TRUE(SaveOm(a, m.value()).ok());
    auto loaded = LoadOm(a);
    ASSERT_TRUE(loaded.ok()) << loaded.status().message();
    for (size_t p = 1; p < loaded.value().profiles.values.size(); ++p) {  // the other profiles' graphs, as atc saves them
      auto other = LoadOm(a, p);
      ASSERT_TRUE(other.ok()) << other.status().message();
      loaded.value().other_profiles.push_back({other.value().graph, other.value().tasks});
    }
    ASSERT_TRUE(SaveOm(b, loaded.value()).ok());
    EXPECT_EQ(ReadFileToString(a).value(), ReadFileToString(b).value());
  }
}

TEST(OmFile, PiecesAreWrittenInOrderAndMadeOnesFailCleanly) {
  std::string path = ::testing::TempDir() + "/om_pieces.bin";
  std::string given = "head", tail = "tail";
  auto bytes = [](const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); };
  auto fill = [](char c) {
    return [c](std::span<std::byte> out) {
      std::fill(out.begin(), out.end(), std::byte(c));
      return Status::Ok();
    };
  };
  const size_t big = (24 << 20) + 3;  // larger than a stage: it gets one of its own
  std::vector<om::Piece> pieces{om::Piece(bytes(given)), om::Piece(5, fill('a')), om::Piece(big, fill('b')),
                                om::Piece(7, fill('c')), om::Piece(bytes(tail))};
  auto w = AtomicFileWriter::Create(path);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE(om::WritePieces(*w.value(), pieces).ok());
  ASSERT_TRUE(w.value()->Commit().ok());
  std::string want = given + std::string(5, 'a') + std::string(big, 'b') + std::string(7, 'c') + tail;
  EXPECT_TRUE(ReadFileToString(path).value() == want);
  pieces[3] = om::Piece(7, [](std::span<std::byte>) { return Status::Error("E19999", "weight", "w", "cannot convert"); });
  auto w2 = AtomicFileWriter::Create(path);
  ASSERT_TRUE(w2.ok());
  Status s = om::WritePieces(*w2.value(), pieces);
  EXPECT_EQ(s.reason(), "cannot convert");
  w2.value().reset();  // abandoned: the file written before stays as it was
  EXPECT_TRUE(ReadFileToString(path).value() == want);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace npu
