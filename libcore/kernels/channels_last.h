// Channels-last activations on the host. Convolutions run fastest on (N, H, W, C) feature maps (oneDNN's
// direct kernels read whole channel vectors per pixel; see conv_dnnl.cc), so a conv may hand its result on
// in that order (Tensor::channels_last) when every reader of it is registered as taking it. Elementwise
// ops, Add/Mul with per-channel broadcasting and global pooling take it without a conversion; the runtime
// converts it back for every other reader, for dumps and for the net's outputs.
#pragma once
#include <algorithm>
#include <cstdint>

#include "base/thread_pool.h"
#include "ir/tensor.h"

namespace npu {

// Whether the two memory orders of a value of this shape differ: 4-D with more than one channel and more
// than one pixel. Only such tensors are ever marked channels_last.
bool OrdersDiffer(const Shape& s);
// The tensor in the other memory order (a copy), or itself when it already is in the wanted one.
Tensor ToChannelsFirst(const Tensor& t, ThreadPool& pool);
Tensor ToChannelsLast(const Tensor& t, ThreadPool& pool);
// An h x w rectangle of `elem_bytes`-byte elements (1, 2, 4 or 8) transposed: element (j, i) of dst is element (i, j)
// of src, their rows `dst_stride` and `src_stride` elements apart, at any alignment. 4-byte elements go in 8 x 8
// blocks through vector registers (which the compiler does not do for a loop with a strided side), the rest and
// the edges one by one. A tile of a larger transpose, sized to stay in cache.
void TransposeRect(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride, int64_t h, int64_t w, size_t elem_bytes);
// dst[b][j][i] = src[b][i][j] for `batches` row-major rows x cols matrices of `elem_bytes`-byte elements (1, 2, 4
// or 8): the layout conversions above, and ShuffleChannel's permutation of each pixel's channel vector.
void TransposeMatrices(const std::byte* src, std::byte* dst, size_t elem_bytes, int64_t batches, int64_t rows, int64_t cols, ThreadPool& pool);
// The mean of each image's channel over its pixels, for a channels-last 4-D fp32/fp64 x, into y's N x C values (any
// shape of that size and x's dtype): GlobalAveragePool's channels-last path, which ReduceMean over (H, W) shares
// bit for bit (both add in double, in the parts of MeanParts). False, with y untouched, for any other x.
bool MeanOverPixelsOfChannelsLast(const Tensor& x, Tensor& y, ThreadPool& pool);
// A mean (or global max) over n values is taken in MeanParts(n) parts of consecutive values, part k holding
// [n k / parts, n (k + 1) / parts): each part summed in order, then the parts added in order. The global pools in
// either memory order and ReduceMean all do so, so that they give the same bits, on any number of threads; a
// channels-last pool's threads each take a run of parts, the pixels the conv before it wrote on their core.
constexpr int64_t kMeanPartValues = 8;  // the fewest values in a part
constexpr int64_t kMeanMaxParts = 16;
constexpr int64_t MeanParts(int64_t n) { return std::clamp<int64_t>(n / kMeanPartValues, 1, kMeanMaxParts); }
// Where part `part` of `parts` over n values starts (part `parts` gives n, the end of the last).
constexpr int64_t MeanPartStart(int64_t n, int64_t part, int64_t parts) { return n * part / parts; }
// The logical (N, C, H, W) flat index of the element at flat memory index `i` of a channels-last tensor.
int64_t ChannelsFirstIndex(const Shape& s, int64_t i);

}  // namespace npu
