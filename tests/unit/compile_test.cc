// compile/'s flag parsers: what --out_nodes and the shape-profile flags turn into, and what they refuse.
#include <gtest/gtest.h>

#include <cctype>

#include "base/file_io.h"
#include "compile/compile.h"
#include "compile/compile_config.h"

namespace npu {
namespace {

TEST(CompileFlags, OutNodesTakeAnIndexOrDefaultToOutputZero) {
  auto r = ParseOutNodes("conv1:1;fc");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r.value(), (std::vector<std::pair<std::string, int>>{{"conv1", 1}, {"fc", 0}}));
  EXPECT_FALSE(ParseOutNodes("conv1:x").ok());
  EXPECT_FALSE(ParseOutNodes("conv1:-1").ok());
}

TEST(CompileFlags, DynamicBatchMakesOneProfilePerSize) {
  CompileFlags o;
  o.input_shape = "x:-1,3,224,224";
  o.dynamic_batch_size = "1,2,4";
  auto p = ParseShapeProfiles(o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p.value().kind, "batch");
  ASSERT_EQ(p.value().values.size(), 3u);
  EXPECT_EQ(p.value().ShapesAt(2)[0].second, (Shape{4, 3, 224, 224}));
  auto k = p.value().Find({2}, "--dymBatch");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k.value(), 1u);
  EXPECT_FALSE(p.value().Find({3}, "--dymBatch").ok()) << "a size no profile has";
}

TEST(CompileFlags, ProfileFlagsRefuseWhatCannRefuses) {
  auto code_of = [](CompileFlags o) {
    auto p = ParseShapeProfiles(o);
    return p.ok() ? std::string("ok") : p.status().code();
  };
  CompileFlags o;
  o.input_shape = "x:-1,3,224,224";
  o.dynamic_batch_size = "1,1";
  EXPECT_EQ(code_of(o), "E10037") << "a duplicate profile";
  o.dynamic_batch_size = "4";
  EXPECT_EQ(code_of(o), "E10035") << "one profile is not dynamic";
  o.dynamic_batch_size = "1,0";
  EXPECT_EQ(code_of(o), "E10038") << "a non-positive size";
  o.dynamic_batch_size = "1,2";
  o.dynamic_image_size = "224,224;448,448";
  EXPECT_EQ(code_of(o), "E10009") << "two profile flags at once";
  o = {};
  o.input_shape = "x:-1,3,224,224";
  EXPECT_EQ(code_of(o), "E10011") << "-1 without a profile flag";
  o.input_shape = "x:1,3,-1,-1";
  o.dynamic_image_size = "224;448";
  EXPECT_EQ(code_of(o), "E10020") << "an image size is h,w";
}

// The pipeline as docs/architecture.md draws it is the pipeline Compile() runs: the arrows of its data-flow
// diagram, read in order, are CompilePassNames().
TEST(CompilePipeline, ArchitectureDocListsThePassesInOrder) {
  auto doc = ReadFileToString(std::string(NPUKIT_SOURCE_DIR) + "/docs/architecture.md");
  ASSERT_TRUE(doc.ok());
  const std::string& text = doc.value();
  const std::string arrow = "\u2192";  // →
  size_t start = text.find("Import " + arrow);
  ASSERT_NE(start, std::string::npos) << "architecture.md no longer draws the pass list";
  size_t end = text.find("OperatorBank", start);
  ASSERT_NE(end, std::string::npos);
  std::vector<std::string> drawn;
  std::string name;
  for (size_t i = start; i < end + std::string_view("OperatorBank").size(); ++i) {
    const char ch = text[i];
    if (std::isalnum(static_cast<unsigned char>(ch))) {
      name += ch;
    } else if (!name.empty()) {
      drawn.push_back(name);
      name.clear();
    }
  }
  if (!name.empty()) drawn.push_back(name);
  std::vector<std::string> passes(CompilePassNames().begin(), CompilePassNames().end());
  EXPECT_EQ(drawn, passes);
}

}  // namespace
}  // namespace npu
