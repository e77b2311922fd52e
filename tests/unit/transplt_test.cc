// transplt internals that the golden tests cannot isolate: which edits skip the re-parse, and the row index.
#include <gtest/gtest.h>

#include <string>

#include "edit_safety.h"
#include "syntax.h"

namespace transplt {
namespace {

struct Parsed {
  std::string text;
  Tree tree;
  explicit Parsed(std::string t) : text(std::move(t)), tree(ParsePython(text)) {}
  TSNode root() const { return ts_tree_root_node(tree.get()); }
};

Edit Replace(const std::string& text, const std::string& old_text, std::string new_text, size_t nth = 0) {
  size_t at = text.find(old_text);
  while (nth-- > 0) at = text.find(old_text, at + 1);
  return Edit{static_cast<uint32_t>(at), static_cast<uint32_t>(at + old_text.size()), std::move(new_text), "T", OpType::kModify, ""};
}

Edit InsertAt(size_t at, std::string text) {
  return Edit{static_cast<uint32_t>(at), static_cast<uint32_t>(at), std::move(text), "T", OpType::kInsert, ""};
}

TEST(TranspltEditSafety, NameSwapsAtTokenBoundariesKeepSyntax) {
  Parsed p("x = torch.cuda.is_available()\ny = 'cuda:0'\n");
  EXPECT_TRUE(KeepsSyntax(Replace(p.text, "cuda", "npu"), p.text, p.root()));
  EXPECT_TRUE(KeepsSyntax(Replace(p.text, "torch.cuda", "torch_npu.npu"), p.text, p.root()));
  EXPECT_TRUE(KeepsSyntax(Replace(p.text, "cuda", "npu", 1), p.text, p.root()));  // inside the string
}

TEST(TranspltEditSafety, OtherEditsAreParsedAgain) {
  Parsed p("x = torch.cuda.is_available()\ns = '\\cuda'\nxcuda = 1\n");
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "lambda"), p.text, p.root()));       // keyword
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "match"), p.text, p.root()));        // soft keyword
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "npu()"), p.text, p.root()));        // not a name
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "1npu"), p.text, p.root()));         // not an identifier
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "npu", 1), p.text, p.root()));       // after a backslash
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "cuda", "npu", 2), p.text, p.root()));       // inside a longer word
  EXPECT_FALSE(KeepsSyntax(Replace(p.text, "torch.", "np"), p.text, p.root()));         // ends on a dot
}

TEST(TranspltEditSafety, ImportLineOnlyBeforeAStatementAtTheSameIndent) {
  Parsed p("def f():\n    import torch\n    # note\n        # odd comment\n    return torch\n");
  size_t stmt = p.text.find("    import torch");
  EXPECT_TRUE(KeepsSyntax(InsertAt(stmt, "    import torch_npu\n"), p.text, p.root()));
  EXPECT_FALSE(KeepsSyntax(InsertAt(stmt, "  import torch_npu\n"), p.text, p.root()));        // other indent
  EXPECT_FALSE(KeepsSyntax(InsertAt(stmt, "    import torch_npu"), p.text, p.root()));        // no line end
  EXPECT_FALSE(KeepsSyntax(InsertAt(stmt, "    x = torch_npu\n"), p.text, p.root()));         // not an import
  EXPECT_FALSE(KeepsSyntax(InsertAt(stmt + 4, "import torch_npu\n"), p.text, p.root()));      // mid-line
  size_t odd = p.text.find("        # odd");
  EXPECT_FALSE(KeepsSyntax(InsertAt(odd, "        import torch_npu\n"), p.text, p.root()));  // before a comment
  Parsed s("s = '''\nimport torch\n'''\n");
  EXPECT_FALSE(KeepsSyntax(InsertAt(s.text.find("import"), "import torch_npu\n"), s.text, s.root()));  // in a string
  Parsed c("x = [1,\n     2]\n");
  EXPECT_FALSE(KeepsSyntax(InsertAt(c.text.find("     2"), "     import torch_npu\n"), c.text, c.root()));
}

// Rows list exactly the named nodes in pre-order, with parents and subtree ends consistent.
TEST(TranspltRows, NamedPreorderMatchesTheTree) {
  Parsed p("import torch\n\nclass A(torch.nn.Module):\n    def f(self, x=1):\n        return x.cuda()  # c\n");
  std::vector<NodeRow> rows = NamedPreorder(p.root());
  std::vector<TSNode> expect, stack{p.root()}, kids;
  while (!stack.empty()) {
    TSNode n = stack.back();
    stack.pop_back();
    expect.push_back(n);
    NamedChildren(n, kids);
    stack.insert(stack.end(), kids.rbegin(), kids.rend());
  }
  ASSERT_EQ(rows.size(), expect.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_TRUE(Same(rows[i].node, expect[i])) << i;
    EXPECT_EQ(rows[i].kind, ts_node_symbol(expect[i]));
    EXPECT_GT(rows[i].end, i);
    if (i == 0) {
      EXPECT_EQ(rows[i].parent, kNoRow);
      EXPECT_EQ(rows[i].end, rows.size());
    } else {
      EXPECT_TRUE(Same(rows[rows[i].parent].node, Parent(rows[i].node))) << i;
      EXPECT_LE(rows[i].end, rows[rows[i].parent].end);
    }
  }
}

}  // namespace
}  // namespace transplt
