#include "kernels/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>

#include "kernels/numerics.h"

namespace npu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

// Output rows per Winograd tile of oneDNN's F(4x4, 3x3) kernel (its F(2x2, 3x3) tiles divide it): bands start on a
// tile boundary, so that no band computes a tile its neighbour also computes.
constexpr int64_t kTileRows = 4;

// WinogradPays's thresholds, from oneDNN's verbose times of each convolution inside whole nets (inception_v3,
// googlenet, densenet121, squeezenet1_1) on 2 threads of an AMD EPYC (AVX-512), bands against the direct kernel.
// What decides is the band's size in pixels: each band reads all the transformed weights (4x the plain ones), so a
// band must have enough pixels to earn them back. Bands of 16 rows x 28 columns and more won (28x28 maps: 0.57-0.90
// of the direct kernel's time; 52x52 and larger: 0.31-0.68); 16 x 27 and smaller did not (squeezenet's 27x27: 1.0x,
// inception's 25x25: 1.1-1.23x; 14x14 maps, 8-row bands: 0.97-1.27x; 13x13: 1.3-1.8x). And a conv under 8M
// multiply-adds is mostly transforms and copies.
constexpr int64_t kMinBandPixels = 16 * 28;
constexpr double kMinMacs = 8e6;
// And with few input channels the transforms outweigh the products: squeezenet1_1's 16 -> 64 expand convs on 55x55
// took 0.23 ms in two bands against 0.165 for the direct kernel (oneDNN's verbose times), the net 3% slower
// (interleaved runs, fp32 and force_fp16); 32 and more channels are the measured wins above.
constexpr int64_t kMinBandChannels = 32;
// Where bands are too small, one primitive over the whole map on oneDNN's own threads still wins with 256+ input
// and output channels on maps of 7x7 and larger (standalone, caches flushed before each run, 2 threads, its copies
// included: 256->256 on 14x14 0.78-0.80 of the direct kernel's time, 512->512 on 14x14 0.61, on 7x7 0.79-0.89,
// 384->384 on 13x13 0.66-0.80), and loses with fewer (128->128 on 14x14: 0.93-1.18, 192->192 on 17x17: 1.11).
constexpr int64_t kWholeMapMinChannels = 256, kWholeMapMinSide = 7;
// On maps from 28x28 to 56x56 (whole F(4x4) tiles, 49 to 196 of them) it pays from 96 channels in and out, and
// beats the bands too (per-task times inside whole nets, 2 threads): against the direct kernel, googlenet's 96->128
// on 28x28 0.45 -> 0.35-0.36 ms, 128->192 0.84 -> 0.59-0.62 ms, resnet50's four 128->128 on 28x28 1.71 -> 1.04 ms;
// against bands of rows, vgg16's 512->512 on 28x28 15.4 -> 8.7 ms, 256->512 4.0 -> 2.6, 256->256 on 56x56 8.6 ->
// 7.9 (its 128->256 on 56x56 2.4 -> 2.6); googlenet's 96->128 0.42 -> 0.37, 128->192 0.89 -> 0.55. Bands keep
// 112x112 maps (vgg16's 128->128: 4.9 against 5.9 ms whole). Not on inception_v3's 25x25 maps (whose tiles overhang
// the map): 64->96 1.04-1.09x the direct kernel's time, 96->96 0.90-1.01x.
constexpr int64_t kLargeMapMinChannels = 96, kLargeMapMinSide = 28, kLargeMapMaxPixels = 56 * 56;

// Elements per task of the whole-map mode's copies and finish.
constexpr int64_t kCopyGrain = 1 << 14;

