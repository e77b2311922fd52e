// Elementwise ops: activations and unary math, broadcasting binary arithmetic and comparisons,
// variadic Max/Min/Sum/Mean, Where, Clip and Cast.
// GCC 12 flags Eigen's AVX-512 erf and tanh (their _mm512_undefined operands) as uninitialized: false positives.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <cmath>
#include <unsupported/Eigen/SpecialFunctions>  // Array::erf, with SIMD for float
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"

namespace npu {
namespace {

// These kernels take the runtime's 16-bit rounding of their result (KernelContext::TakeChunkFinish) but leave a fused
// activation to its own pass (RunEpilogue): an activation with a vectorised form (Eigen's exp) gives bits that depend
// on where its chunks begin and end, and those are RunEpilogue's.
constexpr bool kTakeNoActivation = false;

// `finish` runs on each chunk of an fp32 result as soon as it is written.
template <class T, class R, class F>
void MapUnary(ThreadPool& pool, const T* in, R* out, int64_t n, F f, const ChunkFinish& finish = {}) {
  pool.ParallelFor(static_cast<size_t>(n), kElementwiseGrain, [&](size_t b, size_t e) {
    for (size_t i = b; i < e; ++i) out[i] = static_cast<R>(f(in[i]));
    if constexpr (std::is_same_v<R, float>)
      if (finish) finish({out + b, e - b}, b);
  });
}

// Runs out[i] = f(a[ia], b[ib]) over the broadcast of a and b; `finish` as in MapUnary. The work is the
// plan's rows, each cut into pieces of at least kElementwiseGrain elements: a same-shape or scalar operation is
// one row (a transformer's residual Add, its query scaling), which ran on one thread while the others waited.
template <class T, class R, class F>
void MapBinary(ThreadPool& pool, const Tensor& a, const Tensor& b, Tensor& out, F f, const ChunkFinish& finish = {}) {
  BroadcastPlan p = MakeBroadcastPlan({&a.shape(), &b.shape()}, out.shape());
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  R* po = out.mutable_data<R>();
  const int64_t inner = p.inner, sa = p.inner_stride[0], sb = p.inner_stride[1];
  const int64_t pieces = std::max<int64_t>(1, inner / kElementwiseGrain), piece = (inner + pieces - 1) / pieces;
  // Where piece q starts and ends in the output (a task finishes the run from its first piece to its last).
  auto begin = [&](int64_t q) { return q / pieces * inner + std::min(inner, q % pieces * piece); };
  auto end = [&](int64_t q) { return q / pieces * inner + std::min(inner, (q % pieces + 1) * piece); };
  size_t grain = static_cast<size_t>(std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, inner)));
  pool.ParallelFor(static_cast<size_t>(p.outer * pieces), grain, [&](size_t qb, size_t qe) {
    int64_t row = static_cast<int64_t>(qb) / pieces, at = static_cast<int64_t>(qb) % pieces;  // piece `at` of `row`
    BroadcastRowWalk rows(p, row);
    for (auto q = static_cast<int64_t>(qb); q < static_cast<int64_t>(qe); ++q, ++at) {
      if (at == pieces) at = 0, ++row, rows.Next();
      const int64_t i0 = at * piece, n = std::min(inner, i0 + piece) - i0;
      const T* x = pa + rows.offset(0) + i0 * sa;
      const T* y = pb + rows.offset(1) + i0 * sb;
      R* o = po + row * inner + i0;
      if (sa == 1 && sb == 1)
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(f(x[i], y[i]));
      else if (sa == 1)
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(f(x[i], y[0]));
      else if (sb == 1)
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(f(x[0], y[i]));
      else
        for (int64_t i = 0; i < n; ++i) o[i] = static_cast<R>(f(x[0], y[0]));
    }
    if constexpr (std::is_same_v<R, float>)
      if (finish) {
        const int64_t from = begin(static_cast<int64_t>(qb)), to = end(static_cast<int64_t>(qe) - 1);
        finish({po + from, static_cast<size_t>(to - from)}, static_cast<size_t>(from));
      }
  });
}

