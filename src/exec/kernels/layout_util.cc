#include "exec/kernels/layout_util.h"
#include "exec/kernels/fp16_compute.h"

#include <type_traits>

namespace gpuclean::exec::kernels {
namespace {

struct Dim {
  int64_t n;
  int64_t ss;  // source stride (elements)
  int64_t ds;  // destination stride (elements)
};

// Drops size-1 dimensions and merges neighbours that are contiguous on both
// sides. Returns false when the box is empty.
bool Simplify(std::span<const int32_t> shape, std::span<const int64_t> ss, std::span<const int64_t> ds,
              std::vector<Dim>& dims) {
  dims.clear();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return false;
    if (shape[i] == 1) continue;
    Dim d{shape[i], ss[i], ds[i]};
    if (!dims.empty()) {
      Dim& inner_prev = dims.back();
      // `inner_prev` is outer relative to `d`: merge when stepping inner_prev
      // by one equals stepping d through its whole extent.
      if (inner_prev.ss == d.ss * d.n && inner_prev.ds == d.ds * d.n) {
        inner_prev = {inner_prev.n * d.n, d.ss, d.ds};
        continue;
      }
    }
    dims.push_back(d);
  }
  return true;
}

template <typename T>
void StridedRow(uint8_t* dst, int64_t ds, const uint8_t* src, int64_t ss, int64_t n) {
  T* d = reinterpret_cast<T*>(dst);
  const T* s = reinterpret_cast<const T*>(src);
  if (ds == 1 && ss == 0) {
    const T v = *s;
    for (int64_t i = 0; i < n; ++i) d[i] = v;
  } else if (ds == 1) {
    for (int64_t i = 0; i < n; ++i) d[i] = s[i * ss];
  } else {
    for (int64_t i = 0; i < n; ++i) d[i * ds] = s[i * ss];
  }
}

void Row(size_t esize, uint8_t* dst, int64_t ds, const uint8_t* src, int64_t ss, int64_t n) {
  if (ss == 1 && ds == 1) {
    // Short rows of a known size as a few vector moves: a call per row was
    // most of an attention head split's TRANSPOSE ([196,4,16] -> [4,196,16]:
    // 784 rows of 64 bytes).
    switch (const size_t bytes = static_cast<size_t>(n) * esize) {
      case 16: __builtin_memcpy(dst, src, 16); return;
      case 32: __builtin_memcpy(dst, src, 32); return;
      case 64: __builtin_memcpy(dst, src, 64); return;
      case 128: __builtin_memcpy(dst, src, 128); return;
      case 256: __builtin_memcpy(dst, src, 256); return;
      default: std::memcpy(dst, src, bytes); return;
    }
  }
  switch (esize) {
    case 1: StridedRow<uint8_t>(dst, ds, src, ss, n); return;
    case 2: StridedRow<uint16_t>(dst, ds, src, ss, n); return;
    case 4: StridedRow<uint32_t>(dst, ds, src, ss, n); return;
    case 8: StridedRow<uint64_t>(dst, ds, src, ss, n); return;
    default:
      for (int64_t i = 0; i < n; ++i) std::memcpy(dst + i * ds * esize, src + i * ss * esize, esize);
  }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define GPUCLEAN_LAYOUT_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPUCLEAN_LAYOUT_CLONES
#endif

// NI rows of s, si apart, interleaved into dense d: d[j*NI + i] = s[j +
// i*si]. With NI known GCC turns the stores into whole-vector permutes; as a
// strided store per element the NCHW -> NHWC TRANSPOSE of a 3-channel
// [1,3,224,224] image took 0.045 ms, this way 0.017.
template <typename T, int NI>
GPUCLEAN_LAYOUT_CLONES void Interleave(T* __restrict d, const T* __restrict s, int64_t si, int64_t nj) {
  for (int64_t j = 0; j < nj; ++j)
    for (int i = 0; i < NI; ++i) d[j * NI + i] = s[j + i * si];
}

// A 2-D block transposition: dst[j*dj + i] = src[j + i*si] for a tile.
template <typename T>
void TileTranspose(uint8_t* dst, int64_t dj, const uint8_t* src, int64_t si, int64_t nj, int64_t ni) {
  T* d = reinterpret_cast<T*>(dst);
  const T* s = reinterpret_cast<const T*>(src);
  if (dj == ni && sizeof(T) == 4) {  // whole pixels of 2, 3 or 4 channels
    if (ni == 2) return Interleave<T, 2>(d, s, si, nj);
    if (ni == 3) return Interleave<T, 3>(d, s, si, nj);
    if (ni == 4) return Interleave<T, 4>(d, s, si, nj);
  }
  if (ni < 8) {  // a short inner dim (3 channels): long loops over j instead
    for (int64_t i = 0; i < ni; ++i)
      for (int64_t j = 0; j < nj; ++j) d[j * dj + i] = s[j + i * si];
    return;
  }
  for (int64_t j = 0; j < nj; ++j)
    for (int64_t i = 0; i < ni; ++i) d[j * dj + i] = s[j + i * si];
}

void Tile(size_t esize, uint8_t* dst, int64_t dj, const uint8_t* src, int64_t si, int64_t nj, int64_t ni) {
  switch (esize) {
    case 1: TileTranspose<uint8_t>(dst, dj, src, si, nj, ni); return;
    case 2: TileTranspose<uint16_t>(dst, dj, src, si, nj, ni); return;
    case 4: TileTranspose<uint32_t>(dst, dj, src, si, nj, ni); return;
    case 8: TileTranspose<uint64_t>(dst, dj, src, si, nj, ni); return;
    default:
      for (int64_t j = 0; j < nj; ++j)
        for (int64_t i = 0; i < ni; ++i) std::memcpy(dst + (j * dj + i) * esize, src + (j + i * si) * esize, esize);
  }
}

// Offsets of the `row`-th position of the odometer over `outer`.
void Offsets(const std::vector<Dim>& outer, int64_t row, int64_t& so, int64_t& d_o) {
  so = 0;
  d_o = 0;
  for (size_t k = outer.size(); k-- > 0;) {
    const int64_t idx = row % outer[k].n;
    row /= outer[k].n;
    so += idx * outer[k].ss;
    d_o += idx * outer[k].ds;
  }
}

}  // namespace

void CopyStrided(ThreadPool& pool, size_t esize, std::span<const int32_t> shape, const uint8_t* src,
                 std::span<const int64_t> src_strides, uint8_t* dst, std::span<const int64_t> dst_strides) {
  std::vector<Dim> dims;
  if (!Simplify(shape, src_strides, dst_strides, dims)) return;
  if (dims.empty()) {
    std::memcpy(dst, src, esize);
    return;
  }
  const Dim inner = dims.back();
  std::vector<Dim> outer(dims.begin(), dims.end() - 1);

  // A transposition: the destination is contiguous along the inner dim but
  // the source is contiguous along some outer dim. Copy in square tiles so
  // both sides stay in cache. A short inner dim (NCHW -> NHWC of 3 channels)
  // goes this way too, in tiles of 32 x n: as rows of n it paid the
  // odometer and a call per 3 elements (mha_parity's input TRANSPOSE of
  // [1,3,224,224]: 0.17 of its 0.68 ms).
  constexpr int64_t kTile = 32;
  int tile_dim = -1;
  if (inner.ds == 1 && inner.ss != 1 && inner.ss != 0) {
    for (int k = static_cast<int>(outer.size()) - 1; k >= 0; --k)
      if (outer[k].ss == 1 && outer[k].n >= 8) {
        tile_dim = k;
        break;
      }
  }
  if (tile_dim >= 0) {
    const Dim tj = outer[tile_dim];
    outer.erase(outer.begin() + tile_dim);
    int64_t rows = 1;
    for (const Dim& d : outer) rows *= d.n;
    // A short inner dim takes tiles of 32 * 32 / n along j (as many elements).
    const int64_t jtile = inner.n < 8 ? kTile * kTile / inner.n : kTile;
    const int64_t jblocks = (tj.n + jtile - 1) / jtile;
    const int64_t tasks = rows * jblocks;
    const int64_t grain = std::max<int64_t>(1, 16384 / (jtile * inner.n));
    pool.ParallelFor(tasks, grain, [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        const int64_t row = t / jblocks, jb = t % jblocks;
        int64_t so, d_o;
        Offsets(outer, row, so, d_o);
        const int64_t j0 = jb * jtile, nj = std::min(jtile, tj.n - j0);
        for (int64_t i0 = 0; i0 < inner.n; i0 += kTile) {
          const int64_t ni = std::min(kTile, inner.n - i0);
          Tile(esize, dst + (d_o + j0 * tj.ds + i0) * esize, tj.ds, src + (so + j0 + i0 * inner.ss) * esize, inner.ss,
               nj, ni);
        }
      }
    });
    return;
  }