// oneDNN's buffers are 64-byte aligned (a cache line, one AVX-512 vector).
constexpr size_t kAlign = 64;
size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// oneDNN's Winograd kernel reads and writes maps in 16-channel blocks, (1, C/16, H, W, 16): a pixel's channels
// are C/16 runs of 16 floats (64 bytes), which our own loops move to and from channels-last order at the speed of
// a copy. (oneDNN's reorder primitive took 0.7 ms for a 64-channel 53x109 band, ten times a copy's time.)
constexpr int64_t kBlock = 16;
// Pixels [p0, p1) of `pixels`.
void ToBlocked(const float* x, float* blk, int64_t p0, int64_t p1, int64_t pixels, int64_t c) {
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t b = 0; b < c / kBlock; ++b) std::memcpy(blk + (b * pixels + p) * kBlock, x + p * c + b * kBlock, kBlock * sizeof(float));
}
void FromBlocked(const float* blk, float* y, int64_t p0, int64_t p1, int64_t pixels, int64_t c) {
  for (int64_t p = p0; p < p1; ++p)
    for (int64_t b = 0; b < c / kBlock; ++b) std::memcpy(y + p * c + b * kBlock, blk + (b * pixels + p) * kBlock, kBlock * sizeof(float));
}

// The calling thread's scratch for a band's blocked input and output and the primitive's own scratchpad. Per
// thread rather than per conv: a net's convolutions would otherwise each hold maps' worth of it.
std::byte* ThreadScratch(size_t bytes) {
  thread_local std::unique_ptr<std::byte[]> buf;
  thread_local size_t size = 0;
  if (bytes + kAlign > size) {
    size = bytes + kAlign;
    buf = std::make_unique_for_overwrite<std::byte[]>(size);
  }
  void* p = buf.get();
  size_t space = size;
  return static_cast<std::byte*>(std::align(kAlign, bytes, p, space));
}

// The geometries Winograd's F(m x m, 3x3) computes, with work enough to be worth the transforms.
bool Winograd3x3(const Conv2DShape& s) {
  return s.KH == 3 && s.KW == 3 && s.SH == 1 && s.SW == 1 && s.DH == 1 && s.DW == 1 && s.G == 1 &&
         static_cast<double>(s.N) * s.OH * s.OW * s.M * s.C * s.KH * s.KW >= kMinMacs;
}

// Output rows per band: the map's rows shared by the threads, rounded up to whole tiles (a 28-row map on two
// threads: bands of 16 and 12 rows), or the whole map.
int64_t BandRows(const Conv2DShape& s, int threads, bool whole_map) {
  const int64_t per = whole_map ? s.OH : (s.OH + threads - 1) / threads;
  return (per + kTileRows - 1) / kTileRows * kTileRows;
}

// Whether a band of rows per thread has pixels and channels enough (the thresholds above).
bool BandsPay(const Conv2DShape& s, int threads) {
  return s.C >= kMinBandChannels && std::min(BandRows(s, threads, false), s.OH) * s.OW >= kMinBandPixels;
}

// Whether the whole map on oneDNN's threads pays where bands do not.
bool AllFrom(const Conv2DShape& s, int64_t channels, int64_t side) { return s.C >= channels && s.M >= channels && s.OH >= side && s.OW >= side; }
bool LargeMapPays(const Conv2DShape& s) { return AllFrom(s, kLargeMapMinChannels, kLargeMapMinSide) && s.OH * s.OW <= kLargeMapMaxPixels; }
bool WholeMapPays(const Conv2DShape& s) { return AllFrom(s, kWholeMapMinChannels, kWholeMapMinSide) || LargeMapPays(s); }

}  // namespace

// A band computed by the direct kernel: where the Winograd result has an Inf or a NaN. The transform mixes each
// input into a whole tile of outputs (a NaN input makes 4x4 outputs NaN, an Inf input NaNs where Inf - Inf meets),
// while on the device, as in the direct sum, a non-finite input reaches only the outputs whose windows hold it; and
// the transform's intermediate sums could overflow where the direct sum does not. Built the first time it is needed.
struct WinogradConv::DirectBand {
  dnnl::convolution_forward prim;
  ReorderedWeights weights;
  memory src, dst, bias;
  std::unordered_map<int, memory> args;
};

