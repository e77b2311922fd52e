// ONNX import without protobuf copying the weights: raw_data is cut out before parsing (weight_cut.h) and
// each initializer gets its bytes in the file (aligned) or in one copy (not aligned).
#include <gtest/gtest.h>

#include <algorithm>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "frontend/ge/ge_ops.h"
#include "frontend/onnx/onnx_importer.h"
#include "frontend/weight_cut.h"

namespace npu {
namespace {

std::string RawOf(const std::vector<float>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float)); }

// y = (x + a) + b, with a as raw_data, b as float_data and an unused int64 raw_data initializer c.
// `pad` lengthens the producer name, which comes before the graph: it moves the raw data in the file.
onnx::ModelProto TwoAdds(size_t pad) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.set_producer_name("test" + std::string(pad, '_'));
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("two_adds");
  auto* a = g->add_initializer();
  a->set_name("a"), a->set_data_type(onnx::TensorProto::FLOAT), a->add_dims(5);
  a->set_raw_data(RawOf({1, 2, 3, 4, 5}));
  auto* b = g->add_initializer();
  b->set_name("b"), b->set_data_type(onnx::TensorProto::FLOAT), b->add_dims(5);
  for (float x : {10.f, 20.f, 30.f, 40.f, 50.f}) b->add_float_data(x);
  auto* c = g->add_initializer();
  c->set_name("c"), c->set_data_type(onnx::TensorProto::INT64), c->add_dims(2);
  const int64_t c_values[2] = {-7, 1LL << 40};
  c->set_raw_data(std::string(reinterpret_cast<const char*>(c_values), sizeof c_values));
  auto io = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    t->mutable_shape()->add_dim()->set_dim_value(5);
  };
  io(g->add_input(), "x");
  io(g->add_output(), "y");
  auto add = [&](const char* in0, const char* in1, const char* out) {
    auto* n = g->add_node();
    n->set_op_type("Add"), n->set_name(out), n->add_input(in0), n->add_input(in1), n->add_output(out);
  };
  add("x", "a", "xa");
  add("xa", "b", "y");
  return m;
}

TEST(OnnxWeightCut, RemovesOnlyInitializerRawDataAndPointsAtIt) {
  onnx::ModelProto m = TwoAdds(0);
  std::string bytes = m.SerializeAsString();
  auto cut = CutInitializerData(std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(cut.has_value());
  ASSERT_EQ(cut->raw.size(), 3u);
  ASSERT_TRUE(cut->raw[0] && cut->raw[2]);
  EXPECT_FALSE(cut->raw[1]) << "float_data is not raw_data";
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(cut->raw[0]->data()), cut->raw[0]->size()), m.graph().initializer(0).raw_data());
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(cut->raw[2]->data()), cut->raw[2]->size()), m.graph().initializer(2).raw_data());
  onnx::ModelProto parsed, expected = m;
  ASSERT_TRUE(parsed.ParseFromString(cut->bytes));
  expected.mutable_graph()->mutable_initializer(0)->clear_raw_data();
  expected.mutable_graph()->mutable_initializer(2)->clear_raw_data();
  EXPECT_EQ(parsed.SerializeAsString(), expected.SerializeAsString());
}

TEST(OnnxWeightCut, MalformedBytesAreLeftToProtobuf) {
  std::string bytes = TwoAdds(0).SerializeAsString();
  auto span_of = [](const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); };
  for (size_t keep : {bytes.size() - 1, bytes.size() / 2, size_t{3}})
    EXPECT_FALSE(CutInitializerData(span_of(bytes.substr(0, keep))).has_value()) << keep;
  std::string group = bytes + std::string("\x0b\x0c", 2);  // field 1 as a (deprecated) group: not walked
  EXPECT_FALSE(CutInitializerData(span_of(group)).has_value());
}

