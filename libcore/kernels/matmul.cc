// MatMul (numpy semantics, broadcast batch dims), Gemm and Einsum (any number of operands, diagonals,
// ellipsis; contracted pairwise as batched GEMMs plus sums over labels no one else needs).
// GCC 12 flags Eigen's AVX-512 double kernels (their _mm512_undefined operands) as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cstring>
#include <map>

#include "kernels/gemv.h"
#include "kernels/kernel_util.h"
#include "kernels/matmul_dnnl.h"
#include "kernels/quant.h"
#include "ops/matmul.h"

namespace npu {
namespace {

template <class T>
using RowMatT = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// One GEMM of rows [m0, m1): out = a * b.
template <class T>
void GemmBlock(const T* a, const T* b, T* out, int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t K, int64_t N) {
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<const RowMatT<T>> A(a + m0 * K, m1 - m0, K);
  Eigen::Map<const RowMatT<T>, 0, Stride> B(b + n0, K, n1 - n0, Stride(N));
  Eigen::Map<RowMatT<T>, 0, Stride> C(out + m0 * N + n0, m1 - m0, n1 - n0, Stride(N));
  C.noalias() = A * B;
}

}  // namespace

Status MatMulTensors(KernelContext& c, const Tensor& a0, const Tensor& b0, Tensor& out) {
  auto rs = MatMulShape(a0.shape(), b0.shape());
  if (!rs.ok()) return c.Fail(rs.status().reason());
  Shape a = a0.rank() == 1 ? Shape{1, a0.shape()[0]} : a0.shape();
  Shape b = b0.rank() == 1 ? Shape{b0.shape()[0], 1} : b0.shape();
  const int64_t M = a[a.size() - 2], K = a.back(), N = b.back();
  Shape abatch(a.begin(), a.end() - 2), bbatch(b.begin(), b.end() - 2);
  Shape batch = BroadcastShapes(abatch, bbatch).value();
  const int64_t nb = NumElements(batch);
  auto as = BroadcastStrides(abatch, batch), bs = BroadcastStrides(bbatch, batch);
  auto bst = Strides(batch);
  auto offset = [&](int64_t i, const std::vector<int64_t>& st) {
    int64_t o = 0;
    for (size_t d = 0; d < batch.size(); ++d) o += (i / bst[d]) % batch[d] * st[d];
    return o;
  };
  out = Tensor::Empty(a0.dtype(), rs.value());
  bool ok = DispatchAll(a0.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) return;
    else {
      const T* pa = a0.data<T>();
      const T* pb = b0.data<T>();
      T* po = out.mutable_data<T>();
      // Block [m0, m1) x [n0, n1) of product i.
      auto gemm = [&](int64_t i, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
        const T* ai = pa + offset(i, as) * M * K;
        const T* bi = pb + offset(i, bs) * K * N;
        T* oi = po + i * M * N;
        if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, int32_t>) {  // int32: a quantized MatMul
          GemmBlock(ai, bi, oi, m0, m1, n0, n1, K, N);
        } else {
          for (int64_t m = m0; m < m1; ++m)
            for (int64_t n = n0; n < n1; ++n) {
              T s = 0;
              for (int64_t k = 0; k < K; ++k) s += ai[m * K + k] * bi[k * N + n];
              oi[m * N + n] = s;
            }
        }
      };
      if (nb >= c.pool.size()) {
        c.pool.ParallelFor(static_cast<size_t>(nb), 1, [&](size_t s, size_t e) {
          for (size_t i = s; i < e; ++i) gemm(static_cast<int64_t>(i), 0, M, 0, N);
        });
      } else {
        // Each thread packs its share of the split operand and all of the other: split the larger side (a
        // transformer's weights are wider than its sequence is long), so the shared packing is the smaller one.
        bool by_cols = N > M;
        size_t extent = static_cast<size_t>(by_cols ? N : M);
        size_t grain = std::max<size_t>(by_cols ? 16 : 4, extent / c.pool.size());
        for (int64_t i = 0; i < nb; ++i)
          c.pool.ParallelFor(extent, grain, [&](size_t s, size_t e) {
            auto b0 = static_cast<int64_t>(s), b1 = static_cast<int64_t>(e);
            by_cols ? gemm(i, 0, M, b0, b1) : gemm(i, b0, b1, 0, N);
          });
      }
    }
  });
  if (!ok || a0.dtype() == DType::kBool || a0.dtype() != b0.dtype())
    return c.Fail("dtype " + std::string(DTypeName(a0.dtype())) + " x " + std::string(DTypeName(b0.dtype())) + " is not supported");
  return Status::Ok();
}