struct WinogradConv::Band {
  // Where its first input row and first output row start in an image, in elements, and its rows' elements of y.
  int64_t x_offset = 0, y_offset = 0, y_band = 0;
  dnnl::convolution_forward prim;
  memory bias, src_blocked, dst_blocked, scratchpad;
  int64_t in_pixels = 0, out_pixels = 0;  // the band's input rows x W, output rows x OW
  memory::dims pad_begin, pad_end;        // its padding, as the primitive's
  std::unique_ptr<DirectBand> direct;
  size_t weights = 0;  // index into weights_
  size_t src_bytes = 0, dst_bytes = 0, scratch_bytes = 0;
  std::unordered_map<int, memory> args;
};

WinogradConv::WinogradConv() = default;
WinogradConv::~WinogradConv() = default;

bool WinogradPays(const Conv2DShape& s, int threads) { return Winograd3x3(s) && (BandsPay(s, threads) || WholeMapPays(s)); }

std::unique_ptr<WinogradConv> WinogradConv::Build(const Conv2DShape& s, int threads, bool has_bias) try {
  auto conv = std::make_unique<WinogradConv>();
  // One band on oneDNN's threads: on large maps with channels enough for it, and where bands are too small.
  conv->whole_map_ = LargeMapPays(s) || !BandsPay(s, threads);
  // Band primitives run inside our parallel loop, where oneDNN runs them on the calling thread: planned for one.
  std::optional<OneOpenMpThread> planning;
  if (!conv->whole_map_) planning.emplace();
  if (s.C % kBlock != 0 || s.M % kBlock != 0) return nullptr;  // the blocked layout's; oneDNN's kernel needs it too
  conv->shape_ = s;
  const int64_t band_rows = BandRows(s, threads, conv->whole_map_);
  const memory::dims wdims{s.M, s.C, s.KH, s.KW};
  const memory::desc bias({s.M}, kF32, Tag::a), plain_w(wdims, kF32, Tag::oihw);
  std::vector<memory::desc> layouts;
  for (int64_t r0 = 0; r0 < s.OH; r0 += band_rows) {
    Band b;
    const int64_t r1 = std::min(s.OH, r0 + band_rows);
    // The input rows its windows cover, clipped to the map; what they would cover past it is padding.
    const int64_t top = r0 - s.PT, bottom = r1 - 1 - s.PT + s.KH;  // [top, bottom) in input rows
    const int64_t i0 = std::max<int64_t>(0, top), i1 = std::min(s.H, bottom);
    const int64_t pad_top = i0 - top, pad_bottom = bottom - i1;
    const int64_t pad_right = std::max<int64_t>(0, s.OW - 1 + s.KW - s.W - s.PL);
    const memory::desc src({1, s.C, i1 - i0, s.W}, kF32, Tag::aBcd16b), dst({1, s.M, r1 - r0, s.OW}, kF32, Tag::aBcd16b);
    dnnl::primitive_attr attr;  // no post-ops: the band's ChunkFinish runs our own activation on its rows
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);  // ThreadScratch's, so that bands may run at once
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_winograd, src,
                                         memory::desc(wdims, kF32, Tag::any), has_bias ? bias : memory::desc(), dst,
                                         {1, 1}, {pad_top, s.PL}, {pad_bottom, pad_right});
    b.pad_begin = {pad_top, s.PL};
    b.pad_end = {pad_bottom, pad_right};
    dnnl::convolution_forward::primitive_desc pd(desc, attr, DnnlEngine());
    if (IsReferenceImpl(pd)) return nullptr;
    b.prim = dnnl::convolution_forward(pd);
    b.x_offset = i0 * s.W * s.C;  // rows of the channels-last maps: W x C and OW x M elements
    b.y_offset = r0 * s.OW * s.M;
    b.y_band = (r1 - r0) * s.OW * s.M;
    b.src_blocked = Unbound(src);
    b.dst_blocked = Unbound(dst);
    b.in_pixels = (i1 - i0) * s.W;
    b.out_pixels = (r1 - r0) * s.OW;
    b.scratchpad = Unbound(pd.scratchpad_desc());
    b.src_bytes = AlignUp(src.get_size());
    b.dst_bytes = AlignUp(dst.get_size());
    b.scratch_bytes = AlignUp(pd.scratchpad_desc().get_size());
    const auto same = std::find(layouts.begin(), layouts.end(), pd.weights_desc());
    b.weights = static_cast<size_t>(same - layouts.begin());
    if (same == layouts.end()) {
      layouts.push_back(pd.weights_desc());
      conv->weights_.emplace_back(pd.weights_desc(), plain_w);
    }
    b.args = {{DNNL_ARG_SRC, b.src_blocked}, {DNNL_ARG_WEIGHTS, conv->weights_[b.weights].memory()},
              {DNNL_ARG_DST, b.dst_blocked}, {DNNL_ARG_SCRATCHPAD, b.scratchpad}};
    if (has_bias) {
      b.bias = Unbound(bias);
      b.args.emplace(DNNL_ARG_BIAS, b.bias);
    }
    conv->bands_.push_back(std::move(b));
  }
  return conv;
} catch (const dnnl::error&) {
  return nullptr;  // no Winograd kernel for this geometry: the direct one serves
}

