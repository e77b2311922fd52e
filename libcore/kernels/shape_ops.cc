// Data-movement and shape ops (their schemas and shape rules: ops/shape.cc). Most of them reduce to one strided copy (StridedCopy) with the right
// strides: Transpose permutes them, Slice offsets and scales them, Expand zeroes them. Output shapes are
// computed by the same functions in inference and in the kernel, so the two cannot disagree.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <random>

#include "kernels/channels_last.h"
#include "kernels/kernel_util.h"
#include "ops/shape.h"

namespace npu {
namespace {

// Copies one short run of bytes: a concatenation's (a DenseNet layer's 32 channels of a pixel are 128 bytes) or a
// strided copy's (an attention head's 32 values). There is one per row, so whole 64-byte blocks are copied inline
// rather than by a call per run (squeezenet1_1 and densenet121: 1-3% faster in interleaved runs).
void CopyRun(std::byte* dst, const std::byte* src, size_t bytes) {
  constexpr size_t kBlock = 64;
  size_t i = 0;
  for (; i + kBlock <= bytes; i += kBlock) {
    std::byte block[kBlock];
    std::memcpy(block, src + i, kBlock);  // fixed sizes: the compiler emits vector moves, not calls
    std::memcpy(dst + i, block, kBlock);
  }
  if (i < bytes) std::memcpy(dst + i, src + i, bytes - i);
}

// Runs up to this long go through CopyRun; longer ones through memcpy, which has its own large-copy paths.
constexpr size_t kShortRunBytes = 1024;

// A strided copy of fewer elements runs on the calling thread. A larger one is split in one even part per thread
// (ThreadPool::SplitEvenly) rather than dealt in chunks to whichever thread comes first: vit_b_16's head splits and
// merges (ConfusionTranspose, 61 per inference) took 3.7 instead of 4.1 ms in three interleaved runs, its merges of
// the heads 0.034 instead of 0.047 ms each (AVX-512, 2 threads).
constexpr int64_t kMinParallelCopy = 32768;

// A copy whose innermost output dim gathers (a source stride other than 1) while the dim before it is contiguous
// in the source: a batch of matrix transposes (a key's heads, [197, 2304] -> [12, 64, 197]; NCHW -> NHWC). Copied
// in kTile x kTile tiles, whose kTile source lines serve kTile^2 outputs (a row at a time touches a new line per
// element), 8 x 8 blocks of them in vector registers (TransposeRect). A model of one such Transpose, [197, 12,
// 64] -> [12, 64, 197]: 0.15 -> 0.10 ms per msame inference; inside vit_b_16, whose key comes from memory, the
// copy is bound by that and takes as long as before.
constexpr int64_t kTile = 16;

void CopyTransposedTiles(ThreadPool& pool, const BroadcastPlan& p, const std::byte* src, int64_t offset, std::byte* dst, size_t elem_bytes) {
  const auto es = static_cast<int64_t>(elem_bytes);
  const size_t n = p.out.size();
  const int64_t rows = p.out[n - 2], cols = p.out[n - 1], col_stride = p.in_strides[0][n - 1];
  const int64_t tiles = (rows + kTile - 1) / kTile, matrices = NumElements(p.out) / (rows * cols);
  const auto min_parallel = static_cast<size_t>(std::max<int64_t>(2, kMinParallelCopy / (kTile * cols)));
  pool.SplitEvenly(static_cast<size_t>(matrices * tiles), min_parallel, [&](size_t b, size_t e) {
    for (auto t = static_cast<int64_t>(b); t < static_cast<int64_t>(e); ++t) {
      const int64_t first_row = t / tiles * rows + t % tiles * kTile, height = std::min(kTile, rows - t % tiles * kTile);
      const std::byte* s = src + (offset + BroadcastRowWalk(p, first_row).offset(0)) * es;  // the tile's rows from s on
      std::byte* d = dst + first_row * cols * es;
      for (int64_t c0 = 0; c0 < cols; c0 += kTile)  // source rows c (col_stride apart) hold the tile's rows r side by side
        TransposeRect(s + c0 * col_stride * es, col_stride, d + c0 * es, cols, std::min(cols, c0 + kTile) - c0, height, es);
    }
  });
}

// dst[i] = src[offset + sum_d idx_d * strides[d]] for every index of out_shape (strides in elements). Dims of size 1
// are dropped and neighbours the source holds contiguously are merged, so the innermost run is as long as it can
// be; each task walks its rows with a BroadcastRowWalk rather than dividing out every row's index. (A
// transformer's head split is bound by memory either way: swin_t's [64, 49, 3, 3, 32] permutation took as long.)
void StridedCopy(ThreadPool& pool, const std::byte* src, int64_t offset, const std::vector<int64_t>& strides,
                 const Shape& out_shape, size_t es, std::byte* dst) {
  const int64_t total = NumElements(out_shape);
  if (total <= 0) return;
  BroadcastPlan p;  // one input: the source, its strides on the merged dims
  std::vector<int64_t>& steps = p.in_strides.emplace_back();
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    if (!p.out.empty() && steps.back() == strides[d] * out_shape[d]) {
      p.out.back() *= out_shape[d];
      steps.back() = strides[d];
    } else {
      p.out.push_back(out_shape[d]);
      steps.push_back(strides[d]);
    }
  }
  if (p.out.empty()) p.out = {1}, steps = {0};
  const int64_t inner = p.out.back(), inner_stride = steps.back(), rows = total / inner;
  const bool transposes = inner_stride != 1 && p.out.size() >= 2 && steps[steps.size() - 2] == 1;
  if (transposes && (es == 2 || es == 4 || es == 8)) return CopyTransposedTiles(pool, p, src, offset, dst, es);
  const size_t run_bytes = static_cast<size_t>(inner) * es;
  auto copy_rows = [&](size_t b, size_t e) {
    BroadcastRowWalk walk(p, static_cast<int64_t>(b));
    for (size_t row = b; row < e; ++row, walk.Next()) {
      std::byte* o = dst + row * run_bytes;
      const std::byte* in = src + (offset + walk.offset(0)) * static_cast<int64_t>(es);
      if (inner_stride == 1) {
        if (run_bytes <= kShortRunBytes) CopyRun(o, in, run_bytes);
        else std::memcpy(o, in, run_bytes);
      } else {
        const int64_t hop = inner_stride * static_cast<int64_t>(es);
        switch (es) {
          case 4: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 4, in + i * hop, 4); break;
          case 8: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 8, in + i * hop, 8); break;
          case 2: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * 2, in + i * hop, 2); break;
          default: for (int64_t i = 0; i < inner; ++i) std::memcpy(o + i * es, in + i * hop, es);
        }
      }
    }
  };
  pool.SplitEvenly(static_cast<size_t>(rows), static_cast<size_t>(std::max<int64_t>(2, kMinParallelCopy / std::max<int64_t>(1, inner))), copy_rows);
}

