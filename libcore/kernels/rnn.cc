// LSTM, GRU and RNN (ONNX opsets 7-14) in fp32: every direction, sequence_lens, initial states, LSTM peepholes,
// input_forget and clip, GRU's linear_before_reset, opset 14's batch-first layout, and the activation lists.
// The input projection of all time steps is one product (X·Wᵀ on oneDNN's sgemm, in blocks of columns over the
// threads); each step then multiplies the state by Rᵀ, R's panels split over the threads (a bidirectional op
// instead runs its two directions at once). The results are the same on any number of threads.
// A 2-layer bidirectional LSTM (hidden 256, 200 steps) took 41 ms single-threaded with a scalar call per gate value,
// against ONNX Runtime's 8.6-11 ms; 8.7-10 ms so (docs/performance.md).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // Eigen's AVX-512 kernels, as in matmul.cc
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>

#include "kernels/gemm_tiles.h"
#include "kernels/kernel_util.h"
#include "kernels/logistic.h"
#include "ops/rnn.h"

namespace npu {
namespace {

using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Activation = std::function<float(float)>;

// Columns (gate units) of the input projection X·Wᵀ per task: fixed, so that every value's sums are the same on any
// number of threads, and each task reads only its rows of W.
constexpr int64_t kProjectionColumns = 128;
// Multiply-adds of one step's recurrent product below which it runs on the calling thread.
constexpr int64_t kParallelStepMacs = 1 << 16;
constexpr int64_t kDotLanes = 16;

// 16 fp32 lanes as one GCC vector (two registers without AVX-512): the loop below keeps its sums in registers,
// which GCC 12 does not do for an array of per-lane sums (it multiplied lane by lane and spilled the sums).
typedef float Lanes16 __attribute__((vector_size(kDotLanes * sizeof(float))));

// R's rows in panels of kPanelRows, each stored column by column: panel p holds R[p * kPanelRows + j][i] at
// (p * n + i) * kPanelRows + j, rows past R's end as zeros. A step's product reads each panel front to back into
// kPanelRows sums held in registers. Dot products of R's rows instead ended each 256-wide row in a horizontal sum
// that cost as much as its products: on one LSTM direction's 1024 x 256 R, 200 steps took 20 us per step against
// 13 us so (two directions at once, one per thread).
constexpr int64_t kPanelRows = 4 * kDotLanes;

std::vector<float> RowPanels(const float* r, int64_t rows, int64_t n) {
  const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
  std::vector<float> out(static_cast<size_t>(panels * n * kPanelRows), 0.f);
  for (int64_t q = 0; q < rows; ++q) {
    float* to = out.data() + (q / kPanelRows * n) * kPanelRows + q % kPanelRows;
    for (int64_t i = 0; i < n; ++i) to[i * kPanelRows] = r[q * n + i];
  }
  return out;
}

// Batch entries whose sums one pass over a panel keeps in registers: each load of R then feeds as many products.
// Four take 16 of AVX-512's 32 vector registers; with 16 (AVX2), where a Lanes16 is two, one entry fits.
#ifdef __AVX512F__
constexpr int64_t kEntriesAtOnce = 4;
#else
constexpr int64_t kEntriesAtOnce = 1;
#endif

// sums[e][j] = panel row j · state row e, for kEntries rows of the state (n floats each, `ld` apart). The sums are
// one flat array, copied out vector by vector in an unrolled loop: read back any other way (lane by lane, or as a
// 2-D array), GCC 12 kept them in memory and stored them at every step.
template <int64_t kEntries>
void PanelPass(const float* panel, int64_t n, const float* state, int64_t ld, float (*sums)[kPanelRows]) {
  constexpr int64_t kVectors = kPanelRows / kDotLanes;
  Lanes16 acc[kEntries * kVectors] = {};
  for (int64_t i = 0; i < n; ++i) {
#pragma GCC unroll 4
    for (int64_t e = 0; e < kEntries; ++e) {
      const Lanes16 xv = Lanes16{} + state[e * ld + i];
#pragma GCC unroll 4
      for (int64_t k = 0; k < kVectors; ++k) {
        Lanes16 rv;  // one load per vector: the entries' loads of it are the same expression, which GCC merges
        std::memcpy(&rv, panel + i * kPanelRows + k * kDotLanes, sizeof rv);
        acc[e * kVectors + k] += rv * xv;
      }
    }
  }
#pragma GCC unroll 16
  for (int64_t q = 0; q < kEntries * kVectors; ++q) std::memcpy(sums[q / kVectors] + q % kVectors * kDotLanes, &acc[q], sizeof acc[q]);
}

// hr (B, rows) = state (B, n) · Rᵀ for R's panels [p0, p1) (RowPanels of R's `rows` rows). Each value is the sum of
// its n products in order of i, whichever panels and batch entries it is computed with, on whichever thread.
void PanelProducts(const float* panels, const float* state, int64_t B, int64_t n, int64_t rows, int64_t p0, int64_t p1, float* hr) {
  float sums[kEntriesAtOnce][kPanelRows];
  for (int64_t p = p0; p < p1; ++p) {
    const float* panel = panels + p * n * kPanelRows;
    const int64_t q0 = p * kPanelRows, valid = std::min(kPanelRows, rows - q0);
    for (int64_t b = 0; b < B;) {  // the panel (64 KB at n = 256) stays in L2 across the batch
      const int64_t entries = B - b >= kEntriesAtOnce ? kEntriesAtOnce : 1;
      if (entries == kEntriesAtOnce) PanelPass<kEntriesAtOnce>(panel, n, state + b * n, n, sums);
      else PanelPass<1>(panel, n, state + b * n, n, sums);
      for (int64_t e = 0; e < entries; ++e) std::copy_n(sums[e], valid, hr + (b + e) * rows + q0);
      b += entries;
    }
  }
}

void TanhValues(std::span<const float> x, std::span<float> y) {
  const auto n = static_cast<Eigen::Index>(x.size());
  Eigen::Map<Eigen::ArrayXf>(y.data(), n) = Eigen::Map<const Eigen::ArrayXf>(x.data(), n).tanh();
}

// One activation by its ONNX name; `alpha`/`beta` take the next values of the node's lists when the function has them.
Result<Activation> MakeActivation(const std::string& name, const std::vector<float>& alphas, const std::vector<float>& betas,
                                  size_t& next_alpha, size_t& next_beta) {
  auto alpha = [&](float def) { return next_alpha < alphas.size() ? alphas[next_alpha++] : def; };
  auto beta = [&](float def) { return next_beta < betas.size() ? betas[next_beta++] : def; };
  if (name == "Sigmoid") return Activation([](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  if (name == "Tanh") return Activation([](float x) { return std::tanh(x); });
  if (name == "Relu") return Activation([](float x) { return std::max(x, 0.0f); });
  if (name == "Softsign") return Activation([](float x) { return x / (1 + std::abs(x)); });
  if (name == "Softplus") return Activation([](float x) { return std::log1p(std::exp(x)); });
  if (name == "LeakyRelu") {
    const float a = alpha(0.01f);
    return Activation([a](float x) { return x >= 0 ? x : a * x; });
  }
  if (name == "ThresholdedRelu") {
    const float a = alpha(1.0f);
    return Activation([a](float x) { return x > a ? x : 0.0f; });
  }
  if (name == "Elu") {
    const float a = alpha(1.0f);
    return Activation([a](float x) { return x >= 0 ? x : a * std::expm1(x); });
  }
  if (name == "HardSigmoid") {
    const float a = alpha(0.2f), b = beta(0.5f);
    return Activation([a, b](float x) { return std::clamp(a * x + b, 0.0f, 1.0f); });
  }
  if (name == "ScaledTanh") {
    const float a = alpha(1.0f), b = beta(1.0f);
    return Activation([a, b](float x) { return a * std::tanh(b * x); });
  }
  if (name == "Affine") {
    const float a = alpha(1.0f), b = beta(0.0f);
    return Activation([a, b](float x) { return a * x + b; });
  }
  return Status::Error("E10001", "activations", name, "not an activation LSTM, GRU or RNN take");
}

// The op's activations when the node names none, for one direction.
std::vector<std::string> DefaultActivationNames(const std::string& op_type) {
  if (op_type == "LSTM") return {"Sigmoid", "Tanh", "Tanh"};
  if (op_type == "GRU") return {"Sigmoid", "Tanh"};
  return {"Tanh"};
}

// The node's activations, `per_direction` for each direction (defaults: the op's own).
Result<std::vector<Activation>> Activations(const Node& n, size_t per_direction, size_t directions) {
  std::vector<std::string> names;
  if (auto it = n.attrs.find("activations"); it != n.attrs.end()) {
    const auto* list = std::get_if<std::vector<std::string>>(&it->second);
    if (!list) return Status::Error("E10001", n.op_type + " node", n.name, "activations must be a list of strings");
    names = *list;
  }
  if (names.empty()) {
    const std::vector<std::string> def = DefaultActivationNames(n.op_type);
    for (size_t d = 0; d < directions; ++d) names.insert(names.end(), def.begin(), def.end());
  }
  if (names.size() == per_direction && directions == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != per_direction * directions)
    return Status::Error("E10001", n.op_type + " node", n.name, std::to_string(names.size()) + " activations; " + n.op_type + " takes " +
                                                                    std::to_string(per_direction) + " per direction");
  const std::vector<float> alphas = n.attr_floats("activation_alpha"), betas = n.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const std::string& name : names) {
    NPU_ASSIGN_OR_RETURN(Activation f, MakeActivation(name, alphas, betas, next_alpha, next_beta));
    out.push_back(std::move(f));
  }
  return out;
}

// Whether the node runs its op's default activations (none given, or the defaults named for each direction).
bool DefaultActivations(const Node& n) {
  if (n.has_attr("activation_alpha") || n.has_attr("activation_beta")) return false;
  auto it = n.attrs.find("activations");
  if (it == n.attrs.end()) return true;
  const auto* list = std::get_if<std::vector<std::string>>(&it->second);
  if (!list) return false;
  const std::vector<std::string> def = DefaultActivationNames(n.op_type);
  if (list->empty()) return true;
  for (size_t i = 0; i < list->size(); ++i)
    if ((*list)[i] != def[i % def.size()]) return false;
  return list->size() % def.size() == 0;
}

// What one direction needs, its weights viewed in place: W (G·H, I), R (G·H, H), biases Wb, Rb (G·H each).
struct Direction {
  const float *w, *r, *wb = nullptr, *rb = nullptr, *p = nullptr;
  const float* r_panels;  // R as RowPanels
  bool reverse = false;
  const Activation* act;  // its activations, per_direction of them
};

// R of each direction as RowPanels, kept from run to run while R is the same tensor (a constant's is).
struct RnnPanels final : KernelState {
  Tensor r_from;  // held, so that its storage is not handed to another tensor meanwhile
  std::vector<std::vector<float>> per_direction;
};

struct RnnRun {
  const Node& node;
  ThreadPool& pool;
  RnnDims d;
  std::vector<int64_t> lens = {};  // per batch entry
  float clip = 0;             // 0: none
  bool input_forget = false, linear_before_reset = false;
  bool vector_gates = false;  // LSTM or GRU with its default activations and no clip: StepLstmVector, StepGruVector
  const float* x = nullptr;  // (seq, batch, input), time-major
  float* y = nullptr;        // (seq, dirs, batch, H), time-major

  float Clip(float v) const { return clip > 0 ? std::clamp(v, -clip, clip) : v; }

  // The time index batch entry b reads at step s, or -1 once its sequence has ended.
  int64_t TimeOf(const Direction& dir, int64_t s, int64_t b) const {
    const int64_t len = lens[static_cast<size_t>(b)];
    if (s >= len) return -1;
    return dir.reverse ? len - 1 - s : s;
  }

  void Run(const Direction& dir, int64_t k, float* h, float* c) const {
    const int64_t B = d.batch, H = d.hidden, G = d.gates, I = d.input, T = d.seq;
    // All steps' input projections at once: XW = X Wᵀ + Wb (+ Rb, but GRU's candidate keeps its Rb apart), in
    // blocks of columns over the threads.
    std::vector<float> bias(static_cast<size_t>(G * H));
    for (int64_t g = 0; g < G; ++g) {
      const bool candidate = node.op_type == "GRU" && g == 2;
      for (int64_t j = 0; j < H; ++j) bias[g * H + j] = (dir.wb ? dir.wb[g * H + j] : 0) + (dir.rb && !candidate ? dir.rb[g * H + j] : 0);
    }
    RowMat xw(T * B, G * H);
    const int64_t blocks = (G * H + kProjectionColumns - 1) / kProjectionColumns;
    pool.ParallelFor(static_cast<size_t>(blocks), 1, [&](size_t b0, size_t b1) {
      for (auto blk = static_cast<int64_t>(b0); blk < static_cast<int64_t>(b1); ++blk) {
        const int64_t col = blk * kProjectionColumns, cols = std::min(kProjectionColumns, G * H - col);
        SgemmOnThisThread(/*b_transposed=*/true, T * B, cols, I, x, I, dir.w + col * I, I, xw.data() + col, G * H);
        for (int64_t row = 0; row < T * B; ++row) {
          float* out = xw.data() + row * G * H + col;
          for (int64_t j = 0; j < cols; ++j) out[j] += bias[col + j];
        }
      }
    });
    Eigen::Map<RowMat> state(h, B, H);
    const auto r = Eigen::Map<const RowMat>(dir.r, G * H, H);
    const int64_t panel_count = (G * H + kPanelRows - 1) / kPanelRows;
    RowMat hr(B, G * H), reset_h = RowMat::Zero(B, H), candidate = RowMat::Zero(B, H);
    std::vector<float> gates(static_cast<size_t>(4 * H));  // StepLstmVector's and StepGruVector's scratch
    for (int64_t s = 0; s < T; ++s) {
      // hr = state · Rᵀ: R's panels split evenly over the threads, so each keeps its part of R in its cache from
      // step to step; the same sums on any number of threads (PanelProducts).
      auto recurrent = [&](size_t first, size_t end) {
        PanelProducts(dir.r_panels, h, B, H, G * H, static_cast<int64_t>(first), static_cast<int64_t>(end), hr.data());
      };
      if (B * G * H * H < kParallelStepMacs) recurrent(0, static_cast<size_t>(panel_count));
      else pool.SplitEvenly(static_cast<size_t>(panel_count), 1, recurrent);
      if (node.op_type == "GRU" && !linear_before_reset) {  // the candidate multiplies (r ⊙ H) by Rh: r first
        for (int64_t b = 0; b < B; ++b) {
          const int64_t t = TimeOf(dir, s, b);
          if (t < 0) continue;
          const float* xr = xw.data() + (t * B + b) * G * H;
          for (int64_t j = 0; j < H; ++j) reset_h(b, j) = dir.act[0](Clip(xr[H + j] + hr(b, H + j))) * state(b, j);
        }
        candidate.noalias() = reset_h * r.middleRows(2 * H, H).transpose();
      }
      for (int64_t b = 0; b < B; ++b) {
        const int64_t t = TimeOf(dir, s, b);
        if (t < 0) continue;
        const float* xr = xw.data() + (t * B + b) * G * H;
        const float* hrow = hr.data() + b * G * H;
        float* hb = h + b * H;
        if (vector_gates && node.op_type == "LSTM") StepLstmVector(dir, xr, hrow, hb, c + b * H, gates.data());
        else if (vector_gates) StepGruVector(dir, xr, hrow, candidate.data() + b * H, hb, gates.data());
        else if (node.op_type == "LSTM") StepLstm(dir, xr, hrow, hb, c + b * H);
        else if (node.op_type == "GRU") StepGru(dir, xr, hrow, candidate.data() + b * H, hb);
        else
          for (int64_t j = 0; j < H; ++j) hb[j] = dir.act[0](Clip(xr[j] + hrow[j]));
        std::copy(hb, hb + H, y + ((t * d.directions + k) * B + b) * H);
      }
    }
  }

  // Gates i, o, f, c (ONNX's order); peepholes P = (Pi, Po, Pf).
  void StepLstm(const Direction& dir, const float* xr, const float* hr, float* h, float* c) const {
    const int64_t H = d.hidden;
    for (int64_t j = 0; j < H; ++j) {
      const float pi = dir.p ? dir.p[j] : 0, po = dir.p ? dir.p[H + j] : 0, pf = dir.p ? dir.p[2 * H + j] : 0;
      const float i = dir.act[0](Clip(xr[j] + hr[j] + pi * c[j]));
      const float f = input_forget ? 1 - i : dir.act[0](Clip(xr[2 * H + j] + hr[2 * H + j] + pf * c[j]));
      const float g = dir.act[1](Clip(xr[3 * H + j] + hr[3 * H + j]));
      c[j] = f * c[j] + i * g;
      const float o = dir.act[0](Clip(xr[H + j] + hr[H + j] + po * c[j]));
      h[j] = o * dir.act[2](c[j]);
    }
  }

  // StepLstm with the default activations (Sigmoid, Tanh, Tanh) and no clip, a gate at a time over the hidden units:
  // the sigmoids and tanhs as vector passes rather than a call per value. `gates`: 4H floats of scratch.
  void StepLstmVector(const Direction& dir, const float* xr, const float* hr, float* h, float* c, float* gates) const {
    const int64_t H = d.hidden;
    const auto n = static_cast<size_t>(H);
    float *in = gates, *forget = gates + H, *cell = gates + 2 * H, *out = gates + 3 * H;
    for (int64_t j = 0; j < H; ++j) {
      in[j] = xr[j] + hr[j] + (dir.p ? dir.p[j] * c[j] : 0);
      forget[j] = xr[2 * H + j] + hr[2 * H + j] + (dir.p ? dir.p[2 * H + j] * c[j] : 0);
      cell[j] = xr[3 * H + j] + hr[3 * H + j];
    }
    SigmoidValues({in, n}, {in, n});
    if (input_forget)
      for (int64_t j = 0; j < H; ++j) forget[j] = 1 - in[j];
    else
      SigmoidValues({forget, n}, {forget, n});
    TanhValues({cell, n}, {cell, n});
    for (int64_t j = 0; j < H; ++j) {
      c[j] = forget[j] * c[j] + in[j] * cell[j];
      out[j] = xr[H + j] + hr[H + j] + (dir.p ? dir.p[H + j] * c[j] : 0);
    }
    SigmoidValues({out, n}, {out, n});
    TanhValues({c, n}, {cell, n});
    for (int64_t j = 0; j < H; ++j) h[j] = out[j] * cell[j];
  }

  // StepGru with the default activations (Sigmoid, Tanh) and no clip, as StepLstmVector. `gates`: 3H floats of scratch.
  void StepGruVector(const Direction& dir, const float* xr, const float* hr, const float* candidate, float* h, float* gates) const {
    const int64_t H = d.hidden;
    const auto n = static_cast<size_t>(H);
    float *update = gates, *reset = gates + H, *hidden = gates + 2 * H;
    for (int64_t j = 0; j < H; ++j) update[j] = xr[j] + hr[j];
    SigmoidValues({update, n}, {update, n});
    if (linear_before_reset) {
      for (int64_t j = 0; j < H; ++j) reset[j] = xr[H + j] + hr[H + j];
      SigmoidValues({reset, n}, {reset, n});
      for (int64_t j = 0; j < H; ++j) hidden[j] = xr[2 * H + j] + reset[j] * (hr[2 * H + j] + (dir.rb ? dir.rb[2 * H + j] : 0));
    } else {
      for (int64_t j = 0; j < H; ++j) hidden[j] = xr[2 * H + j] + candidate[j] + (dir.rb ? dir.rb[2 * H + j] : 0);
    }
    TanhValues({hidden, n}, {hidden, n});
    for (int64_t j = 0; j < H; ++j) h[j] = (1 - update[j]) * hidden[j] + update[j] * h[j];
  }

  // Gates z, r, h; `candidate` holds (r ⊙ H) Rhᵀ when the reset comes first (linear_before_reset = 0).
  void StepGru(const Direction& dir, const float* xr, const float* hr, const float* candidate, float* h) const {
    const int64_t H = d.hidden;
    for (int64_t j = 0; j < H; ++j) {
      const float z = dir.act[0](Clip(xr[j] + hr[j]));
      const float rbh = dir.rb ? dir.rb[2 * H + j] : 0;
      float pre;
      if (linear_before_reset) pre = xr[2 * H + j] + dir.act[0](Clip(xr[H + j] + hr[H + j])) * (hr[2 * H + j] + rbh);
      else pre = xr[2 * H + j] + candidate[j] + rbh;
      const float hh = dir.act[1](Clip(pre));
      h[j] = (1 - z) * hh + z * h[j];
    }
  }
};

// Tensor t (batch-first when `swap`) as time-major (seq, batch, rest...) floats.
Tensor TimeMajor(const Tensor& t, bool swap, ThreadPool& pool) {
  if (!swap) return t;
  std::vector<int64_t> perm = {1, 0};
  for (int64_t i = 2; i < t.rank(); ++i) perm.push_back(i);
  return TransposeTensor(t, perm, pool);
}

Status RnnKernel(KernelContext& c) {
  if (c.in(0).dtype() != DType::kF32) return c.Fail("dtype " + std::string(DTypeName(c.in(0).dtype())) + " is not supported (fp32, fp16, bf16)");
  NPU_ASSIGN_OR_RETURN(RnnDims d, RnnDimsOf(c.node, c.in(0).shape(), c.in(1).shape()));
  const bool lstm = c.node.op_type == "LSTM";
  const int64_t G = d.gates, H = d.hidden, B = d.batch, T = d.seq, D = d.directions;
  const size_t per_direction = lstm ? 3 : c.node.op_type == "GRU" ? 2 : 1;
  auto shape_is = [&](size_t i, Shape want, const char* what) -> Status {
    if (!c.has(i)) return Status::Ok();
    if (c.in(i).shape() != want) return c.Fail(std::string(what) + " must be " + ShapeToString(want) + ", not " + ShapeToString(c.in(i).shape()));
    return Status::Ok();
  };
  NPU_RETURN_IF_ERROR(shape_is(2, {D, G * H, H}, "R"));
  NPU_RETURN_IF_ERROR(shape_is(3, {D, 2 * G * H}, "B"));
  NPU_RETURN_IF_ERROR(shape_is(4, {B}, "sequence_lens"));
  const Shape state = RnnStateShape(d);
  NPU_RETURN_IF_ERROR(shape_is(5, state, "initial_h"));
  if (lstm) NPU_RETURN_IF_ERROR(shape_is(6, state, "initial_c"));
  if (lstm) NPU_RETURN_IF_ERROR(shape_is(7, {D, 3 * H}, "P"));
  for (size_t i : {1, 2, 3, 5, 6, 7})
    if (c.has(i) && c.in(i).dtype() != DType::kF32) return c.Fail("its float inputs must share X's dtype");
  NPU_ASSIGN_OR_RETURN(std::vector<Activation> acts, Activations(c.node, per_direction, static_cast<size_t>(D)));

  RnnRun run{.node = c.node, .pool = c.pool, .d = d};
  run.lens.assign(static_cast<size_t>(B), T);
  const std::vector<int64_t> lens = c.has(4) ? c.in(4).ToInt64Vector() : std::vector<int64_t>{};
  if (c.has(4))
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = lens[static_cast<size_t>(b)];
      if (len < 0 || len > T) return c.Fail("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) + " is outside 0.." + std::to_string(T));
      run.lens[static_cast<size_t>(b)] = len;
    }
  run.clip = c.node.attr_float("clip", 0.f);
  run.input_forget = c.node.attr_int("input_forget", 0) != 0;
  run.linear_before_reset = c.node.attr_int("linear_before_reset", 0) != 0;
  run.vector_gates = (lstm || c.node.op_type == "GRU") && run.clip <= 0 && DefaultActivations(c.node);
  const Tensor x = TimeMajor(c.in(0), d.batch_first, c.pool);
  run.x = x.data<float>();
  Tensor y = Tensor::Zeros(DType::kF32, {T, D, B, H}), yh = Tensor::Empty(DType::kF32, {D, B, H}), yc = Tensor::Empty(DType::kF32, {D, B, H});
  // Initial states, time-major order (directions, batch, hidden); zeros when absent.
  Tensor h0 = c.has(5) ? TimeMajor(c.in(5), d.batch_first, c.pool) : Tensor::Zeros(DType::kF32, {D, B, H});
  Tensor c0 = lstm && c.has(6) ? TimeMajor(c.in(6), d.batch_first, c.pool) : Tensor::Zeros(DType::kF32, {D, B, H});
  std::copy_n(h0.data<float>(), D * B * H, yh.mutable_data<float>());
  std::copy_n(c0.data<float>(), D * B * H, yc.mutable_data<float>());
  run.y = y.mutable_data<float>();
  const std::string direction = c.node.attr_string("direction", "forward");
  // The two directions of a bidirectional op at once, one per thread, where there are two: a direction's steps then
  // run without a parallel region each (its loops run inline on its thread), and its R stays in its core's cache.
  // Each direction computes the same values either way.
  std::unique_ptr<KernelState> local;
  bool fresh = false;
  auto* panels = TaskState<RnnPanels>(c.options.state, local, [&](const RnnPanels& kept) { return kept.r_from.raw() == c.in(2).raw(); }, fresh);
  if (fresh) {
    panels->r_from = c.in(2);
    panels->per_direction.resize(static_cast<size_t>(D));
  }
  auto run_direction = [&](int64_t k) {
    Direction dir;
    std::vector<float>& r_panels = panels->per_direction[static_cast<size_t>(k)];
    if (fresh) r_panels = RowPanels(c.in(2).data<float>() + k * G * H * H, G * H, H);  // each direction on its thread
    dir.r_panels = r_panels.data();
    dir.w = c.in(1).data<float>() + k * G * H * d.input;
    dir.r = c.in(2).data<float>() + k * G * H * H;
    if (c.has(3)) dir.wb = c.in(3).data<float>() + k * 2 * G * H, dir.rb = dir.wb + G * H;
    if (lstm && c.has(7)) dir.p = c.in(7).data<float>() + k * 3 * H;
    dir.reverse = direction == "reverse" || k == 1;
    dir.act = acts.data() + k * static_cast<int64_t>(per_direction);
    run.Run(dir, k, yh.mutable_data<float>() + k * B * H, yc.mutable_data<float>() + k * B * H);
  };
  if (D == 2 && c.pool.size() >= 2)
    c.pool.ParallelFor(2, 1, [&](size_t b, size_t e) {
      for (size_t k = b; k < e; ++k) run_direction(static_cast<int64_t>(k));
    });
  else
    for (int64_t k = 0; k < D; ++k) run_direction(k);
  auto layout = [&](Tensor t, std::vector<int64_t> perm) { return d.batch_first ? TransposeTensor(t, perm, c.pool) : t; };
  std::vector<Tensor> outs = {layout(y, {2, 0, 1, 3}), layout(yh, {1, 0, 2}), layout(yc, {1, 0, 2})};
  for (size_t i = 0; i < c.outputs.size() && i < outs.size(); ++i) c.outputs[i] = outs[i];
  return Status::Ok();
}

}  // namespace

void RegisterRnnKernels() {
  for (const char* op : {"LSTM", "GRU", "RNN"}) RegisterKernel(op, {.fn = RnnKernel, .halves = Halves::kWiden});
}

}  // namespace npu