Status OutShape(KernelContext& c, const Tensor& a, const Tensor& b, Shape& out) {
  auto r = BroadcastShapes(a.shape(), b.shape());
  if (!r.ok()) return c.Fail(r.status().reason() + ": " + ShapeToString(a.shape()) + " vs " + ShapeToString(b.shape()));
  out = r.value();
  return Status::Ok();
}

// ---- unary --------------------------------------------------------------------------------------

enum class UnaryTypes { kFloat, kSigned, kAll };

// `make_bulk` (optional): given the node, the op as an Eigen array expression, run on fp32 chunks, for ops
// whose scalar libm call would dominate a model (the exp in Sigmoid and Swish): Eigen evaluates exp with SIMD
// (pexp, within 1-2 ulp of libm). Other dtypes take the scalar function.
struct NoBulk {  // no bulk form; callable only because clang checks the non-dependent calls in the discarded branch
  NoBulk operator()(const Node&) const { return {}; }
  template <class A>
  A operator()(const A& a) const { return a; }
};
using ArrayF = Eigen::Array<float, Eigen::Dynamic, 1>;
using InF = Eigen::Map<const ArrayF>;
using OutF = Eigen::Map<ArrayF>;

// A bulk form is an Eigen expression of its input, or (where the expression depends on the node, as Gelu's two
// forms do) writes its output itself: returning one ArrayF from either branch would evaluate into a temporary.
template <class Bulk>
void ApplyBulk(const Bulk& bulk, InF in, OutF out) {
  if constexpr (std::is_invocable_v<const Bulk&, InF, OutF>) bulk(in, out);
  else out = bulk(in);
}

template <UnaryTypes kTypes, class Make, class MakeBulk = NoBulk>
void RegisterUnary(const char* name, Make make, MakeBulk make_bulk = {}) {
  auto in_place = [make, make_bulk](const Node& n) -> InPlaceFn {
    return [f = make(n), bulk = make_bulk(n)](std::span<float> x) {
      if constexpr (!std::is_same_v<MakeBulk, NoBulk>) {
        const auto n = static_cast<Eigen::Index>(x.size());
        ApplyBulk(bulk, InF(x.data(), n), OutF(x.data(), n));  // coefficient-wise: in place is safe
      } else {
        for (float& v : x) v = static_cast<float>(f(v));
      }
    };
  };
  auto kernel = [make, make_bulk](KernelContext& c) {
    const Tensor& x = c.in(0);
    auto f = make(c.node);
    Tensor y = ResultOver(x);  // element for element
    bool supported = true;
    bool ok = DispatchAll(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      constexpr bool floating = std::is_floating_point_v<T>;
      constexpr bool is_signed = std::is_signed_v<T> && !std::is_same_v<T, bool>;
      if constexpr (!std::is_same_v<MakeBulk, NoBulk> && std::is_same_v<T, float>) {
        auto bulk = make_bulk(c.node);
        const float* in = x.data<float>();
        float* out = y.mutable_data<float>();
        const ChunkFinish finish = c.TakeChunkFinish(kTakeNoActivation);
        c.pool.ParallelFor(static_cast<size_t>(x.numel()), kElementwiseGrain, [&](size_t b, size_t e) {
          auto n = static_cast<Eigen::Index>(e - b);
          ApplyBulk(bulk, InF(in + b, n), OutF(out + b, n));
          if (finish) finish({out + b, e - b}, b);
        });
      } else if constexpr (floating || (kTypes == UnaryTypes::kSigned && is_signed) ||
                           (kTypes == UnaryTypes::kAll && !std::is_same_v<T, bool>)) {
        const ChunkFinish finish = std::is_same_v<T, float> ? c.TakeChunkFinish(kTakeNoActivation) : ChunkFinish{};
        MapUnary(c.pool, x.data<T>(), y.mutable_data<T>(), x.numel(), [&](T v) { return f(v); }, finish);
      } else {
        supported = false;
      }
    });
    if (!ok || !supported) {
      return c.Fail("dtype " + std::string(DTypeName(x.dtype())) + " is not supported");
    }
    c.outputs[0] = std::move(y);
    return Status::Ok();
  };
  // Elementwise: the result keeps the input's memory order.
  RegisterKernel(name, {.fn = kernel, .halves = Halves::kWiden, .channels_last = true, .in_place = in_place});
}