// Whether the elements StridedCopy would select are one run of the source, in order: the strides of every dim
// but size-1 ones are those of `shape` laid out row-major. Such a selection (q, k or v taken from a stacked qkv, a
// split along the outermost axis) can be a view of the source (Tensor::Part) instead of a copy.
bool OneRun(const std::vector<int64_t>& strides, const Shape& shape) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

// x's elements selected as StridedCopy selects them, as a tensor of `shape` (row-major in memory): a view when
// they are one run on an aligned start, else a copy.
Tensor Select(ThreadPool& pool, const Tensor& x, int64_t offset, const std::vector<int64_t>& strides, const Shape& memory_shape, Shape shape) {
  const size_t es = DTypeSize(x.dtype());
  if (OneRun(strides, memory_shape) && offset >= 0)
    if (Tensor part = x.Part(shape, static_cast<size_t>(offset) * es); part.defined()) return part;
  Tensor y = Tensor::Empty(x.dtype(), std::move(shape));
  StridedCopy(pool, x.raw(), offset, strides, memory_shape, es, y.mutable_raw());
  return y;
}

// ---- kernels ------------------------------------------------------------------------------------

Status ReshapeLike(KernelContext& c, Shape s) {
  c.outputs[0] = c.in(0).Reshaped(std::move(s));  // shares storage: no copy
  return Status::Ok();
}

Status ReshapeKernel(KernelContext& c) {
  std::vector<int64_t> target = c.node.opset < 5 ? c.node.attr_ints("shape") : c.in(1).ToInt64Vector();
  NPU_ASSIGN_OR_RETURN(Shape s, ReshapeShape(c.node, c.in(0).shape(), target));
  return ReshapeLike(c, s);
}

// A 4-D (N, C, H, W) tensor's dims in channels-last memory order, and where logical dim d sits among them.
constexpr int64_t kChannelsLastPosition[] = {0, 3, 1, 2};
constexpr int64_t kChannelsLastDim[] = {0, 2, 3, 1};  // the logical dim at each memory position
Shape ChannelsLastOrder(const Shape& s) { return {s[0], s[2], s[3], s[1]}; }

// A channels-last feature map is sliced in its own memory order (a channel range is a run of every pixel's
// channel vector), so a channel split such as ShuffleNet's keeps the order the convs around it want.
// What a Slice of x selects, in x's memory order: the first element, the strides and the shape.
Result<StridedSource> SliceSelection(const Node& node, std::span<const Tensor> inputs) {
  std::vector<const Tensor*> ins;
  for (auto& t : inputs) ins.push_back(t.defined() ? &t : nullptr);
  const Tensor& x = inputs[0];
  NPU_ASSIGN_OR_RETURN(SliceParams p, SliceFor(node, x.shape(), ins));
  const bool channels_last = x.channels_last && x.rank() == 4;
  const Shape ms = channels_last ? ChannelsLastOrder(x.shape()) : x.shape();
  auto st = Strides(ms);
  StridedSource sel{x, 0, std::vector<int64_t>(st.size()), Shape(st.size())};
  for (size_t m = 0; m < st.size(); ++m) {
    const size_t d = channels_last ? static_cast<size_t>(kChannelsLastDim[m]) : m;
    sel.offset += p.start[d] * st[m];
    sel.strides[m] = st[m] * p.step[d];
    sel.shape[m] = p.out[d];
  }
  return sel;
}

