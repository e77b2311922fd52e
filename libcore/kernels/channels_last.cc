#include "kernels/channels_last.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ir/dtype.h"

namespace npu {
namespace {

// Side of the square tiles a transpose moves: 16 x 16 four-byte elements are 16 cache lines in, 16 out.
constexpr int64_t kTile = 16;
// Columns one task moves: a net's input image is 3 rows (channels) of 50,176 columns (pixels), one row tile,
// so tasks must split the columns too for the threads to share it.
constexpr int64_t kTaskCols = 16 * kTile;

// An element of a given size, moved as one value (a trivially copyable struct compiles to plain loads and stores).
template <size_t kBytes>
struct Elem {
  std::byte b[kBytes];
};

// One 8 x 8 block of 4-byte elements through vector registers: three rounds of two-vector shuffles.
constexpr int64_t kTransposeBlock = 8;
void TransposeBlock8(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride) {
  typedef uint32_t Row __attribute__((vector_size(32)));
  constexpr int64_t kElem = sizeof(uint32_t);
  Row r[8], t[8];
  for (int i = 0; i < 8; ++i) std::memcpy(&r[i], src + i * src_stride * kElem, sizeof(Row));
  // Round 1: rows 2k and 2k+1 interleaved (columns 0-3, then 4-7, in pairs).
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = __builtin_shuffle(r[2 * k], r[2 * k + 1], Row{0, 8, 1, 9, 2, 10, 3, 11});
    t[2 * k + 1] = __builtin_shuffle(r[2 * k], r[2 * k + 1], Row{4, 12, 5, 13, 6, 14, 7, 15});
  }
  // Round 2: pairs of pairs: each vector holds two columns of four rows.
  for (int h = 0; h < 2; ++h)
    for (int k = 0; k < 2; ++k) {
      const Row& a = t[4 * h + k];
      const Row& b = t[4 * h + k + 2];
      r[4 * h + 2 * k] = __builtin_shuffle(a, b, Row{0, 1, 8, 9, 2, 3, 10, 11});
      r[4 * h + 2 * k + 1] = __builtin_shuffle(a, b, Row{4, 5, 12, 13, 6, 7, 14, 15});
    }
  // Round 3: the top four rows' half of a column pair joined to the bottom four's: whole columns.
  for (int k = 0; k < 4; ++k) {
    t[2 * k] = __builtin_shuffle(r[k], r[k + 4], Row{0, 1, 2, 3, 8, 9, 10, 11});
    t[2 * k + 1] = __builtin_shuffle(r[k], r[k + 4], Row{4, 5, 6, 7, 12, 13, 14, 15});
  }
  for (int j = 0; j < 8; ++j) std::memcpy(dst + j * dst_stride * kElem, &t[j], sizeof(Row));
}

template <size_t kBytes>
void TransposeRectOf(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride, int64_t h, int64_t w) {
  constexpr auto es = static_cast<int64_t>(kBytes);
  int64_t h_done = 0, w_done = 0;  // the part whole 8 x 8 blocks cover
  if constexpr (kBytes == 4) {
    h_done = h / kTransposeBlock * kTransposeBlock;
    w_done = w / kTransposeBlock * kTransposeBlock;
    for (int64_t i = 0; i < h_done; i += kTransposeBlock)
      for (int64_t j = 0; j < w_done; j += kTransposeBlock) TransposeBlock8(src + (i * src_stride + j) * es, src_stride, dst + (j * dst_stride + i) * es, dst_stride);
  }
  for (int64_t j = 0; j < w; ++j)
    for (int64_t i = j < w_done ? h_done : 0; i < h; ++i) std::memcpy(dst + (j * dst_stride + i) * es, src + (i * src_stride + j) * es, kBytes);
}

// dst[b][j][i] = src[b][i][j] for `batches` row-major rows x cols matrices; a task is one tile of rows by
// kTaskCols columns of one matrix.
template <class T>
void Transpose(const T* src, T* dst, int64_t batches, int64_t rows, int64_t cols, ThreadPool& pool) {
  const int64_t row_tiles = (rows + kTile - 1) / kTile, col_blocks = (cols + kTaskCols - 1) / kTaskCols;
  const int64_t per_batch = row_tiles * col_blocks;
  pool.ParallelFor(static_cast<size_t>(batches * per_batch), 1, [&](size_t b, size_t e) {
    for (auto t = static_cast<int64_t>(b); t < static_cast<int64_t>(e); ++t) {
      const int64_t batch = t / per_batch, r0 = t % per_batch / col_blocks * kTile;
      const int64_t c_begin = t % col_blocks * kTaskCols;
      const int64_t r1 = std::min(rows, r0 + kTile), c_end = std::min(cols, c_begin + kTaskCols);
      const T* s = src + batch * rows * cols;
      T* d = dst + batch * rows * cols;
      for (int64_t c0 = c_begin; c0 < c_end; c0 += kTile)
        TransposeRect(reinterpret_cast<const std::byte*>(s + r0 * cols + c0), cols, reinterpret_cast<std::byte*>(d + c0 * rows + r0), rows, r1 - r0,
                      std::min(c_end, c0 + kTile) - c0, sizeof(T));
    }
  });
}

// The same transpose for a matrix of kRows rows, fixed at compile time: a net's image input (3 channels of
// every pixel) turned channels-last. Each task interleaves kInterleaveCols columns from the kRows row pointers,
// a loop GCC vectorises (vpermt2ps); the tiled loop above moves one element at a time, and the input's
// transpose was 4.8% of mnasnet1_0's single-thread time.
constexpr int64_t kInterleaveCols = 4096;
constexpr int64_t kMaxInterleavedRows = 4;

template <int kRows, class T>
void InterleaveRows(const T* src, T* dst, int64_t batches, int64_t cols, ThreadPool& pool) {
  const int64_t blocks = (cols + kInterleaveCols - 1) / kInterleaveCols;
  pool.ParallelFor(static_cast<size_t>(batches * blocks), 1, [&](size_t b, size_t e) {
    for (auto t = static_cast<int64_t>(b); t < static_cast<int64_t>(e); ++t) {
      const int64_t batch = t / blocks, c0 = t % blocks * kInterleaveCols, c1 = std::min(cols, c0 + kInterleaveCols);
      const T* __restrict row[kRows];
      for (int r = 0; r < kRows; ++r) row[r] = src + (batch * kRows + r) * cols;
      T* __restrict d = dst + batch * kRows * cols;
      for (int64_t c = c0; c < c1; ++c)
#pragma GCC unroll 4
        for (int r = 0; r < kRows; ++r) d[c * kRows + r] = row[r][c];
    }
  });
}

// Elements moved as unsigned integers of their size: the vectoriser handles those, not byte-array structs.
template <size_t kBytes>
using Word = std::conditional_t<kBytes == 1, uint8_t, std::conditional_t<kBytes == 2, uint16_t, std::conditional_t<kBytes == 4, uint32_t, uint64_t>>>;

template <size_t kBytes>
void TransposeBytes(const std::byte* in, std::byte* out, int64_t batches, int64_t rows, int64_t cols, ThreadPool& pool) {
  if (rows <= kMaxInterleavedRows) {
    const auto* s = reinterpret_cast<const Word<kBytes>*>(in);
    auto* d = reinterpret_cast<Word<kBytes>*>(out);
    switch (rows) {
      case 1: return InterleaveRows<1>(s, d, batches, cols, pool);
      case 2: return InterleaveRows<2>(s, d, batches, cols, pool);
      case 3: return InterleaveRows<3>(s, d, batches, cols, pool);
      default: return InterleaveRows<4>(s, d, batches, cols, pool);
    }
  }
  using E = Elem<kBytes>;
  Transpose(reinterpret_cast<const E*>(in), reinterpret_cast<E*>(out), batches, rows, cols, pool);
}

Tensor Reordered(const Tensor& t, bool to_last, ThreadPool& pool) {
  const Shape& s = t.shape();
  const int64_t N = s[0], C = s[1], HW = s[2] * s[3];
  Tensor out = Tensor::Empty(t.dtype(), s);
  out.format = t.format;
  out.channels_last = to_last;
  // channels first -> last: each image is a C x HW matrix turned into HW x C; last -> first the reverse.
  const int64_t rows = to_last ? C : HW, cols = to_last ? HW : C;
  TransposeMatrices(t.raw(), out.mutable_raw(), DTypeSize(t.dtype()), N, rows, cols, pool);
  return out;
}

}  // namespace