bool WinogradBuilds(const Conv2DShape& s, int threads) { return WinogradConv::Build(s, threads, false) != nullptr; }

void WinogradConv::Run(const float* x, const Tensor& w, const float* bias, float* y, const ChunkFinish& finish, ThreadPool& pool) {
  for (ReorderedWeights& rw : weights_) rw.Update(w, DnnlStream());
  if (whole_map_) return RunWholeMap(x, w, bias, y, finish, pool);
  // One image at a time per band: a band's primitive is built for one image, so that its views are dense.
  pool.ParallelFor(bands_.size(), 1, [&](size_t b0, size_t b1) {
    dnnl::stream& st = DnnlStream();
    for (size_t i = b0; i < b1; ++i) {
      Band& b = bands_[i];
      std::byte* scratch = BindScratch(b, bias);
      for (int64_t n = 0; n < shape_.N; ++n) {
        const int64_t at = n * YImage() + b.y_offset;
        ToBlocked(x + n * XImage() + b.x_offset, reinterpret_cast<float*>(scratch), 0, b.in_pixels, b.in_pixels, shape_.C);
        b.prim.execute(st, b.args);
        st.wait();
        FromBlocked(reinterpret_cast<const float*>(scratch + b.src_bytes), y + at, 0, b.out_pixels, b.out_pixels, shape_.M);
        if (AnyNonFinite({y + at, static_cast<size_t>(b.y_band)})) RunDirect(b, x + n * XImage() + b.x_offset, w, bias, y + at, st);
        if (finish) finish({y + at, static_cast<size_t>(b.y_band)}, static_cast<size_t>(at));
      }
    }
  });
}

std::byte* WinogradConv::BindScratch(Band& b, const float* bias) {
  std::byte* scratch = ThreadScratch(b.src_bytes + b.dst_bytes + b.scratch_bytes);
  b.src_blocked.set_data_handle(scratch);
  b.dst_blocked.set_data_handle(scratch + b.src_bytes);
  b.scratchpad.set_data_handle(scratch + b.src_bytes + b.dst_bytes);
  if (bias) b.bias.set_data_handle(const_cast<float*>(bias));
  return scratch;
}