Status SliceKernel(KernelContext& c) {
  NPU_ASSIGN_OR_RETURN(StridedSource sel, SliceSelection(c.node, c.inputs));
  const Tensor& x = c.in(0);
  const bool channels_last = x.channels_last && x.rank() == 4;
  const Shape out = channels_last ? Shape{sel.shape[0], sel.shape[3], sel.shape[1], sel.shape[2]} : sel.shape;
  Tensor y = Select(c.pool, x, sel.offset, sel.strides, sel.shape, out);
  y.channels_last = channels_last && OrdersDiffer(out);
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// A Slice that would copy (its selection is not one run) of a plain tensor, as its reader may take it instead.
std::optional<StridedSource> SliceAsStridedView(const Node& node, std::span<const Tensor> inputs) {
  if (inputs.empty() || !inputs[0].defined() || (inputs[0].channels_last && inputs[0].rank() == 4)) return std::nullopt;
  auto sel = SliceSelection(node, inputs);
  if (!sel.ok() || OneRun(sel.value().strides, sel.value().shape)) return std::nullopt;
  return std::move(sel).value();
}

// Whether `perm` names each of `rank` dims.
bool PermFits(const std::vector<int64_t>& perm, size_t rank) {
  return perm.size() == rank && std::all_of(perm.begin(), perm.end(), [&](int64_t p) { return p >= 0 && p < static_cast<int64_t>(rank); });
}

// The elements of `src` in the order of a tensor of `shape` whose dim d walks src's dim perm[d], copied once.
Tensor CopyPermuted(const StridedSource& src, const std::vector<int64_t>& perm, Shape shape, ThreadPool& pool) {
  std::vector<int64_t> strides;
  for (int64_t p : perm) strides.push_back(src.strides[static_cast<size_t>(p)]);
  Tensor y = Tensor::Empty(src.base.dtype(), std::move(shape));
  StridedCopy(pool, src.base.raw(), src.offset, strides, y.shape(), DTypeSize(y.dtype()), y.mutable_raw());
  return y;
}

Tensor Materialize(const StridedSource& src, ThreadPool& pool) {
  std::vector<int64_t> identity(src.shape.size());
  for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
  return CopyPermuted(src, identity, src.shape, pool);
}

// A Transpose or ConfusionTranspose of a Slice the runtime left to it (KernelRunOptions::strided_input): one copy
// from the Slice's source instead of two (vit_b_16's q, k and v, sliced from the in-projection and split into heads).
// `reshape`: the shape its input is reshaped to before the transpose, or empty. False: the selection cannot be
// reshaped so without a copy.
bool TransposeSelection(KernelContext& c, const std::vector<int64_t>& reshape, const std::vector<int64_t>& perm, const Shape& out) {
  StridedSource src = *c.options.strided_input;
  if (!reshape.empty()) {
    auto strides = ReshapedStrides(src.shape, src.strides, reshape);
    if (!strides) return false;
    src.strides = std::move(*strides);
    src.shape = reshape;
  }
  if (!PermFits(perm, src.shape.size())) return false;  // the copy's own path reports it
  c.outputs[0] = CopyPermuted(src, perm, out, c.pool);
  return true;
}

// ShuffleChannel: output channel a*g + b is input channel b*(C/g) + a. Channels-last, each pixel's channel vector
// is transposed as a g x C/g matrix; channels-first, each output plane is one input plane.
Status ShuffleChannelKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  const int64_t group = c.node.attr_int("group", 1), C = x.shape()[1], per = C / group;
  const size_t es = DTypeSize(x.dtype());
  Tensor y = Tensor::Empty(x.dtype(), x.shape());
  const std::byte* in = x.raw();
  std::byte* out = y.mutable_raw();
  if (x.channels_last && x.rank() == 4) {
    // Each pixel's channel vector is a group x per matrix (channel b * per + a), shuffled into its transpose
    // (channel a * group + b): shufflenet's group of 2 is a vectorised interleave of the two halves.
    const int64_t pixels = x.numel() / std::max<int64_t>(C, 1);
    TransposeMatrices(in, out, es, pixels, group, per, c.pool);
    y.channels_last = true;
  } else {
    const int64_t N = x.shape()[0], plane = x.numel() / std::max<int64_t>(N * C, 1);
    const size_t bytes = static_cast<size_t>(plane) * es;
    c.pool.ParallelFor(static_cast<size_t>(N * C), 1, [&](size_t b, size_t e) {
      for (size_t i = b; i < e; ++i) {
        const int64_t n = static_cast<int64_t>(i) / C, o = static_cast<int64_t>(i) % C;
        const int64_t from = o % group * per + o / group;  // o = a * group + b reads b * per + a
        std::memcpy(out + i * bytes, in + (n * C + from) * bytes, bytes);
      }
    });
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// Concat in memory order: the output is `outer` rows, each the inputs' runs one after another. Feature maps that
// come channels-last (a conv's) are concatenated as they are, on the axis's place in that order, so an Inception
// or DenseNet block never converts its branches' layouts; each output row is written once, front to back.
Status ConcatKernel(KernelContext& c) {
  std::vector<const Shape*> shapes;
  for (auto& t : c.inputs) shapes.push_back(&t.shape());
  NPU_ASSIGN_OR_RETURN(Shape os, ConcatShape(c.node, shapes));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), static_cast<int64_t>(os.size()));
  const bool channels_last = os.size() == 4 && std::any_of(c.inputs.begin(), c.inputs.end(), [](const Tensor& t) { return t.channels_last; });
  for (Tensor& t : c.inputs) t = channels_last ? ToChannelsLast(t, c.pool) : t;
  auto memory_shape = [&](const Shape& s) { return channels_last ? ChannelsLastOrder(s) : s; };
  const Shape ms = memory_shape(os);
  const int64_t maxis = channels_last ? kChannelsLastPosition[axis] : axis;
  const size_t es = DTypeSize(c.in(0).dtype());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < maxis; ++d) outer *= ms[d];
  for (size_t d = maxis + 1; d < ms.size(); ++d) inner *= ms[d];
  Tensor y = Tensor::Empty(c.in(0).dtype(), os);
  y.channels_last = channels_last && OrdersDiffer(os);
  std::vector<std::pair<const std::byte*, size_t>> runs;  // per input: its bytes and its run per output row
  for (const Tensor& t : c.inputs) {
    if (t.dtype() != y.dtype()) return c.Fail("inputs differ in dtype");
    runs.emplace_back(t.raw(), static_cast<size_t>(memory_shape(t.shape())[maxis] * inner) * es);
  }
  const size_t out_row = static_cast<size_t>(ms[maxis] * inner) * es;
  std::byte* out = y.mutable_raw();
  c.pool.ParallelFor(static_cast<size_t>(outer), std::max<size_t>(1, kElementwiseGrain / std::max<size_t>(out_row, 1)), [&](size_t b, size_t e) {
    for (size_t o = b; o < e; ++o) {
      std::byte* dst = out + o * out_row;
      for (const auto& [src, run] : runs) {
        CopyRun(dst, src + o * run, run);
        dst += run;
      }
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status SplitKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(auto sizes, SplitSizes(c.node, x.shape(), c.has(1) ? &c.in(1) : nullptr, c.outputs.size()));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), x.rank());
  auto st = Strides(x.shape());
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    Shape os = x.shape();
    os[axis] = sizes[k];
    c.outputs[k] = Select(c.pool, x, start * st[axis], st, os, os);
    start += sizes[k];
  }
  return Status::Ok();
}

