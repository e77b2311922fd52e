#include "ops/matmul.h"
#include "ops/quant.h"

#include <algorithm>

#include "ops/families.h"

namespace npu {

Result<Shape> MatMulShape(const Shape& a0, const Shape& b0) {
  if (a0.empty() || b0.empty()) return Status::Error("E10001", "MatMul", "", "inputs must have rank >= 1");
  Shape a = a0.size() == 1 ? Shape{1, a0[0]} : a0;
  Shape b = b0.size() == 1 ? Shape{b0[0], 1} : b0;
  if (a.back() != b[b.size() - 2])
    return Status::Error("E10001", "MatMul", ShapeToString(a0) + " x " + ShapeToString(b0), "inner dimensions differ");
  NPU_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
  Shape out = batch;
  if (a0.size() > 1) out.push_back(a[a.size() - 2]);
  if (b0.size() > 1) out.push_back(b.back());
  return out;
}

Result<EinsumSpec> ParseEinsum(std::string eq, const std::vector<const Tensor*>& ins) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  EinsumSpec s;
  auto arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  for (size_t i = 0; i <= lhs.size(); ++i)
    if (i == lhs.size() || lhs[i] == ',') {
      s.inputs.push_back(lhs.substr(start, i - start));
      start = i + 1;
    }
  if (s.inputs.size() != ins.size()) return Status::Error("E10001", "equation", eq, "operand count differs from input count");
  // Expand "..." into upper-case labels (equations use lower case) right-aligned across operands.
  size_t max_ell = 0;
  for (size_t k = 0; k < ins.size(); ++k) {
    auto p = s.inputs[k].find("...");
    if (p == std::string::npos) continue;
    size_t named = s.inputs[k].size() - 3;
    size_t ell = static_cast<size_t>(ins[k]->rank()) - named;
    max_ell = std::max(max_ell, ell);
    std::string labels;
    for (size_t j = 0; j < ell; ++j) labels += static_cast<char>('A' + (max_ell - ell) + j);
    s.inputs[k].replace(p, 3, labels);
  }
  std::string ell_labels;
  for (size_t j = 0; j < max_ell; ++j) ell_labels += static_cast<char>('A' + j);
  if (arrow != std::string::npos) {
    s.output = eq.substr(arrow + 2);
    auto p = s.output.find("...");
    if (p != std::string::npos) s.output.replace(p, 3, ell_labels);
  } else {  // implicit: ellipsis labels, then labels used once, alphabetically
    std::map<char, int> count;
    for (auto& in : s.inputs)
      for (char ch : in) count[ch]++;
    s.output = ell_labels;
    for (auto [ch, n] : count)
      if (n == 1 && !(ch >= 'A' && ch <= 'Z')) s.output += ch;
  }
  for (size_t k = 0; k < ins.size(); ++k) {
    if (s.inputs[k].size() != static_cast<size_t>(ins[k]->rank()))
      return Status::Error("E10001", "equation", eq, "operand " + std::to_string(k) + " rank differs from its labels");
    for (size_t i = 0; i < s.inputs[k].size(); ++i)
      if (size_t first = s.inputs[k].find(s.inputs[k][i]); first != i && ins[k]->shape()[first] != ins[k]->shape()[i])
        return Status::Error("E10001", "equation", eq, "operand " + std::to_string(k) + " repeats a label over dimensions of different sizes");
  }
  return s;
}

namespace {

Status InferMatMul(InferContext& c) {
  NPU_ASSIGN_OR_RETURN(DType out, CubeOutputDtype(c, 2));  // MatMulBias's bias; MatMul has none
  if (!c.in[0]->has_shape || !c.in[1]->has_shape) {
    c.set_output(0, out, {}, false);
    return Status::Ok();
  }
  auto r = MatMulShape(c.in[0]->shape, c.in[1]->shape);
  if (!r.ok()) return c.Fail(r.status().reason() + ": " + ShapeToString(c.in[0]->shape) + " x " + ShapeToString(c.in[1]->shape));
  c.set_output(0, out, r.value());
  return Status::Ok();
}

Status InferGemm(InferContext& c) {
  const Value &a = *c.in[0], &b = *c.in[1];
  NPU_ASSIGN_OR_RETURN(DType out, CubeOutputDtype(c, 2));
  if (!a.has_shape || !b.has_shape) {
    c.set_output(0, out, {}, false);
    return Status::Ok();
  }
  if (a.shape.size() != 2 || b.shape.size() != 2) return c.Fail("A and B must be 2-D");
  bool ta = c.node.attr_int("transA", 0), tb = c.node.attr_int("transB", 0);
  c.set_output(0, out, {ta ? a.shape[1] : a.shape[0], tb ? b.shape[0] : b.shape[1]});
  return Status::Ok();
}

Status InferEinsum(InferContext& c) {
  // Shapes follow from the labels; compute them from the parsed spec.
  std::vector<Tensor> fake;
  for (auto* v : c.in) {
    if (!v->has_shape) {
      c.set_output(0, c.in[0]->dtype, {}, false);
      return Status::Ok();
    }
    fake.push_back(Tensor::View(v->dtype, v->shape, nullptr, nullptr));
  }
  std::vector<const Tensor*> ins;
  for (auto& t : fake) ins.push_back(&t);
  auto spec = ParseEinsum(c.node.attr_string("equation"), ins);
  if (!spec.ok()) return spec.status();
  Shape out;
  for (char ch : spec.value().output) {
    int64_t d = -1;
    for (size_t k = 0; k < ins.size(); ++k) {
      auto p = spec.value().inputs[k].find(ch);
      if (p != std::string::npos) d = std::max(d, ins[k]->shape()[p]);
    }
    out.push_back(d);
  }
  c.set_output(0, c.in[0]->dtype, out);
  return Status::Ok();
}

}  // namespace

void RegisterMatMulSchemas() {
  RegisterSchema({"MatMul", 2, 2, 1, 1, Engine::kCube, InferMatMul});
  RegisterSchema({"MatMulBias", 3, 3, 1, 1, Engine::kCube, InferMatMul});
  RegisterSchema({"Gemm", 2, 3, 1, 1, Engine::kCube, InferGemm});
  RegisterSchema({"Einsum", 1, 64, 1, 1, Engine::kCube, InferEinsum});
}

}  // namespace npu