TEST(OnnxImport, InitializersReadTheSameAtEveryFileAlignment) {
  const std::string path = ::testing::TempDir() + "/two_adds.onnx";
  for (size_t pad = 0; pad < 64; ++pad) {  // every offset modulo 64: in place (aligned) and copied
    std::ofstream(path, std::ios::binary | std::ios::trunc) << TwoAdds(pad).SerializeAsString();
    auto g = ImportOnnx(path, {});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto constant = [&](const char* name) { return *g.value().values[static_cast<size_t>(g.value().FindValue(name))].constant; };
    EXPECT_EQ(constant("a").ToDoubleVector(), (std::vector<double>{1, 2, 3, 4, 5})) << pad;
    EXPECT_EQ(constant("b").ToDoubleVector(), (std::vector<double>{10, 20, 30, 40, 50})) << pad;
    EXPECT_EQ(constant("c").ToInt64Vector(), (std::vector<int64_t>{-7, 1LL << 40})) << pad;
    const Tensor b = constant("b");  // computed on through aligned storage; the file's bytes stay where they are
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.raw()) % 64, 0u) << pad;
    EXPECT_TRUE(std::ranges::equal(b.stored_bytes(), b.bytes())) << pad;
  }
  std::string bytes = TwoAdds(0).SerializeAsString();
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() - 2);
  auto bad = ImportOnnx(path, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), "E10041") << bad.status().message();
  std::filesystem::remove(path);
}

TEST(Tensor, ViewAnyAlignmentCopiesOnceAndOnlyWhenComputedOn) {
  auto storage = std::make_shared<std::vector<float>>(std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7, 8});
  const auto* misaligned = reinterpret_cast<const std::byte*>(storage->data() + 1);  // 4 bytes past a 64-byte start
  ASSERT_NE(reinterpret_cast<uintptr_t>(misaligned) % 64, 0u);
  Tensor t = Tensor::ViewAnyAlignment(DType::kF32, {2, 4}, storage, misaligned);
  EXPECT_EQ(t.stored_bytes().data(), misaligned);  // where it is, for code that only moves bytes
  Tensor copy = t.Reshaped({8});
  const float* a = t.data<float>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  EXPECT_EQ(copy.data<float>(), a);  // one aligned copy, shared by every copy of the tensor
  EXPECT_EQ(std::vector<float>(a, a + 8), (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(t.Clone().ToDoubleVector(), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  copy.mutable_data<float>()[0] = 42;  // writing goes to the aligned copy, never into the stored bytes
  EXPECT_EQ((*storage)[1], 1.0f);
  EXPECT_EQ(t.data<float>()[0], 42.0f);
  storage.reset();  // the tensor keeps its bytes alive
  EXPECT_EQ(t.stored_bytes().size(), 32u);
  EXPECT_EQ(copy.ToDoubleVector()[7], 8.0);
  const Tensor aligned = Tensor::ViewAnyAlignment(DType::kF32, {1}, t.owner(), t.raw());  // no copy needed
  EXPECT_EQ(aligned.raw(), t.raw());
}

}  // namespace
}  // namespace npu

// A CANN 20.x .om keeps a conv's shapes but not its strides or pads: the window is recovered from them.
TEST(GeOps, InferWindowFromShapes) {
  using npu::InferWindow;
  auto w = InferWindow(42, 20, 3);  // the real A3C .om's first conv: VALID, stride 2
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stride, 2);
  EXPECT_EQ(w->pad_begin + w->pad_end, 0);
  w = InferWindow(56, 56, 3);  // SAME, stride 1: one pixel each side
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stride, 1);
  EXPECT_EQ(w->pad_begin, 1);
  EXPECT_EQ(w->pad_end, 1);
  w = InferWindow(224, 112, 7);  // SAME, stride 2: TF puts the odd pixel at the end
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stride, 2);
  EXPECT_EQ(w->pad_begin, 2);
  EXPECT_EQ(w->pad_end, 3);
  w = InferWindow(56, 28, 1);  // a 1x1 stride-2 projection
  ASSERT_TRUE(w);
  EXPECT_EQ(w->stride, 2);
  EXPECT_FALSE(InferWindow(10, 20, 3));  // no padding of TF's makes a larger output
  auto huge = InferWindow(int64_t{1} << 40, 2, 1);  // closed form: a fuzzer's huge dims cost nothing
  ASSERT_TRUE(huge);
  EXPECT_EQ(huge->stride, int64_t{1} << 39);
}