Status GatherKernel(KernelContext& c) {
  const Tensor &x = c.in(0), &idx = c.in(1);
  NPU_ASSIGN_OR_RETURN(Shape os, GatherShape(c.node, x.shape(), idx.shape()));
  int64_t axis = NormalizeAxis(c.node.attr_int("axis", 0), x.rank());
  int64_t outer = 1, inner = 1, dim = x.shape()[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.shape()[d];
  auto ids = idx.ToInt64Vector();
  for (auto& i : ids) {
    if (i < -dim || i >= dim) return c.Fault("index " + std::to_string(i) + " out of range [" + std::to_string(-dim) + ", " + std::to_string(dim) + ")");
    if (i < 0) i += dim;
  }
  const size_t es = DTypeSize(x.dtype()), block = static_cast<size_t>(inner) * es;
  if (outer == 1 && ids.size() == 1)  // one slab of x (Swin's q, k and v from its stacked qkv): a view where aligned
    if (Tensor part = x.Part(os, static_cast<size_t>(ids[0]) * block); part.defined()) {
      c.outputs[0] = std::move(part);
      return Status::Ok();
    }
  Tensor y = Tensor::Empty(x.dtype(), os);
  std::byte* out = y.mutable_raw();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : ids) {
      std::memcpy(out, x.raw() + (o * dim + i) * block, block);
      out += block;
    }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// ScatterND (opset 11, and 16/18's reduction): a copy of data with each index tuple's slice replaced by, or
// reduced with, its row of updates, in index order. Every index is checked against its axis first.
enum class ScatterReduce { kAdd, kMul, kMax, kMin };

template <class T>
void ReduceSlice(T* dst, const T* src, int64_t n, ScatterReduce how) {
  switch (how) {
    case ScatterReduce::kAdd: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] + src[i]); break;
    case ScatterReduce::kMul: for (int64_t i = 0; i < n; ++i) dst[i] = static_cast<T>(dst[i] * src[i]); break;
    case ScatterReduce::kMax: for (int64_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]); break;
    case ScatterReduce::kMin: for (int64_t i = 0; i < n; ++i) dst[i] = std::min(dst[i], src[i]); break;
  }
}

Status ScatterNDKernel(KernelContext& c) {
  const Tensor &data = c.in(0), &idx = c.in(1), &upd = c.in(2);
  const std::string how = c.node.attr_string("reduction", "none");
  if (how != "none" && how != "add" && how != "mul" && how != "max" && how != "min")
    return c.Fail("reduction '" + how + "' is not none, add, mul, max or min");
  if (idx.rank() == 0 || idx.shape().back() > data.rank()) return c.Fail("the last axis of indices must be at most the rank of data");
  if (upd.dtype() != data.dtype()) return c.Fail("updates must have the dtype of data");
  const int64_t k = idx.shape().back();
  int64_t tuples = 1;
  for (int64_t d = 0; d + 1 < idx.rank(); ++d) tuples *= idx.shape()[d];
  int64_t slice = 1;
  for (int64_t d = k; d < data.rank(); ++d) slice *= data.shape()[d];
  if (upd.numel() != tuples * slice) return c.Fail("updates must have the shape indices.shape[:-1] + data.shape[k:]");
  const auto ids = idx.ToInt64Vector();
  const auto st = Strides(data.shape());
  std::vector<int64_t> offsets(static_cast<size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t i = ids[static_cast<size_t>(t * k + j)], dim = data.shape()[j];
      if (i < -dim || i >= dim) return c.Fault("index " + std::to_string(i) + " out of range [" + std::to_string(-dim) + ", " + std::to_string(dim) + ") on axis " + std::to_string(j));
      off += (i < 0 ? i + dim : i) * st[j];
    }
    offsets[static_cast<size_t>(t)] = off;
  }
  Tensor y = data.Clone();
  const size_t es = DTypeSize(data.dtype());
  if (how == "none") {
    for (int64_t t = 0; t < tuples; ++t)
      std::memcpy(y.mutable_raw() + offsets[static_cast<size_t>(t)] * es, upd.raw() + t * slice * es, static_cast<size_t>(slice) * es);
  } else {
    const ScatterReduce op = how == "add" ? ScatterReduce::kAdd : how == "mul" ? ScatterReduce::kMul : how == "max" ? ScatterReduce::kMax : ScatterReduce::kMin;
    bool known = DispatchAll(data.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool>)
        for (int64_t t = 0; t < tuples; ++t)
          ReduceSlice(y.mutable_data<T>() + offsets[static_cast<size_t>(t)], upd.data<T>() + t * slice, slice, op);
    });
    if (!known || data.dtype() == DType::kBool) return c.Fail("reduction on dtype " + std::string(DTypeName(data.dtype())) + " is not supported");
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status ExpandKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(Shape os, BroadcastShapes(x.shape(), c.in(1).ToInt64Vector()));
  Tensor y = Tensor::Empty(x.dtype(), os);
  StridedCopy(c.pool, x.raw(), 0, BroadcastStrides(x.shape(), os), os, DTypeSize(x.dtype()), y.mutable_raw());
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status TileKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  auto reps = c.in(1).ToInt64Vector();
  if (static_cast<int64_t>(reps.size()) != x.rank()) return c.Fail("repeats length must equal the input rank");
  // Tile = expand a [1, d0, 1, d1, ...]-shaped view to [r0, d0, r1, d1, ...], then reshape.
  Shape view, big, os;
  for (int64_t d = 0; d < x.rank(); ++d) {
    view.insert(view.end(), {1, x.shape()[d]});
    big.insert(big.end(), {reps[d], x.shape()[d]});
    os.push_back(reps[d] * x.shape()[d]);
  }
  Tensor y = Tensor::Empty(x.dtype(), big);
  StridedCopy(c.pool, x.raw(), 0, BroadcastStrides(view, big), big, DTypeSize(x.dtype()), y.mutable_raw());
  c.outputs[0] = y.Reshaped(os);
  return Status::Ok();
}