namespace {

Status MatMulKernel(KernelContext& c) {
  if (c.in(0).dtype() == DType::kI8) {  // int8 x int8 -> int32, exact (see ConvInt8 in conv.cc)
    if (c.in(1).dtype() != DType::kI8) return c.Fail("int8 A needs int8 B");
    NPU_ASSIGN_OR_RETURN(bool done, RunDnnlMatMul(c, c.in(0), c.in(1), false, nullptr, c.outputs[0]));
    if (!done) NPU_RETURN_IF_ERROR(MatMulTensors(c, CastTensor(c.in(0), DType::kI32), CastTensor(c.in(1), DType::kI32), c.outputs[0]));
    return ApplyFusedQuantization(c);
  }
  NPU_ASSIGN_OR_RETURN(bool done, RunRowProduct(c, c.in(0), c.in(1), false, nullptr, c.outputs[0]));
  if (done) return Status::Ok();
  NPU_ASSIGN_OR_RETURN(done, RunDnnlMatMul(c, c.in(0), c.in(1), false, nullptr, c.outputs[0]));
  if (done) return Status::Ok();
  NPU_ASSIGN_OR_RETURN(done, RunDnnlBatchedMatMul(c, c.in(0), c.in(1), c.outputs[0]));
  return done ? Status::Ok() : MatMulTensors(c, c.in(0), c.in(1), c.outputs[0]);
}

// MatMul + bias over the last dim: what MatMulBiasAddFusionPass makes of MatMul -> Add(const).
Status MatMulBiasKernel(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(bool done, RunRowProduct(c, c.in(0), c.in(1), false, &c.in(2), c.outputs[0]));
  if (done) return Status::Ok();
  NPU_ASSIGN_OR_RETURN(done, RunDnnlMatMul(c, c.in(0), c.in(1), false, &c.in(2), c.outputs[0]));
  if (done) return Status::Ok();
  NPU_RETURN_IF_ERROR(MatMulTensors(c, c.in(0), c.in(1), c.outputs[0]));
  Tensor& y = c.outputs[0];
  const Tensor& b = c.in(2);
  int64_t n = y.rank() ? y.shape().back() : 1;
  if (b.numel() != n || y.dtype() != b.dtype()) return c.Fail("the bias must hold one value per output column");
  DispatchFloat(y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* out = y.mutable_data<T>();
    const T* bias = b.data<T>();
    int64_t rows = y.numel() / std::max<int64_t>(1, n);
    c.pool.ParallelFor(static_cast<size_t>(rows), 64, [&](size_t r0, size_t r1) {
      for (size_t r = r0; r < r1; ++r)
        for (int64_t j = 0; j < n; ++j) out[static_cast<int64_t>(r) * n + j] += bias[j];
    });
  });
  return Status::Ok();
}