// The logistic ops' bulk forms (kernels/logistic.h), which write their output themselves.
auto SpanOf(InF x) { return std::span<const float>(x.data(), static_cast<size_t>(x.size())); }
auto SpanOf(OutF y) { return std::span<float>(y.data(), static_cast<size_t>(y.size())); }

void RegisterUnaryOps() {
  auto plain = [](auto fn) { return [fn](const Node&) { return fn; }; };
  RegisterUnary<UnaryTypes::kSigned>("Relu", plain([](auto x) { return x > 0 ? x : decltype(x)(0); }));
  RegisterUnary<UnaryTypes::kSigned>("Neg", plain([](auto x) { return -x; }));
  RegisterUnary<UnaryTypes::kAll>("Abs", plain([](auto x) {
    if constexpr (std::is_unsigned_v<decltype(x)>) return x;
    else return x < 0 ? decltype(x)(-x) : x;
  }));
  RegisterUnary<UnaryTypes::kSigned>("Sign", plain([](auto x) { return decltype(x)((x > 0) - (x < 0)); }));
  RegisterUnary<UnaryTypes::kFloat>("Sigmoid", plain([](auto x) { return 1 / (1 + std::exp(-x)); }),
                                    plain([](InF x, OutF y) { SigmoidValues(SpanOf(x), SpanOf(y)); }));
  // Swish, x * sigmoid(alpha * x) (ONNX opset 24; CANN's Swish op, attribute `scale`, as aclnnSwish documents
  // it), as GE and TF models carry it. torch's SiLU stays Sigmoid -> Mul: CANN documents no graph fusion of the
  // pair. At alpha 1 the fp32 arithmetic is the pair's (x * 1 is exact): the Sigmoid above, one multiply.
  RegisterUnary<UnaryTypes::kFloat>(
      "Swish",
      [](const Node& n) {
        double alpha = n.attr_float("alpha", 1.0f);
        return [alpha](auto x) { return x * (1 / (1 + std::exp(-decltype(x)(alpha * x)))); };
      },
      [](const Node& n) {
        float alpha = n.attr_float("alpha", 1.0f);
        return [alpha](InF x, OutF y) { SwishValues(SpanOf(x), SpanOf(y), alpha); };
      });
  // Tanh, Erf and Gelu on fp32 take Eigen's SIMD forms, rational approximations (measured over [-10, 10]
  // against double: erf within 5.5 ulp / 3.8e-7, tanh within 4.6 ulp / 2.7e-7): the scalar erff loop of Gelu
  // was 8% of BERT-base's samples.
  RegisterUnary<UnaryTypes::kFloat>("Tanh", plain([](auto x) { return std::tanh(x); }), plain([](const auto& x) { return x.tanh(); }));
  RegisterUnary<UnaryTypes::kFloat>("Erf", plain([](auto x) { return std::erf(x); }), plain([](const auto& x) { return x.erf(); }));
  // Gelu: the op GeluONNXFusionPass makes of the exported erf chain (Div-Erf-Add-Mul-Mul) or, with ONNX opset 20's
  // approximate="tanh", of the tanh chain (GPT-2's gelu_new). Node-dependent, as Swish: the form is an attribute.
  constexpr double kSqrt2OverPi = 0.7978845608028654, kCubeCoefficient = 0.044715;
  RegisterUnary<UnaryTypes::kFloat>(
      "Gelu",
      [](const Node& n) {
        const bool tanh_form = n.attr_string("approximate", "none") == "tanh";
        return [tanh_form](auto x) {
          using T = decltype(x);
          if (tanh_form) return T(0.5) * x * (1 + std::tanh(T(kSqrt2OverPi) * (x + T(kCubeCoefficient) * x * x * x)));
          return x * (std::erf(x * T(M_SQRT1_2)) + 1) * T(0.5);
        };
      },
      [](const Node& n) {
        const bool tanh_form = n.attr_string("approximate", "none") == "tanh";
        return [tanh_form](InF x, OutF y) {
          if (tanh_form) y = 0.5f * x * (1 + (float(kSqrt2OverPi) * (x + float(kCubeCoefficient) * x * x * x)).tanh());
          else y = x * ((x * float(M_SQRT1_2)).erf() + 1) * 0.5f;
        };
      });
  RegisterUnary<UnaryTypes::kFloat>("Sqrt", plain([](auto x) { return std::sqrt(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Exp", plain([](auto x) { return std::exp(x); }), plain([](const auto& x) { return x.exp(); }));
  RegisterUnary<UnaryTypes::kFloat>("Log", plain([](auto x) { return std::log(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Reciprocal", plain([](auto x) { return 1 / x; }));
  RegisterUnary<UnaryTypes::kFloat>("Floor", plain([](auto x) { return std::floor(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Ceil", plain([](auto x) { return std::ceil(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Round", plain([](auto x) { return std::nearbyint(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Sin", plain([](auto x) { return std::sin(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Cos", plain([](auto x) { return std::cos(x); }));
  RegisterUnary<UnaryTypes::kFloat>("Softsign", plain([](auto x) { return x / (1 + std::abs(x)); }));
  // log(1 + e^x) without overflow for large x.
  RegisterUnary<UnaryTypes::kFloat>("Softplus", plain([](auto x) {
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  }));
  RegisterUnary<UnaryTypes::kFloat>("HardSwish", plain([](auto x) {
    using T = decltype(x);
    return x * std::max(T(0), std::min(T(1), x / T(6) + T(0.5)));
  }));
  RegisterUnary<UnaryTypes::kFloat>("LeakyRelu", [](const Node& n) {
    double a = n.attr_float("alpha", 0.01f);
    return [a](auto x) { return x >= 0 ? x : decltype(x)(a * x); };
  });
  RegisterUnary<UnaryTypes::kFloat>("Elu", [](const Node& n) {
    double a = n.attr_float("alpha", 1.0f);
    return [a](auto x) { return x >= 0 ? x : decltype(x)(a * std::expm1(x)); };
  });
  RegisterUnary<UnaryTypes::kFloat>("Celu", [](const Node& n) {
    double a = n.attr_float("alpha", 1.0f);
    return [a](auto x) { return decltype(x)(std::max(0.0, double(x)) + std::min(0.0, a * std::expm1(x / a))); };
  });
  RegisterUnary<UnaryTypes::kFloat>("Selu", [](const Node& n) {
    double a = n.attr_float("alpha", 1.67326319217681884765625f);
    double g = n.attr_float("gamma", 1.05070102214813232421875f);
    return [a, g](auto x) { return decltype(x)(x > 0 ? g * x : g * a * std::expm1(x)); };
  });
  RegisterUnary<UnaryTypes::kFloat>("ThresholdedRelu", [](const Node& n) {
    double a = n.attr_float("alpha", 1.0f);
    return [a](auto x) { return x > a ? x : decltype(x)(0); };
  });
  RegisterUnary<UnaryTypes::kFloat>("HardSigmoid", [](const Node& n) {
    double a = n.attr_float("alpha", 0.2f), b = n.attr_float("beta", 0.5f);
    return [a, b](auto x) { return decltype(x)(std::max(0.0, std::min(1.0, a * x + b))); };
  });
}

// ---- binary -------------------------------------------------------------------------------------

// An operand of rank <= 4 with leading 1s added.
Shape AsRank4(const Tensor& t) {
  Shape s = t.shape();
  s.insert(s.begin(), 4 - s.size(), 1);
  return s;
}

// Whether an operand of a broadcasting op with a channels-last operand has an (N, H, W, C) view: a channels-last
// tensor, or one whose two memory orders agree.
bool HasNhwcView(const Tensor& t) { return t.rank() <= 4 && (t.channels_last || !OrdersDiffer(AsRank4(t))); }

// That view. By value: the view of a moved-in sole reference is itself the sole one, so a result may still go over
// it (ResultOver).
Tensor NhwcView(Tensor t) {
  const Shape s = AsRank4(t);
  return std::move(t).Reshaped({s[0], s[2], s[3], s[1]});
}

// `finish_output`: the result is the kernel's output 0, which may take the runtime's 16-bit rounding. a and b by
// value: the result goes over an operand of its shape that the caller moved in and nothing else holds (ResultOver).
template <UnaryTypes kTypes, class F>
Status BinaryKernel(KernelContext& c, Tensor a, Tensor b, F f, bool finish_output = false) {
  if (a.dtype() != b.dtype()) return c.Fail("input dtypes differ: " + std::string(DTypeName(a.dtype())) + " vs " + std::string(DTypeName(b.dtype())));
  Shape s;
  NPU_RETURN_IF_ERROR(OutShape(c, a, b, s));
  if (a.channels_last || b.channels_last) {
    // Channels-last operands broadcast as (N, H, W, C) views, so per-channel scales (SE blocks) and
    // same-shape sums (residuals, SiLU) need no conversion; any other mix computes channels-first.
    if (!HasNhwcView(a) || !HasNhwcView(b)) return BinaryKernel<kTypes>(c, ToChannelsFirst(a, c.pool), ToChannelsFirst(b, c.pool), f, finish_output);
    NPU_RETURN_IF_ERROR(BinaryKernel<kTypes>(c, NhwcView(std::move(a)), NhwcView(std::move(b)), f, finish_output));
    c.outputs[0] = std::move(c.outputs[0]).Reshaped(s);
    c.outputs[0].channels_last = OrdersDiffer(s);
    return Status::Ok();
  }
  // Over an operand of the result's shape (a residual add's; channels-first here, as the result): each element is
  // read before its own is written.
  Tensor out = a.shape() == s ? ResultOver(a) : b.shape() == s ? ResultOver(b) : Tensor::Empty(a.dtype(), s);
  bool supported = true;
  bool known = DispatchAll(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || (kTypes == UnaryTypes::kFloat && !std::is_floating_point_v<T>)) supported = false;
    else MapBinary<T, T>(c.pool, a, b, out, f, std::is_same_v<T, float> && finish_output ? c.TakeChunkFinish(kTakeNoActivation) : ChunkFinish{});
  });
  if (!known || !supported) return c.Fail("dtype " + std::string(DTypeName(a.dtype())) + " is not supported");
  c.outputs[0] = std::move(out);
  return Status::Ok();
}

template <UnaryTypes kTypes, class F>
void RegisterBinary(const char* name, F f) {
  RegisterKernel(name, {.fn = [f](KernelContext& c) { return BinaryKernel<kTypes>(c, std::move(c.inputs[0]), std::move(c.inputs[1]), f, /*finish_output=*/true); },
                        .halves = Halves::kWiden,
                        .channels_last = true});  // see BinaryKernel
}

// Variadic ops fold pairwise; broadcasting is associative for these.
template <class F>
void RegisterVariadic(const char* name, F f, bool mean = false) {
  auto kernel = [f, mean](KernelContext& c) {
    Tensor acc = c.in(0);
    for (size_t i = 1; i < c.inputs.size(); ++i) {
      NPU_RETURN_IF_ERROR(BinaryKernel<UnaryTypes::kAll>(c, std::move(acc), c.in(i), f));
      acc = std::move(c.outputs[0]);
    }
    if (mean) {
      Tensor out = Tensor::EmptyLike(acc.dtype(), acc);
      double k = static_cast<double>(c.inputs.size());
      if (!DispatchFloat(acc.dtype(), [&](auto tag) {
            using T = decltype(tag);
            MapUnary(c.pool, acc.data<T>(), out.mutable_data<T>(), acc.numel(), [k](T v) { return T(v / k); });
          }))
        return c.Fail("Mean supports float types only");
      acc = std::move(out);
    } else if (c.inputs.size() == 1) {
      acc = acc.Clone();
    }
    c.outputs[0] = std::move(acc);
    return Status::Ok();
  };
  RegisterKernel(name, {.fn = kernel, .halves = Halves::kWiden, .channels_last = true});  // pairwise BinaryKernel
}

// Comparison and logic ops produce bool.
template <bool kLogical, class F>
void RegisterCompare(const char* name, F f) {
  auto kernel = [f](KernelContext& c) {
    const Tensor &a = c.in(0), &b = c.in(1);
    if (a.dtype() != b.dtype()) return c.Fail("input dtypes differ");
    Shape s;
    NPU_RETURN_IF_ERROR(OutShape(c, a, b, s));
    Tensor out = Tensor::Empty(DType::kBool, s);
    bool ok = DispatchAll(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (kLogical) MapBinary<uint8_t, uint8_t>(c.pool, a, b, out, f);
      else MapBinary<T, bool>(c.pool, a, b, out, f);
    });
    if (!ok) return c.Fail("dtype not supported");
    c.outputs[0] = std::move(out);
    return Status::Ok();
  };
  RegisterKernel(name, {.fn = kernel, .halves = Halves::kWiden});
}

Status PowKernel(KernelContext& c) {
  const Tensor& a = c.in(0);
  const Tensor b = c.in(1).dtype() == a.dtype() ? c.in(1) : Tensor();
  Tensor exponent = b.defined() ? b : Tensor::Empty(DType::kF64, c.in(1).shape());
  if (!b.defined()) {
    auto v = c.in(1).ToDoubleVector();
    std::copy(v.begin(), v.end(), exponent.mutable_data<double>());
  }
  Shape s;
  NPU_RETURN_IF_ERROR(OutShape(c, a, exponent, s));
  Tensor out = Tensor::Empty(a.dtype(), s);
  bool ok = DispatchAll(a.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      if (exponent.dtype() == a.dtype()) {
        MapBinary<T, T>(c.pool, a, exponent, out, [](T x, T y) { return T(std::pow(double(x), double(y))); });
      } else {  // mixed dtypes: widen the base to double for the broadcast loop
        Tensor base = Tensor::Empty(DType::kF64, a.shape());
        for (int64_t i = 0; i < a.numel(); ++i) base.mutable_data<double>()[i] = double(a.data<T>()[i]);
        MapBinary<double, T>(c.pool, base, exponent, out, [](double x, double y) {
          if constexpr (std::is_floating_point_v<T>) return std::pow(x, y);
          else return std::round(std::pow(x, y));
        });
      }
    }
  });
  if (!ok) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(out);
  return Status::Ok();
}

Status PReluKernel(KernelContext& c) {
  return BinaryKernel<UnaryTypes::kSigned>(c, c.in(0), c.in(1), [](auto x, auto s) { return x < 0 ? decltype(x)(s * x) : x; });
}

Status WhereKernel(KernelContext& c) {
  const Tensor &cond = c.in(0), &x = c.in(1), &y = c.in(2);
  if (x.dtype() != y.dtype()) return c.Fail("X and Y dtypes differ");
  Shape s;
  NPU_RETURN_IF_ERROR(OutShape(c, cond, x, s));
  Tensor tmp = Tensor::Empty(DType::kBool, s);
  NPU_RETURN_IF_ERROR(OutShape(c, tmp, y, s));
  Tensor out = Tensor::Empty(x.dtype(), s);
  BroadcastPlan p = MakeBroadcastPlan({&cond.shape(), &x.shape(), &y.shape()}, s);
  const size_t es = DTypeSize(x.dtype());
  const uint8_t* pc = cond.data<uint8_t>();
  const int64_t inner = p.inner, sc = p.inner_stride[0], sx = p.inner_stride[1], sy = p.inner_stride[2];
  // Rows in parallel (a causal mask selects over every attention score); 4-byte values as a select that vectorises.
  size_t grain = static_cast<size_t>(std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(1, inner)));
  c.pool.ParallelFor(static_cast<size_t>(p.outer), grain, [&](size_t rb, size_t re) {
    BroadcastRowWalk rows(p, static_cast<int64_t>(rb));
    for (auto r = static_cast<int64_t>(rb); r < static_cast<int64_t>(re); ++r, rows.Next()) {
      const uint8_t* cr = pc + rows.offset(0);
      if (es == 4) {
        const auto* xr = reinterpret_cast<const uint32_t*>(x.raw()) + rows.offset(1);
        const auto* yr = reinterpret_cast<const uint32_t*>(y.raw()) + rows.offset(2);
        auto* o = reinterpret_cast<uint32_t*>(out.mutable_raw()) + r * inner;
        for (int64_t i = 0; i < inner; ++i) o[i] = cr[i * sc] ? xr[i * sx] : yr[i * sy];
        continue;
      }
      for (int64_t i = 0; i < inner; ++i) {
        const std::byte* src = cr[i * sc] ? x.raw() + (rows.offset(1) + i * sx) * es : y.raw() + (rows.offset(2) + i * sy) * es;
        std::memcpy(out.mutable_raw() + (r * inner + i) * es, src, es);
      }
    }
  });
  c.outputs[0] = std::move(out);
  return Status::Ok();
}

// Clip as a fused epilogue: fusion turns its bound inputs into the opset-6 attributes (passes/fusion.cc).
InPlaceFn ClipInPlace(const Node& n) {
  if (n.opset >= 11) return {};
  const float lo = n.attr_float("min", -3.402823e38f), hi = n.attr_float("max", 3.402823e38f);
  return [lo, hi](std::span<float> x) {
    const float l = lo, h = hi;  // locals: the closure's members could alias x as far as the compiler can tell
    for (float& v : x) {
      const float clipped = std::min(h, std::max(l, v));
      v = v != v ? v : clipped;  // NaN stays; a select, so the loop vectorises
    }
  };
}

Status ClipKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor y = Tensor::EmptyLike(x.dtype(), x);
  bool ok = DispatchAll(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
      if (c.node.opset < 11) {
        lo = static_cast<T>(c.node.attr_float("min", -3.402823e38f));
        hi = static_cast<T>(c.node.attr_float("max", 3.402823e38f));
      }
      if (c.has(1)) lo = c.in(1).data<T>()[0];
      if (c.has(2)) hi = c.in(2).data<T>()[0];
      // fp32 takes the runtime's 16-bit rounding in the same pass (a ReLU6 after a depthwise conv is a task).
      const ChunkFinish finish = std::is_same_v<T, float> ? c.TakeChunkFinish(kTakeNoActivation) : ChunkFinish{};
      MapUnary(c.pool, x.data<T>(), y.mutable_data<T>(), x.numel(), [lo, hi](T v) {
        const T clipped = std::min(hi, std::max(lo, v));
        if constexpr (std::is_floating_point_v<T>) return v != v ? v : clipped;  // NaN stays (a select: vectorises)
        else return clipped;
      }, finish);
    }
  });
  if (!ok) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status NotKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor y = Tensor::Empty(DType::kBool, x.shape());
  MapUnary(c.pool, x.data<uint8_t>(), y.mutable_data<uint8_t>(), x.numel(), [](uint8_t v) { return uint8_t(v == 0); });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// An fp32 tensor cast to the 16-bit dtype the runtime rounds the node's result to (KernelContext::round_output): its
// values rounded by the runtime's own rounding and held in fp32, as every computed 16-bit result is, so that the next
// kernel reads them without widening a 16-bit copy again: with force_fp16, shufflenet_v2_x0_5's input Cast and first
// conv took 0.029 + 0.177 ms, now 0.040 + 0.141 (per-task timer).
Tensor RoundedInF32(KernelContext& c) {
  const Tensor& x = c.in(0);
  Tensor y = ResultOver(x);
  MapUnary(c.pool, x.data<float>(), y.mutable_data<float>(), x.numel(), [](float v) { return v; }, c.TakeChunkFinish(kTakeNoActivation));
  return y;
}

}  // namespace

// Casts between any supported dtypes (fp16/bf16 through fp32). Shared with other families.
Tensor CastTensor(const Tensor& x, DType to) {
  if (x.dtype() == to) return x;
  Tensor src = ToF32(x);
  Tensor mid = Tensor::Empty(IsHalfLike(to) ? DType::kF32 : to, x.shape());
  DispatchAll(src.dtype(), [&](auto in_tag) {
    using I = decltype(in_tag);
    DispatchAll(mid.dtype(), [&](auto out_tag) {
      using O = decltype(out_tag);
      const I* s = src.data<I>();
      O* d = mid.mutable_data<O>();
      const int64_t n = src.numel();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<O, bool>) d[i] = s[i] != I(0);
        else if constexpr (std::is_floating_point_v<I> && !std::is_floating_point_v<O>)
          d[i] = std::isfinite(s[i]) ? static_cast<O>(s[i]) : O(0);  // NaN/inf to int is undefined in C++
        else d[i] = static_cast<O>(s[i]);
      }
    });
  });
  return FromF32(mid, to);
}

void RegisterElementwiseKernels() {
  RegisterUnaryOps();
  RegisterBinary<UnaryTypes::kAll>("Add", [](auto a, auto b) { return a + b; });
  RegisterBinary<UnaryTypes::kAll>("Sub", [](auto a, auto b) { return a - b; });
  RegisterBinary<UnaryTypes::kAll>("Mul", [](auto a, auto b) { return a * b; });
  RegisterBinary<UnaryTypes::kAll>("Div", [](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) return b == 0 ? decltype(a)(0) : decltype(a)(a / b);
    else return a / b;
  });
  RegisterKernel("Mod", {.fn = [](KernelContext& c) {
    bool fmod = c.node.attr_int("fmod", 0) != 0;  // fmod: sign of the dividend (C); else of the divisor (Python)
    return BinaryKernel<UnaryTypes::kAll>(c, c.in(0), c.in(1), [fmod](auto a, auto b) {
      using T = decltype(a);
      T r;
      if constexpr (std::is_integral_v<T>) {
        if (b == 0) return T(0);
        r = T(a % b);
      } else {
        r = T(std::fmod(a, b));
      }
      return (!fmod && r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
    });
  }, .halves = Halves::kWiden});
  RegisterKernel("Pow", {.fn = PowKernel, .halves = Halves::kWiden});
  RegisterKernel("PRelu", {.fn = PReluKernel, .halves = Halves::kWiden});
  RegisterVariadic("Max", [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<decltype(a)>::quiet_NaN();
    return std::max(a, b);
  });
  RegisterVariadic("Min", [](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<decltype(a)>::quiet_NaN();
    return std::min(a, b);
  });
  RegisterVariadic("Sum", [](auto a, auto b) { return decltype(a)(a + b); });
  RegisterVariadic("Mean", [](auto a, auto b) { return decltype(a)(a + b); }, /*mean=*/true);
  RegisterCompare<false>("Equal", [](auto a, auto b) { return a == b; });
  RegisterCompare<false>("Less", [](auto a, auto b) { return a < b; });
  RegisterCompare<false>("LessOrEqual", [](auto a, auto b) { return a <= b; });
  RegisterCompare<false>("Greater", [](auto a, auto b) { return a > b; });
  RegisterCompare<false>("GreaterOrEqual", [](auto a, auto b) { return a >= b; });
  RegisterCompare<true>("And", [](uint8_t a, uint8_t b) { return uint8_t(a && b); });
  RegisterCompare<true>("Or", [](uint8_t a, uint8_t b) { return uint8_t(a || b); });
  RegisterCompare<true>("Xor", [](uint8_t a, uint8_t b) { return uint8_t((a != 0) != (b != 0)); });
  RegisterKernel("Not", NotKernel);
  RegisterKernel("Where", [](KernelContext& ctx) { return WhereKernel(ctx); });
  // Elementwise (its bounds are scalars): keeps the input's order.
  RegisterKernel("Clip", {.fn = ClipKernel, .halves = Halves::kWiden, .channels_last = true, .in_place = ClipInPlace});

  RegisterKernel("Cast",
             [](KernelContext& c) {
               auto to = DTypeFromGe(static_cast<int32_t>(c.node.attr_int("to", 0)));
               if (!to) return c.Fail("unsupported target dtype");
               // Narrowing to fp16/bf16 goes through the context: it saturates or overflows as the SoC does.
               bool narrow = IsHalfLike(*to) && IsFloat(c.in(0).dtype()) && c.in(0).dtype() != *to;
               if (narrow && c.in(0).dtype() == DType::kF32 && c.round_output && c.options.round_output_to == *to) {
                 c.outputs[0] = RoundedInF32(c);
                 return Status::Ok();
               }
               // A Cast to the dtype the values already have (an fp16 result the runtime holds in fp32, cast to
               // fp32 at a net's output) shares their storage, as Identity does: a copy of lraspp's 1M-element output
               // was 4% of its force_fp16 time.
               c.outputs[0] = narrow ? c.Narrow(CastTensor(c.in(0), DType::kF32), *to) : CastTensor(c.in(0), *to);
               return Status::Ok();
             });
}

}  // namespace npu
