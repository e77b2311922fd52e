// Helpers shared by the unit tests.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "ir/graph_edit.h"
#include "ir/op_schema.h"
#include "ir/tensor.h"
#include "kernels/registry.h"
#include "runtime/runtime.h"

namespace npu {

// The same shape, memory order and bytes.
inline void ExpectSameBits(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.channels_last, b.channels_last);
  EXPECT_EQ(std::memcmp(a.raw(), b.raw(), a.nbytes()), 0);
}

// An fp32 tensor with the given shape and values.
inline Tensor F32(Shape s, std::vector<float> v) {
  Tensor t = Tensor::Empty(DType::kF32, std::move(s));
  std::copy(v.begin(), v.end(), t.mutable_data<float>());
  return t;
}

// A 1-D int64 tensor (shapes, pads, axes, starts and ends).
inline Tensor I64(std::vector<int64_t> v) {
  Tensor t = Tensor::Empty(DType::kI64, {static_cast<int64_t>(v.size())});
  std::copy(v.begin(), v.end(), t.mutable_data<int64_t>());
  return t;
}

inline Tensor Random(Shape s, unsigned seed, float lo = -1, float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  Tensor t = Tensor::Empty(DType::kF32, std::move(s));
  for (auto& v : std::span(t.mutable_data<float>(), static_cast<size_t>(t.numel()))) v = d(rng);
  return t;
}

// A standalone node for running a kernel directly (RunKernel): `inputs` and one output, all value 0, opset 13.
inline Node MakeNode(const std::string& op, size_t inputs, AttrMap attrs = {}) {
  Node n;
  n.name = "n";
  n.op_type = op;
  n.opset = 13;
  n.attrs = std::move(attrs);
  n.inputs.assign(inputs, 0);
  n.outputs = {0};
  return n;
}

// A small graph builder: values by name, nodes appended in order.
struct Builder {
  Graph g;
  int In(const std::string& name, Shape s) {
    int v = g.AddValue(name);
    g.values[v].dtype = DType::kF32, g.values[v].shape = std::move(s), g.values[v].has_shape = true;
    g.inputs.push_back(v);
    return v;
  }
  int Const(const std::string& name, Tensor t) { return AddConstant(g, name, std::move(t)); }
  int Op(const std::string& type, std::vector<int> ins, AttrMap attrs = {}) {
    Node n;
    n.name = type + "_" + std::to_string(g.nodes.size());
    n.op_type = type;
    n.opset = 13;
    n.inputs = std::move(ins);
    n.attrs = std::move(attrs);
    n.original_names = {n.name};
    int out = g.AddValue(n.name + "_out");
    n.outputs = {out};
    AppendNode(g, std::move(n));
    return out;
  }
  Graph Done(int out) {
    g.outputs = {out};
    RegisterBuiltinOps();
    EXPECT_TRUE(InferGraph(g).ok());
    return g;
  }
};

// The graph's op types, in node order.
inline std::vector<std::string> OpTypes(const Graph& g) {
  std::vector<std::string> types;
  for (const Node& n : g.nodes) types.push_back(n.op_type);
  return types;
}

inline std::vector<float> Execute(Graph g, const std::vector<Tensor>& ins) {
  auto s = Session::FromGraph(std::move(g));
  EXPECT_TRUE(s.ok());
  std::vector<Tensor> outs;
  Status st = s.value().Run(ins, outs);
  EXPECT_TRUE(st.ok()) << st.message();
  auto f = outs[0].span<float>();
  return {f.begin(), f.end()};
}

inline void ExpectClose(const std::vector<float>& a, const std::vector<float>& b, float tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tol) << "element " << i;
}

}  // namespace npu