// Constant padding by rows: the output is filled where the input does not land, and each input row along the last
// axis lands with one copy (negative pads crop). Swin's window padding and torch's F.pad go through here.
void PadConstant(ThreadPool& pool, const Tensor& x, const PadParams& p, const std::vector<std::byte>& fill, Tensor& y) {
  const Shape &is = x.shape(), &os = y.shape();
  const size_t es = fill.size(), rank = is.size();
  if (y.numel() == 0) return;
  const bool zero_fill = std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; });
  const bool pads = std::any_of(p.begin.begin(), p.begin.end(), [](int64_t v) { return v > 0; }) ||
                    std::any_of(p.end.begin(), p.end.end(), [](int64_t v) { return v > 0; });
  std::byte* out = y.mutable_raw();
  if (pads) {  // fill everything first: simpler than the borders of every axis, and one streaming pass
    if (zero_fill) std::memset(out, 0, y.nbytes());
    else
      for (int64_t i = 0; i < y.numel(); ++i) std::memcpy(out + i * es, fill.data(), es);
  }
  if (x.numel() == 0) return;
  const int64_t last = rank ? is[rank - 1] : 1, rows = x.numel() / last;
  const int64_t lb = rank ? p.begin[rank - 1] : 0, olast = rank ? os[rank - 1] : 1;
  const int64_t src0 = std::max<int64_t>(0, -lb), dst0 = std::max<int64_t>(0, lb);
  const int64_t len = std::min(last, olast - lb) - src0;
  if (len <= 0) return;
  const auto ost = Strides(os);
  pool.ParallelFor(static_cast<size_t>(rows), 64, [&](size_t b, size_t e) {
    for (size_t r = b; r < e; ++r) {
      int64_t rest = static_cast<int64_t>(r), dst = 0;
      bool lands = true;
      for (size_t d = rank > 0 ? rank - 1 : 0; d-- > 0;) {  // the row's index on every axis but the last, innermost first
        const int64_t i = rest % is[d] + p.begin[d];
        rest /= is[d];
        if (i < 0 || i >= os[d]) { lands = false; break; }
        dst += i * ost[d];
      }
      if (lands) std::memcpy(out + (dst + dst0) * es, x.raw() + (static_cast<int64_t>(r) * last + src0) * es, static_cast<size_t>(len) * es);
    }
  });
}