  int64_t rows = 1;
  for (const Dim& d : outer) rows *= d.n;
  const int64_t grain = std::max<int64_t>(1, 32768 / inner.n);
  pool.ParallelFor(rows, grain, [&](int64_t begin, int64_t end) {
    // Odometer over the outer dims, started at `begin`.
    std::vector<int64_t> idx(outer.size(), 0);
    int64_t so, d_o;
    {
      int64_t r = begin;
      for (size_t k = outer.size(); k-- > 0;) {
        idx[k] = r % outer[k].n;
        r /= outer[k].n;
      }
      Offsets(outer, begin, so, d_o);
    }
    for (int64_t r = begin; r < end; ++r) {
      Row(esize, dst + d_o * esize, inner.ds, src + so * esize, inner.ss, inner.n);
      for (size_t k = outer.size(); k-- > 0;) {
        so += outer[k].ss;
        d_o += outer[k].ds;
        if (++idx[k] < outer[k].n) break;
        so -= outer[k].ss * outer[k].n;
        d_o -= outer[k].ds * outer[k].n;
        idx[k] = 0;
      }
    }
  });
}

void FillElements(uint8_t* dst, int64_t count, const uint8_t* value, size_t esize) {
  if (count <= 0) return;
  bool uniform = true;
  for (size_t b = 1; b < esize; ++b) uniform = uniform && value[b] == value[0];
  if (uniform) {
    std::memset(dst, value[0], static_cast<size_t>(count) * esize);
    return;
  }
  auto fill = [&]<typename T>() {
    T v;
    std::memcpy(&v, value, sizeof(T));
    T* d = reinterpret_cast<T*>(dst);
    for (int64_t i = 0; i < count; ++i) d[i] = v;
  };
  switch (esize) {
    case 2: fill.operator()<uint16_t>(); return;
    case 4: fill.operator()<uint32_t>(); return;
    case 8: fill.operator()<uint64_t>(); return;
    default:
      for (int64_t i = 0; i < count; ++i) std::memcpy(dst + i * esize, value, esize);
  }
}