void TransposeRect(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride, int64_t h, int64_t w, size_t elem_bytes) {
  switch (elem_bytes) {
    case 1: return TransposeRectOf<1>(src, src_stride, dst, dst_stride, h, w);
    case 2: return TransposeRectOf<2>(src, src_stride, dst, dst_stride, h, w);
    case 4: return TransposeRectOf<4>(src, src_stride, dst, dst_stride, h, w);
    default: return TransposeRectOf<8>(src, src_stride, dst, dst_stride, h, w);
  }
}

void TransposeMatrices(const std::byte* src, std::byte* dst, size_t elem_bytes, int64_t batches, int64_t rows, int64_t cols, ThreadPool& pool) {
  switch (elem_bytes) {
    case 1: return TransposeBytes<1>(src, dst, batches, rows, cols, pool);
    case 2: return TransposeBytes<2>(src, dst, batches, rows, cols, pool);
    case 4: return TransposeBytes<4>(src, dst, batches, rows, cols, pool);
    default: return TransposeBytes<8>(src, dst, batches, rows, cols, pool);
  }
}

bool OrdersDiffer(const Shape& s) { return s.size() == 4 && s[1] > 1 && s[2] * s[3] > 1; }

Tensor ToChannelsFirst(const Tensor& t, ThreadPool& pool) {
  if (!t.channels_last) return t;
  if (!OrdersDiffer(t.shape())) {
    Tensor same = t;
    same.channels_last = false;
    return same;
  }
  return Reordered(t, false, pool);
}

Tensor ToChannelsLast(const Tensor& t, ThreadPool& pool) {
  if (t.channels_last || !OrdersDiffer(t.shape())) return t;
  return Reordered(t, true, pool);
}

int64_t ChannelsFirstIndex(const Shape& s, int64_t i) {
  const int64_t C = s[1], HW = s[2] * s[3];
  const int64_t n = i / (HW * C), p = i / C % HW, c = i % C;
  return (n * C + c) * HW + p;
}

}  // namespace npu