// The whole map as one band on oneDNN's threads, the copies and the finish on ours. A non-finite value anywhere
// sends the map to the direct kernel before anything is finished, so that nothing is recorded twice.
void WinogradConv::RunWholeMap(const float* x, const Tensor& w, const float* bias, float* y, const ChunkFinish& finish, ThreadPool& pool) {
  Band& b = bands_[0];
  dnnl::stream& st = DnnlStream();
  std::byte* scratch = BindScratch(b, bias);
  auto* blk_in = reinterpret_cast<float*>(scratch);
  const auto* blk_out = reinterpret_cast<const float*>(scratch + b.src_bytes);
  const auto grain = [](int64_t channels) { return static_cast<size_t>(std::max<int64_t>(1, kCopyGrain / channels)); };
  for (int64_t n = 0; n < shape_.N; ++n) {
    const float* xn = x + n * XImage();
    float* yn = y + n * YImage();
    pool.ParallelFor(static_cast<size_t>(b.in_pixels), grain(shape_.C), [&](size_t p0, size_t p1) {
      ToBlocked(xn, blk_in, static_cast<int64_t>(p0), static_cast<int64_t>(p1), b.in_pixels, shape_.C);
    });
    b.prim.execute(st, b.args);
    st.wait();
    std::atomic<bool> non_finite{false};
    pool.ParallelFor(static_cast<size_t>(b.out_pixels), grain(shape_.M), [&](size_t p0, size_t p1) {
      FromBlocked(blk_out, yn, static_cast<int64_t>(p0), static_cast<int64_t>(p1), b.out_pixels, shape_.M);
      if (AnyNonFinite({yn + p0 * shape_.M, (p1 - p0) * shape_.M})) non_finite.store(true, std::memory_order_relaxed);
    });
    if (non_finite.load()) RunDirect(b, xn, w, bias, yn, st);
    if (!finish) continue;
    pool.ParallelFor(static_cast<size_t>(YImage()), static_cast<size_t>(kCopyGrain), [&](size_t e0, size_t e1) {
      finish({yn + e0, e1 - e0}, static_cast<size_t>(n * YImage()) + e0);
    });
  }
}

void WinogradConv::RunDirect(Band& b, const float* x, const Tensor& w, const float* bias, float* y, dnnl::stream& st) try {
  const Conv2DShape& s = shape_;
  if (!b.direct) {
    const OneOpenMpThread planning;  // a band's primitive, run on the calling thread
    auto d = std::make_unique<DirectBand>();
    const memory::desc src({1, s.C, b.in_pixels / s.W, s.W}, kF32, Tag::nhwc), dst({1, s.M, b.out_pixels / s.OW, s.OW}, kF32, Tag::nhwc);
    const memory::desc bias_desc({s.M}, kF32, Tag::a);
    const memory::dims wdims{s.M, s.C, s.KH, s.KW};
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                         memory::desc(wdims, kF32, Tag::any), bias ? bias_desc : memory::desc(), dst, {1, 1},
                                         b.pad_begin, b.pad_end);
    dnnl::convolution_forward::primitive_desc pd(desc, DnnlEngine());
    d->prim = dnnl::convolution_forward(pd);
    d->weights = ReorderedWeights(pd.weights_desc(), memory::desc(wdims, kF32, Tag::oihw));
    d->src = Unbound(src);
    d->dst = Unbound(dst);
    d->args = {{DNNL_ARG_SRC, d->src}, {DNNL_ARG_WEIGHTS, d->weights.memory()}, {DNNL_ARG_DST, d->dst}};
    if (bias) {
      d->bias = Unbound(bias_desc);
      d->args.emplace(DNNL_ARG_BIAS, d->bias);
    }
    b.direct = std::move(d);
  }
  DirectBand& d = *b.direct;
  d.weights.Update(w, st);
  d.src.set_data_handle(const_cast<float*>(x));
  d.dst.set_data_handle(y);
  if (bias) d.bias.set_data_handle(const_cast<float*>(bias));
  d.prim.execute(st, d.args);
  st.wait();
} catch (const dnnl::error&) {
  // No direct kernel for the band either (oneDNN has one for every 3x3 geometry): the Winograd result stands.
}

}  // namespace npu