void SplitAlongAxis(KernelContext& ctx, const Tensor& input, int axis) {
  const size_t esize = ElementSize(input);
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  int64_t offset = 0;
  for (size_t k = 0; k < ctx.out.size(); ++k) {
    Tensor& out = ctx.output(static_cast<int>(k));
    if (out.rank() != input.rank())
      ThrowOpBadInput(ctx, "output {} has rank {}, the input {}", k, out.rank(), input.rank());
    if (offset + out.shape[axis] > input.shape[axis])
      ThrowOpBadInput(ctx, "outputs are longer than the input along axis {}", axis);
    CopyStrided(ctx.pool, esize, out.shape, input.data + offset * in_strides[axis] * esize, in_strides, out.data,
                StridesOf(out.shape));
    offset += out.shape[axis];
  }
  if (offset != input.shape[axis]) ThrowOpBadInput(ctx, "outputs do not cover the input along axis {}", axis);
}

// ------------------------------------------------------------------ padding

std::vector<std::pair<int64_t, int64_t>> ReadPaddings(const KernelContext& ctx) {
  const int rank = ctx.input(0).rank();
  const std::vector<int64_t> v = ReadInts(ctx, 1);
  if (static_cast<int>(v.size()) != 2 * rank)
    ThrowOpBadInput(ctx, "paddings hold {} values, expected {} (shape [{}, 2])", v.size(), 2 * rank, rank);
  std::vector<std::pair<int64_t, int64_t>> pads(rank);
  for (int i = 0; i < rank; ++i) {
    pads[i] = {v[2 * i], v[2 * i + 1]};
    if (pads[i].first < 0 || pads[i].second < 0)
      ThrowOpBadInput(ctx, "paddings of dimension {} are negative ({}, {})", i, pads[i].first, pads[i].second);
  }
  return pads;
}

void EvalConstantPad(KernelContext& ctx, const uint8_t* value) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const auto pads = ReadPaddings(ctx);
  const int rank = input.rank();
  for (int i = 0; i < rank; ++i)
    if (output.shape[i] != input.shape[i] + pads[i].first + pads[i].second)
      ThrowOpBadInput(ctx, "output dim {} is {}, expected {}", i, output.shape[i],
                      input.shape[i] + pads[i].first + pads[i].second);
  const size_t esize = ElementSize(output);
  // The last padded dimension k: from it inward the output is rows of
  // out[k] * block elements, each the pad value, or pads around one
  // contiguous run of the input. Writing each element once (rather than
  // filling the whole output, then copying the input over it) took
  // detr_small's PAD of [1,112,112,32] from 0.13 to 0.06 ms.
  int k = rank - 1;
  while (k >= 0 && pads[k].first == 0 && pads[k].second == 0) --k;
  if (k < 0 || input.num_elements() == 0) {
    if (input.num_elements() == 0)
      FillElements(output.data, output.num_elements(), value, esize);
    else
      std::memcpy(output.data, input.data, output.bytes);
    return;
  }
  int64_t block = 1;
  for (int i = k + 1; i < rank; ++i) block *= input.shape[i];
  const int64_t before = pads[k].first * block, run = input.shape[k] * block, after = pads[k].second * block;
  const int64_t out_row = before + run + after;
  int64_t rows = 1;
  for (int i = 0; i < k; ++i) rows *= output.shape[i];
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  ctx.pool.ParallelFor(
      rows, std::max<int64_t>(1, 32768 / std::max<int64_t>(out_row, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          uint8_t* dst = output.data + r * out_row * esize;
          // The input row this output row holds, if any.
          int64_t rem = r, src = 0;
          bool inside = true;
          for (int i = k - 1; i >= 0 && inside; --i) {
            const int64_t coord = rem % output.shape[i] - pads[i].first;
            rem /= output.shape[i];
            inside = coord >= 0 && coord < input.shape[i];
            src += coord * in_strides[i];
          }
          if (!inside) {
            FillElements(dst, out_row, value, esize);
            continue;
          }
          FillElements(dst, before, value, esize);
          std::memcpy(dst + before * esize, input.data + src * esize, static_cast<size_t>(run) * esize);
          FillElements(dst + (before + run) * esize, after, value, esize);
        }
      });
}

}  // namespace gpuclean::exec::kernels