// A quantized Gemm (int8 A and B, an int32 bias): int32 products and sums, exact (see ConvInt8 in conv.cc).
Status GemmInt8(KernelContext& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  if (b.dtype() != DType::kI8) return c.Fail("int8 A needs int8 B");
  if (c.has(2) && c.in(2).dtype() != DType::kI32) return c.Fail("the bias of an int8 Gemm must be int32");
  if (c.node.attr_float("alpha", 1.f) != 1.f || c.node.attr_float("beta", 1.f) != 1.f) return c.Fail("an int8 Gemm takes alpha = beta = 1");
  if (a.rank() != 2 || b.rank() != 2) return c.Fail("A and B must be 2-D");
  if (!c.node.attr_int("transA", 0)) {
    NPU_ASSIGN_OR_RETURN(bool done, RunDnnlMatMul(c, a, b, c.node.attr_int("transB", 0) != 0, c.has(2) ? &c.in(2) : nullptr, c.outputs[0]));
    if (done) return ApplyFusedQuantization(c);
  }
  using MatI = Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Tensor a32 = CastTensor(a, DType::kI32), b32 = CastTensor(b, DType::kI32);
  Eigen::Map<const MatI> am(a32.data<int32_t>(), a.shape()[0], a.shape()[1]), bm(b32.data<int32_t>(), b.shape()[0], b.shape()[1]);
  // The transposes as expressions: Eigen's product packs its operands either way, where copies cost as much as the
  // product (resnet50's 2048 x 1000 classifier).
  auto times_b = [&](const auto& lhs) { return c.node.attr_int("transB", 0) ? MatI(lhs * bm.transpose()) : MatI(lhs * bm); };
  MatI y = c.node.attr_int("transA", 0) ? times_b(am.transpose()) : times_b(am);
  if (c.has(2)) {
    const Tensor& bias = c.in(2);
    if (bias.numel() != y.cols() && bias.numel() != 1) return c.Fail("the int32 bias must hold one value or one per output column");
    for (int64_t i = 0; i < y.rows(); ++i)
      for (int64_t j = 0; j < y.cols(); ++j) y(i, j) += bias.data<int32_t>()[bias.numel() == 1 ? 0 : j];
  }
  Tensor out = Tensor::Empty(DType::kI32, {y.rows(), y.cols()});
  std::copy(y.data(), y.data() + y.size(), out.mutable_data<int32_t>());
  c.outputs[0] = std::move(out);
  return ApplyFusedQuantization(c);
}

Status GemmKernel(KernelContext& c) {
  const Tensor &a = c.in(0), &b = c.in(1);
  if (a.dtype() == DType::kI8) return GemmInt8(c);
  if (a.dtype() != DType::kF32 && a.dtype() != DType::kF64) return c.Fail("Gemm supports float types only");
  if (a.rank() != 2 || b.rank() != 2) return c.Fail("A and B must be 2-D");
  bool ta = c.node.attr_int("transA", 0), tb = c.node.attr_int("transB", 0);
  float alpha = c.node.attr_float("alpha", 1.f), beta = c.node.attr_float("beta", 1.f);
  int64_t M = ta ? a.shape()[1] : a.shape()[0], K = ta ? a.shape()[0] : a.shape()[1];
  int64_t N = tb ? b.shape()[0] : b.shape()[1], Kb = tb ? b.shape()[1] : b.shape()[0];
  if (K != Kb) return c.Fail("inner dimensions differ: " + std::to_string(K) + " vs " + std::to_string(Kb));
  // A fully connected layer (no transA or alpha; C absent or a per-column bias added once) goes to our row product
  // (one row, weights of megabytes: gemv.h) or to oneDNN.
  const bool column_bias = c.has(2) && beta == 1.f && c.in(2).numel() == N && c.in(2).rank() >= 1 &&
                           c.in(2).rank() <= 2 && c.in(2).shape().back() == N;
  if (!ta && alpha == 1.f && (!c.has(2) || beta == 0.f || column_bias)) {
    const Tensor* bias = column_bias ? &c.in(2) : nullptr;
    NPU_ASSIGN_OR_RETURN(bool done, RunRowProduct(c, a, b, tb, bias, c.outputs[0]));
    if (done) return Status::Ok();
    NPU_ASSIGN_OR_RETURN(done, RunDnnlMatMul(c, a, b, tb, bias, c.outputs[0]));
    if (done) return Status::Ok();
  }
  Tensor y = Tensor::Empty(a.dtype(), {M, N});
  DispatchFloat(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using Map = Eigen::Map<const RowMatT<T>>;
    Map A(a.data<T>(), a.shape()[0], a.shape()[1]), B(b.data<T>(), b.shape()[0], b.shape()[1]);
    Eigen::Map<RowMatT<T>> Y(y.mutable_data<T>(), M, N);
    if (c.has(2) && beta != 0.f) {  // broadcast C into Y first
      const Tensor& C = c.in(2);
      auto st = BroadcastStrides(C.shape(), {M, N});
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) Y(i, j) = T(beta) * C.data<T>()[i * st[0] + j * st[1]];
    } else {
      Y.setZero();
    }
    // Split output columns across threads: the FC layers of CNNs have M = 1.
    int threads = c.pool.size();
    c.pool.ParallelFor(static_cast<size_t>(N), std::max<size_t>(16, static_cast<size_t>(N) / threads), [&](size_t s, size_t e) {
      auto cols = [&](auto&& m) { return m.middleCols(s, e - s); };
      auto rows = [&](auto&& m) { return m.middleRows(s, e - s); };
      if (!ta && !tb) cols(Y).noalias() += T(alpha) * A * cols(B);
      else if (!ta && tb) cols(Y).noalias() += T(alpha) * A * rows(B).transpose();
      else if (ta && !tb) cols(Y).noalias() += T(alpha) * A.transpose() * cols(B);
      else cols(Y).noalias() += T(alpha) * A.transpose() * rows(B).transpose();
    });
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ---- Einsum -------------------------------------------------------------------------------------

// The diagonal over repeated labels ("ii" -> "i"): labels become unique, in order of first appearance.
// Each output element reads the input at the offset whose repeated dims share one index, so the output's
// stride for a label is the sum of the input strides of its occurrences.
Tensor TakeDiagonal(const Tensor& x, std::string& labels) {
  std::string unique;
  for (char ch : labels)
    if (unique.find(ch) == std::string::npos) unique += ch;
  if (unique.size() == labels.size()) return x;
  std::vector<int64_t> in_strides = Strides(x.shape()), strides;
  Shape shape;
  for (char ch : unique) {
    int64_t stride = 0;
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == ch) stride += in_strides[i];
    shape.push_back(x.shape()[labels.find(ch)]);
    strides.push_back(stride);
  }
  Tensor out = Tensor::Empty(x.dtype(), shape);
  const size_t esz = DTypeSize(x.dtype());
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t o = 0, n = out.numel(); o < n; ++o) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) off += idx[d] * strides[d];
    std::memcpy(out.mutable_raw() + o * esz, x.raw() + off * esz, esz);
    for (size_t d = idx.size(); d-- > 0;) {  // next multi-index, last dim fastest
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  labels = unique;
  return out;
}