Status PadKernel(KernelContext& c) {
  const Tensor& x = c.in(0);
  NPU_ASSIGN_OR_RETURN(PadParams p, PadFor(c.node, x.shape(), c.has(1) ? &c.in(1) : nullptr, c.has(3) ? &c.in(3) : nullptr));
  std::string mode = c.node.attr_string("mode", "constant");
  Shape os = x.shape();
  for (size_t d = 0; d < os.size(); ++d) {
    os[d] += p.begin[d] + p.end[d];
    if (os[d] < 0) return c.Fail("negative padded size");
    if (mode != "constant" && x.shape()[d] == 0 && os[d] > 0) return c.Fail(mode + " padding of an empty axis");
  }
  const auto none = [](int64_t pad) { return pad == 0; };
  if (std::all_of(p.begin.begin(), p.begin.end(), none) && std::all_of(p.end.begin(), p.end.end(), none)) {
    c.outputs[0] = x;  // nothing added or cut (Swin pads its maps to whole windows, which they already are): no copy
    return Status::Ok();
  }
  const size_t es = DTypeSize(x.dtype());
  Tensor y = Tensor::Empty(x.dtype(), os);
  // Constant fill value: input 2 (opset 11+) or attribute `value`.
  std::vector<std::byte> fill(es);
  if (c.has(2)) std::memcpy(fill.data(), c.in(2).raw(), es);
  else if (float v = c.node.attr_float("value", 0.f); v != 0.f) {
    Tensor f = CastTensor(Tensor::View(DType::kF32, {}, nullptr, &v), x.dtype());
    std::memcpy(fill.data(), f.raw(), es);
  }
  if (mode == "constant") {
    PadConstant(c.pool, x, p, fill, y);
    c.outputs[0] = std::move(y);
    return Status::Ok();
  }
  auto ost = Strides(os), ist = Strides(x.shape());
  const int64_t total = y.numel();
  c.pool.ParallelFor(static_cast<size_t>(total), 4096, [&](size_t b, size_t e) {
    for (size_t o = b; o < e; ++o) {
      int64_t src = 0;
      bool inside = true;
      for (size_t d = 0; d < os.size(); ++d) {
        int64_t i = static_cast<int64_t>(o) / ost[d] % os[d] - p.begin[d], n = x.shape()[d];
        if (i < 0 || i >= n) {
          if (mode == "constant") { inside = false; break; }
          if (mode == "edge") i = i < 0 ? 0 : n - 1;
          else {  // reflect, without repeating the edge
            int64_t period = 2 * (n - 1);
            if (period == 0) i = 0;
            else {
              i = ((i % period) + period) % period;
              if (i >= n) i = period - i;
            }
          }
        }
        src += i * ist[d];
      }
      std::memcpy(y.mutable_raw() + o * es, inside ? x.raw() + src * es : fill.data(), es);
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// SpaceToBatchND / BatchToSpaceND (NHWC, two block dims): batch (i0 * b1 + i1) * N + n of the blocked tensor
// holds pixels (h * b0 + i0, w * b1 + i1) of image n, padded (to batch) or before the crop (to space). Each
// pixel's channel row moves as one copy; a padding pixel is zeros.
Status BlockBatchKernel(KernelContext& c, bool to_batch) {
  const Tensor& x = c.in(0);
  const auto b = c.node.attr_ints("block_shape"), p = c.node.attr_ints(to_batch ? "paddings" : "crops");
  if (x.rank() != 4 || b.size() != 2 || p.size() != 4) return c.Fail("needs a 4-D NHWC input, 2 block sizes and 4 paddings or crops");
  const Shape& s = x.shape();
  const int64_t blocks = b[0] * b[1], C = s[3];
  const Shape out = to_batch ? Shape{s[0] * blocks, (s[1] + p[0] + p[1]) / b[0], (s[2] + p[2] + p[3]) / b[1], C}
                             : Shape{s[0] / blocks, s[1] * b[0] - p[0] - p[1], s[2] * b[1] - p[2] - p[3], C};
  Tensor y = to_batch ? Tensor::Zeros(x.dtype(), out) : Tensor::Empty(x.dtype(), out);  // every image pixel is written
  const size_t row = static_cast<size_t>(C) * DTypeSize(x.dtype());
  const int64_t images = to_batch ? s[0] : out[0];
  const int64_t H = to_batch ? out[1] : s[1], W = to_batch ? out[2] : s[2];  // the blocked tensor's
  const int64_t img_h = to_batch ? s[1] : out[1], img_w = to_batch ? s[2] : out[2];
  const std::byte* in = x.raw();
  std::byte* dst = y.mutable_raw();
  // (blocked batch, h, w) <-> (image, row, column) of the image, which starts at (-top, -left) of the padded grid.
  c.pool.ParallelFor(static_cast<size_t>(blocks * images * H), 16, [&](size_t first, size_t end) {
    for (size_t i = first; i < end; ++i) {
      const int64_t bh = static_cast<int64_t>(i) / H, h = static_cast<int64_t>(i) % H;
      const int64_t block = bh / images, n = bh % images, r = h * b[0] + block / b[1] - p[0];
      if (r < 0 || r >= img_h) continue;
      for (int64_t w = 0; w < W; ++w) {
        const int64_t col = w * b[1] + block % b[1] - p[2];
        if (col < 0 || col >= img_w) continue;
        const int64_t blocked = (bh * H + h) * W + w, image = (n * img_h + r) * img_w + col;
        if (to_batch) std::memcpy(dst + blocked * row, in + image * row, row);
        else std::memcpy(dst + image * row, in + blocked * row, row);
      }
    }
  });
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// DepthToSpace/SpaceToDepth as reshape + transpose + reshape.
Status BlockRearrange(KernelContext& c, bool to_space) {
  const Tensor& x = c.in(0);
  if (x.rank() != 4) return c.Fail("input must be 4-D");
  int64_t b = c.node.attr_int("blocksize", 0), N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (b <= 0) return c.Fail("blocksize must be positive");
  Tensor y;
  if (to_space) {
    if (C % (b * b)) return c.Fail("channels not divisible by blocksize^2");
    bool crd = c.node.attr_string("mode", "DCR") == "CRD";
    Tensor v = crd ? x.Reshaped({N, C / (b * b), b, b, H, W}) : x.Reshaped({N, b, b, C / (b * b), H, W});
    y = TransposeTensor(v, crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2}, c.pool);
    y = y.Reshaped({N, C / (b * b), H * b, W * b});
  } else {
    if (H % b || W % b) return c.Fail("height/width not divisible by blocksize");
    Tensor v = x.Reshaped({N, C, H / b, b, W / b, b});
    y = TransposeTensor(v, {0, 3, 5, 1, 2, 4}, c.pool).Reshaped({N, C * b * b, H / b, W / b});
  }
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

Status RangeKernel(KernelContext& c) {
  const Tensor& s = c.in(0);
  Tensor y;
  bool ok = DispatchAll(s.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      T start = c.in(0).data<T>()[0], limit = c.in(1).data<T>()[0], delta = c.in(2).data<T>()[0];
      double n = std::ceil((double(limit) - double(start)) / double(delta));
      int64_t count = std::max<int64_t>(0, static_cast<int64_t>(n));
      y = Tensor::Empty(s.dtype(), {count});
      for (int64_t i = 0; i < count; ++i) y.mutable_data<T>()[i] = static_cast<T>(start + T(i) * delta);
    }
  });
  if (!ok || !y.defined()) return c.Fail("dtype not supported");
  c.outputs[0] = std::move(y);
  return Status::Ok();
}

// TF's RandomUniform ([0, 1)) and RandomStandardNormal, seeded by (seed, seed2) so a run repeats. The
// generator is mt19937_64, whose sequence the C++ standard fixes; the values are not TensorFlow's (Philox).
Status RandomKernel(KernelContext& c) {
  std::vector<int64_t> shape = c.in(0).ToInt64Vector();
  if (std::string why = ShapeLimitProblem(shape); !why.empty()) return c.Fail("shape " + ShapeToString(shape) + ": " + why);
  const uint64_t seed = static_cast<uint64_t>(c.node.attr_int("seed", 0)) * 0x9E3779B97F4A7C15ULL ^ static_cast<uint64_t>(c.node.attr_int("seed2", 0));
  std::mt19937_64 gen(seed);
  constexpr double kUnit = 1.0 / 9007199254740992.0;  // 2^-53: 53 random bits to a double in [0, 1)
  auto uniform = [&] { return static_cast<double>(gen() >> 11) * kUnit; };
  Tensor y = Tensor::Empty(DType::kF32, shape);
  float* d = y.mutable_data<float>();
  const int64_t n = y.numel();
  if (c.node.op_type == "RandomUniform") {
    for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(uniform());
  } else {
    for (int64_t i = 0; i < n; i += 2) {  // Box-Muller: two normals from two uniforms
      double r = std::sqrt(-2.0 * std::log(1.0 - uniform())), a = 2.0 * std::numbers::pi * uniform();
      d[i] = static_cast<float>(r * std::cos(a));
      if (i + 1 < n) d[i + 1] = static_cast<float>(r * std::sin(a));
    }
  }
  auto dt = static_cast<DType>(c.node.attr_int("dtype", static_cast<int64_t>(DType::kF32)));
  c.outputs[0] = dt == DType::kF32 ? std::move(y) : CastTensor(y, dt);
  return Status::Ok();
}

}  // namespace

Tensor TransposeTensor(const Tensor& x, const std::vector<int64_t>& perm, ThreadPool& pool) {
  auto st = Strides(x.shape());
  Shape os;
  std::vector<int64_t> strides;
  bool moves_bytes = false;  // false when only dims of extent 1 move (a batch_first swap of a batch of one)
  int64_t last_moved = -1;
  for (int64_t p : perm) {
    os.push_back(x.shape()[p]);
    strides.push_back(st[p]);
    if (x.shape()[p] == 1) continue;
    moves_bytes |= p < last_moved;
    last_moved = p;
  }
  if (!moves_bytes) return x.Reshaped(os);  // the same bytes in the same order: vit_b_16's 36 such swaps, 1.1 ms
  Tensor y = Tensor::Empty(x.dtype(), os);
  StridedCopy(pool, x.raw(), 0, strides, os, DTypeSize(x.dtype()), y.mutable_raw());
  return y;
}

// A channels-last map is transposed from its memory order, so (0, 2, 3, 1) of it (to N, H, W, C, as ConvNeXt's
// and Swin's blocks do before a LayerNorm) is its own bytes; (0, 3, 1, 2) back to (N, C, H, W) is the input's bytes
// marked channels-last when every reader takes that order. Either way no copy is made.
Status TransposeKernel(KernelContext& c) {
  if (c.options.strided_input) {
    const Shape& in = c.options.strided_input->shape;
    auto perm = TransposePerm(c.node, in.size());
    if (PermFits(perm, in.size())) {
      Shape out;
      for (int64_t p : perm) out.push_back(in[static_cast<size_t>(p)]);
      if (TransposeSelection(c, {}, perm, out)) return Status::Ok();
    }
    c.inputs[0] = Materialize(*c.options.strided_input, c.pool);
  }
  const Tensor& x = c.in(0);
  auto perm = TransposePerm(c.node, x.shape().size());
  if (perm.size() != x.shape().size()) return c.Fail("perm length differs from the input rank");
  if (x.channels_last && x.rank() == 4) {
    std::vector<int64_t> memory_perm;
    for (int64_t d : perm) memory_perm.push_back(kChannelsLastPosition[d]);
    Tensor in_memory_order = x.Reshaped(ChannelsLastOrder(x.shape()));
    c.outputs[0] = TransposeTensor(in_memory_order, memory_perm, c.pool);
    return Status::Ok();
  }
  if (c.options.channels_last_out && x.rank() == 4 && perm == std::vector<int64_t>{0, 3, 1, 2}) {
    Shape os = {x.shape()[0], x.shape()[3], x.shape()[1], x.shape()[2]};
    c.outputs[0] = x.Reshaped(os);
    c.outputs[0].channels_last = OrdersDiffer(os);
    return Status::Ok();
  }
  c.outputs[0] = TransposeTensor(x, perm, c.pool);
  return Status::Ok();
}

// A Reshape (to attr `shape`) and a Transpose (attr `perm`) in one op, or the Transpose first (transpose_first).
Status ConfusionTransposeKernel(KernelContext& c) {
  const auto perm = c.node.attr_ints("perm");
  const bool transpose_first = c.node.attr_int("transpose_first", 0) != 0;
  if (c.options.strided_input) {
    NPU_ASSIGN_OR_RETURN(Shape out, ConfusionTransposeShape(c.node, c.options.strided_input->shape));
    const std::vector<int64_t> reshape = transpose_first ? std::vector<int64_t>{} : c.node.attr_ints("shape");
    Shape permuted = out;  // transpose_first: the permuted input, reshaped to `out` after the copy
    const Shape& in = c.options.strided_input->shape;
    if (transpose_first && PermFits(perm, in.size())) {
      permuted.clear();
      for (int64_t p : perm) permuted.push_back(in[static_cast<size_t>(p)]);
    }
    if (TransposeSelection(c, reshape, perm, permuted)) {
      c.outputs[0] = c.outputs[0].Reshaped(out);
      return Status::Ok();
    }
    c.inputs[0] = Materialize(*c.options.strided_input, c.pool);
  }
  NPU_ASSIGN_OR_RETURN(Shape out, ConfusionTransposeShape(c.node, c.in(0).shape()));
  if (transpose_first) c.outputs[0] = TransposeTensor(c.in(0), perm, c.pool).Reshaped(out);
  else c.outputs[0] = TransposeTensor(c.in(0).Reshaped(c.node.attr_ints("shape")), perm, c.pool);
  return Status::Ok();
}

void RegisterShapeKernels() {
  // Kernels compute on origin layouts, so the format change a TransData records (passes/formats.cc) costs
  // the host nothing: the simulated device time is the cost model's, and dumps write the device layout.
  // The input itself, in whatever memory order it is in (channels_last.h).
  auto pass_through = [](KernelContext& c) {
    c.outputs[0] = c.in(0);
    return Status::Ok();
  };
  RegisterKernel("Identity", {.fn = pass_through, .channels_last = true});
  RegisterKernel("TransData", {.fn = [pass_through](KernelContext& c) {
    if (!c.node.has_attr("perm")) return pass_through(c);
    // A TransData that took in a layout Transpose (NHWC <-> NCHW, passes/formats.cc) also permutes its origin dims.
    Tensor x = c.in(0).channels_last ? ToChannelsFirst(c.in(0), c.pool) : c.in(0);
    c.outputs[0] = TransposeTensor(x, c.node.attr_ints("perm"), c.pool);
    return Status::Ok();
  }, .channels_last = true});
  RegisterKernel("Dropout", [](KernelContext& c) {  // inference: identity, mask all true
               NPU_RETURN_IF_ERROR(ReshapeLike(c, c.in(0).shape()));
               if (c.outputs.size() > 1) {
                 c.outputs[1] = Tensor::Empty(DType::kBool, c.in(0).shape());
                 std::memset(c.outputs[1].mutable_raw(), 1, c.outputs[1].nbytes());
               }
               return Status::Ok();
             });
  RegisterKernel("Reshape", ReshapeKernel);
  RegisterKernel("Flatten", [](KernelContext& c) { return ReshapeLike(c, FlattenShape(c.node, c.in(0).shape())); });
  RegisterKernel("Squeeze", [](KernelContext& c) -> Status {
               NPU_ASSIGN_OR_RETURN(Shape s, SqueezeShape(c.node, c.in(0).shape(), c.has(1) ? &c.in(1) : nullptr));
               return ReshapeLike(c, s);
             });
  RegisterKernel("Unsqueeze", [](KernelContext& c) -> Status {
               NPU_ASSIGN_OR_RETURN(Shape s, UnsqueezeShape(c.node, c.in(0).shape(), c.has(1) ? &c.in(1) : nullptr));
               return ReshapeLike(c, s);
             });
  RegisterKernel("Transpose", {.fn = TransposeKernel, .channels_last = true, .reads_strided_input = [](const Node&) { return true; }});  // see TransposeKernel
  RegisterKernel("ConfusionTranspose", {.fn = ConfusionTransposeKernel, .reads_strided_input = [](const Node&) { return true; }});
  RegisterKernel("Slice", {.fn = SliceKernel, .channels_last = true, .strided_view = SliceAsStridedView});  // see SliceKernel
  RegisterKernel("ShuffleChannel", {.fn = ShuffleChannelKernel, .channels_last = true});
  RegisterKernel("Split", SplitKernel);
  RegisterKernel("Concat", {.fn = ConcatKernel, .channels_last = true});  // see ConcatKernel
  RegisterKernel("Gather", GatherKernel);
  RegisterKernel("Expand", ExpandKernel);
  RegisterKernel("ScatterND", [](KernelContext& c) {
    if (c.node.attr_string("reduction", "none") != "none" && IsHalfLike(c.in(0).dtype())) return WithWidenedHalves(c, ScatterNDKernel);
    return ScatterNDKernel(c);
  });
  RegisterKernel("Tile", TileKernel);
  RegisterKernel("Pad", PadKernel);
  RegisterKernel("DepthToSpace", [](KernelContext& c) { return BlockRearrange(c, true); });
  RegisterKernel("SpaceToBatchND", [](KernelContext& c) { return BlockBatchKernel(c, true); });
  RegisterKernel("BatchToSpaceND", [](KernelContext& c) { return BlockBatchKernel(c, false); });
  RegisterKernel("SpaceToDepth", [](KernelContext& c) { return BlockRearrange(c, false); });
  RegisterKernel("Shape", [](KernelContext& c) {
               c.outputs[0] = ShapeValue(c.node, c.in(0).shape());
               return Status::Ok();
             });
  RegisterKernel("Size", [](KernelContext& c) {
               c.outputs[0] = Tensor::Empty(DType::kI64, {});
               *c.outputs[0].mutable_data<int64_t>() = c.in(0).numel();
               return Status::Ok();
             });
  RegisterKernel("Constant", [](KernelContext& c) {
               c.outputs[0] = ConstantValue(c.node);
               return Status::Ok();
             });
  RegisterKernel("ConstantOfShape", [](KernelContext& c) {
               c.outputs[0] = ConstantOfShapeValue(c.node, c.in(0).ToInt64Vector());
               return Status::Ok();
             });
  RegisterKernel("Range", RangeKernel);
  RegisterKernel("RandomUniform", RandomKernel);
  RegisterKernel("RandomStandardNormal", RandomKernel);
}

}  // namespace npu