// Sums x over labels not in `keep`, returning the tensor with labels in `keep` order (a subset of labels).
Tensor SumOut(const Tensor& x, const std::string& labels, const std::string& keep, ThreadPool& pool, std::string& out_labels) {
  std::vector<int64_t> perm;
  std::string kept, summed;
  for (size_t i = 0; i < labels.size(); ++i)
    if (keep.find(labels[i]) != std::string::npos) perm.push_back(i), kept += labels[i];
  for (size_t i = 0; i < labels.size(); ++i)
    if (keep.find(labels[i]) == std::string::npos) perm.push_back(i), summed += labels[i];
  out_labels = kept;
  if (summed.empty()) return x;
  Tensor t = TransposeTensor(x, perm, pool);
  Shape ks;
  for (char ch : kept) ks.push_back(x.shape()[labels.find(ch)]);
  int64_t outer = NumElements(ks), inner = outer ? t.numel() / outer : 0;
  Tensor out = Tensor::Empty(x.dtype(), ks);
  DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>)
      for (int64_t o = 0; o < outer; ++o) {
        T s = 0;
        for (int64_t i = 0; i < inner; ++i) s += t.data<T>()[o * inner + i];
        out.mutable_data<T>()[o] = s;
      }
  });
  return out;
}

// Contracts two operands with unique labels into the labels `out` (each from either operand): labels in
// neither `out` nor the other operand are summed first, the rest becomes one batched GEMM.
Result<Tensor> Contract(KernelContext& c, const Tensor& a, const std::string& la0, const Tensor& b,
                        const std::string& lb0, const std::string& out) {
  std::string la, lb;
  Tensor A = SumOut(a, la0, out + lb0, c.pool, la);
  Tensor B = SumOut(b, lb0, out + la0, c.pool, lb);
  std::string batch, freeA, freeB, contr;
  for (char ch : la) {
    bool inB = lb.find(ch) != std::string::npos, inO = out.find(ch) != std::string::npos;
    (inB ? (inO ? batch : contr) : freeA) += ch;
  }
  for (char ch : lb)
    if (la.find(ch) == std::string::npos) freeB += ch;
  auto dim = [&](char ch) { auto p = la.find(ch); return p != std::string::npos ? A.shape()[p] : B.shape()[lb.find(ch)]; };
  for (char ch : batch + contr)
    if (A.shape()[la.find(ch)] != B.shape()[lb.find(ch)])
      return Status::Error("E10001", "Einsum node", c.node.name, std::string("label '") + ch + "' has different sizes");
  auto permute = [&](const Tensor& t, const std::string& from, const std::string& to) {
    std::vector<int64_t> perm;
    for (char ch : to) perm.push_back(static_cast<int64_t>(from.find(ch)));
    return TransposeTensor(t, perm, c.pool);
  };
  auto prod = [&](const std::string& l) { int64_t p = 1; for (char ch : l) p *= dim(ch); return p; };
  Tensor A3 = permute(A, la, batch + freeA + contr).Reshaped({prod(batch), prod(freeA), prod(contr)});
  Tensor B3 = permute(B, lb, batch + contr + freeB).Reshaped({prod(batch), prod(contr), prod(freeB)});
  Tensor R;
  NPU_RETURN_IF_ERROR(MatMulTensors(c, A3, B3, R));
  Shape rs;
  std::string rl = batch + freeA + freeB;
  for (char ch : rl) rs.push_back(dim(ch));
  return permute(R.Reshaped(rs), rl, out);
}

// Diagonals first, then operands contracted left to right; each intermediate keeps only the labels that
// the output or a later operand still needs.
Status EinsumKernel(KernelContext& c) {
  std::vector<const Tensor*> ins;
  for (auto& t : c.inputs) ins.push_back(&t);
  auto spec = ParseEinsum(c.node.attr_string("equation"), ins);
  if (!spec.ok()) return spec.status();
  EinsumSpec s = std::move(spec).value();
  std::vector<Tensor> ops;
  for (size_t k = 0; k < ins.size(); ++k) ops.push_back(TakeDiagonal(*ins[k], s.inputs[k]));
  if (ops.size() == 1) {
    std::string lab;
    Tensor r = SumOut(ops[0], s.inputs[0], s.output, c.pool, lab);
    std::vector<int64_t> perm;
    for (char ch : s.output) perm.push_back(static_cast<int64_t>(lab.find(ch)));
    c.outputs[0] = TransposeTensor(r, perm, c.pool);
    if (c.outputs[0].raw() == ins[0]->raw()) c.outputs[0] = c.outputs[0].Clone();
    return Status::Ok();
  }
  Tensor acc = ops[0];
  std::string acc_labels = s.inputs[0];
  for (size_t k = 1; k < ops.size(); ++k) {
    std::string keep = s.output;
    if (k + 1 < ops.size()) {
      std::string later = s.output;
      for (size_t j = k + 1; j < ops.size(); ++j) later += s.inputs[j];
      keep.clear();
      for (char ch : acc_labels + s.inputs[k])
        if (later.find(ch) != std::string::npos && keep.find(ch) == std::string::npos) keep += ch;
    }
    NPU_ASSIGN_OR_RETURN(acc, Contract(c, acc, acc_labels, ops[k], s.inputs[k], keep));
    acc_labels = keep;
  }
  c.outputs[0] = std::move(acc);
  return Status::Ok();
}

}  // namespace

void RegisterMatMulKernels() {
  RegisterKernel("MatMul", {.fn = MatMulKernel, .halves = Halves::kWiden});
  RegisterKernel("MatMulBias", {.fn = MatMulBiasKernel, .halves = Halves::kWiden});
  RegisterKernel("Gemm", {.fn = GemmKernel, .halves = Halves::kWiden});
  RegisterKernel("Einsum", {.fn = EinsumKernel, .halves = Halves::kWiden});
}

}  // namespace npu
