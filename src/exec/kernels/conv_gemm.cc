// The conv family's single-precision GEMM. See conv_util.h.
//
// Why our own GEMM (dev box: Xeon with AVX-512, 2 vCPUs shared with other
// builds, so min-of-many timings; single thread; GFLOP/s):
//                          OpenBLAS as shipped  OpenBLAS SkylakeX  this GEMM
//   512^3                          16                 140-150        127-146
//   1024x256x256                    -                   152            138-143
//   56x56x24 -> 144 (1x1)           -                 62-105          87-108
//   112x112x16 -> 64 (1x1)          -                  45-70          70-106
//   7x7x192 -> 1152 (1x1)           -                  90-100         113-118
//   14x14x112 -> 672 (1x1)          -                 113-142         119-123
// OpenBLAS 0.3.21 as Debian ships it (DYNAMIC_ARCH) does not know this CPU
// and runs its SSE3 "Prescott" kernels (16-28 GFLOP/s); it only reaches the
// middle column with OPENBLAS_CORETYPE=SkylakeX set before the process
// starts. This kernel needs no environment, no extra library, fuses bias and
// activation, reads 1x1-conv activations in place and im2col rows straight
// from the input. The "sgemm peak" of the machine is ~150 GFLOP/s (OpenBLAS
// SkylakeX, 512^3); the fixture models' large convolutions run at 50-80% of it.
//
// Structure: B (weights) is packed into panels of NR columns ([kc][NR] each,
// zero-padded, K cut into blocks of at most 512); A is read in place (1x1
// convolutions, narrow N), built row-major per tile of MR rows (im2col), or
// packed [kc][MR] (strided operands). A microkernel keeps an MR x NR block of
// C in registers and runs over one K block; later K blocks accumulate into C.
// Work is split into (column block, row tile) tasks over the interpreter's
// pool. Few rows against many outputs with a long K multiply transposed
// (C^T = B A^T) so that only the small operand is packed.
//
// The microkernels are written once with GCC vector extensions, inlined into
// entry points compiled for AVX-512, AVX2+FMA or the baseline (SSE2 on
// x86-64), and chosen by cpuid at run time (GPUCLEAN_ISA=generic|avx2|avx512
// lowers the choice).
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors only cross inlined helpers
#endif

#include "exec/kernels/conv_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/limits.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ GEMM

namespace {

// Register blocking per instruction set: two vectors of columns per row, or
// one where that pads N clearly less (N = 36 takes 3 panels of 16, not 2 of
// 32; one-vector tiles run some 10% below two-vector ones), and one for
// narrow N (depth-8/16 convs and the like).
struct TileConfig {
  int lanes, nv, mr;
  int nr() const { return lanes * nv; }
};
TileConfig ConfigFor(Isa isa, int n) {
  auto one_vector_pads_less = [n](int lanes) {
    const int one = (n + lanes - 1) / lanes * lanes, two = (n + 2 * lanes - 1) / (2 * lanes) * (2 * lanes);
    return one * 115 < two * 100;
  };
  switch (isa) {
    case Isa::kAvx512:
      if (n <= 8) return {8, 1, 12};
      if (n <= 16 || one_vector_pads_less(16)) return {16, 1, 12};
      return {16, 2, 12};
    case Isa::kAvx2:
      if (n <= 8 || one_vector_pads_less(8)) return {8, 1, 12};
      return {8, 2, 6};
    case Isa::kGeneric: break;
  }
  if (n <= 4 || one_vector_pads_less(4)) return {4, 1, 12};
  return {4, 2, 6};
}

// K is cut into blocks of at most this many so that a B panel stays in L1/L2.
constexpr int kKcMax = 512;

// ---- A packing (im2col and strided A): a tile of MR rows of one k block as
// [k][MR]; rows past `rows` are zero.

template <int MR>
GPUCLEAN_CONV_INLINE void PackAStrided(Strided a, int64_t m0, int rows, int k0, int k1, float* __restrict dst) {
  const int k = k1 - k0;
  for (int p = 0; p < k; ++p) {
    const float* __restrict src = a.p + (k0 + p) * a.col + m0 * a.row;
    for (int r = 0; r < rows; ++r) dst[p * MR + r] = src[r * a.row];
    for (int r = rows; r < MR; ++r) dst[p * MR + r] = 0.0f;
  }
}

// Im2col rows of a tile, row-major: dst[r * lda + (kk - k0)] for the k
// block [k0, k1). Column kk = (ky * kw + kx) * c + i. Rows are built with
// contiguous copies (a whole window row at once when it lies inside the
// input), and the microkernel reads them in place.
GPUCLEAN_CONV_INLINE void PackIm2colRows(const float* input, const ConvGeometry& g, int64_t m0, int rows, int k0,
                                         int k1, float* __restrict dst, int64_t lda) {
  const int c = g.in_c;
  const int k = g.kh * g.kw * c;
  const bool whole = k0 == 0 && k1 == k && g.dil_w == 1;
  const int64_t row_stride = static_cast<int64_t>(g.in_w) * g.in_pixel_stride;
  for (int r = 0; r < rows; ++r) {
    const int64_t m = m0 + r;
    const int ox = static_cast<int>(m % g.out_w);
    const int64_t t = m / g.out_w;
    const int oy = static_cast<int>(t % g.out_h);
    const int64_t b = t / g.out_h;
    const int iy0 = oy * g.stride_h - g.pad_top;
    const int ix0 = ox * g.stride_w - g.pad_left;
    float* __restrict d = dst + r * lda;
    const float* base = input + b * g.in_h * row_stride + g.in_c_offset;
    if (whole && ix0 >= 0 && ix0 + g.kw <= g.in_w) {
      // Each window row is kw pixels side by side in the input.
      const bool dense = g.in_pixel_stride == c;
      for (int ky = 0; ky < g.kh; ++ky) {
        const int iy = iy0 + ky * g.dil_h;
        float* __restrict out = d + ky * g.kw * c;
        if (iy < 0 || iy >= g.in_h) {
          for (int i = 0; i < g.kw * c; ++i) out[i] = 0.0f;
          continue;
        }
        const float* __restrict src = base + iy * row_stride + static_cast<int64_t>(ix0) * g.in_pixel_stride;
        if (dense) {
          for (int i = 0; i < g.kw * c; ++i) out[i] = src[i];
        } else {
          for (int kx = 0; kx < g.kw; ++kx)
            for (int i = 0; i < c; ++i) out[kx * c + i] = src[kx * g.in_pixel_stride + i];
        }
      }
      continue;
    }
    for (int tap = k0 / c; tap * c < k1; ++tap) {
      const int ky = tap / g.kw, kx = tap % g.kw;
      const int i0 = std::max(0, k0 - tap * c), i1 = std::min(c, k1 - tap * c);
      float* __restrict out = d + (tap * c - k0);
      const int iy = iy0 + ky * g.dil_h, ix = ix0 + kx * g.dil_w;
      if (iy >= 0 && iy < g.in_h && ix >= 0 && ix < g.in_w) {
        const float* __restrict src = base + iy * row_stride + static_cast<int64_t>(ix) * g.in_pixel_stride;
        for (int i = i0; i < i1; ++i) out[i] = src[i];
      } else {
        for (int i = i0; i < i1; ++i) out[i] = 0.0f;
      }
    }
  }
}

// ---- the microkernel: an MR x NR block of C, all of one k block.
//   first block: C = bias + A*B;  later blocks: C += A*B;  last block: clamp.
// A is either a packed tile ([k][MR]) or MR rows read in place (stride lda).

template <int L, int MR, int NV, bool kPackedA>
GPUCLEAN_CONV_INLINE void MicroTile(int k, const float* __restrict ap, int64_t lda, const float* __restrict bp,
                                    const float* __restrict bias, bool first, bool last, float lo, float hi,
                                    float* __restrict c, int64_t ldc, int rows, int cols) {
  using V = Vec<L>;
  constexpr int NR = L * NV;
  const bool full = rows == MR && cols == NR;
  V acc[MR][NV];
  if (first) {
    V init[NV];
#pragma GCC unroll 4
    for (int j = 0; j < NV; ++j) init[j] = LoadU<L>(bias + j * L);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = init[j];
  } else if (full) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = LoadU<L>(c + r * ldc + j * L);
  } else {
    float tmp[MR * NR] = {};
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < cols; ++q) tmp[r * NR + q] = c[r * ldc + q];
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = LoadU<L>(tmp + r * NR + j * L);
  }
  // The accumulation loop: one rank-1 update of the MR x NR block per k.
  if constexpr (kPackedA) {
    for (int p = 0; p < k; ++p) {
      V bv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) bv[j] = LoadU<L>(bp + p * NR + j * L);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        const float av = ap[p * MR + r];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[r][j] += av * bv[j];
      }
    }
  } else {
    const float* arow[MR];
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r) arow[r] = ap + (r < rows ? r : rows - 1) * lda;
    for (int p = 0; p < k; ++p) {
      V bv[NV];
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) bv[j] = LoadU<L>(bp + p * NR + j * L);
#pragma GCC unroll 32
      for (int r = 0; r < MR; ++r) {
        const float av = arow[r][p];
#pragma GCC unroll 4
        for (int j = 0; j < NV; ++j) acc[r][j] += av * bv[j];
      }
    }
  }
  if (last) {
    const V vlo = Splat<L>(lo), vhi = Splat<L>(hi);
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) acc[r][j] = Min<L>(Max<L>(acc[r][j], vlo), vhi);
  }
  if (full) {
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) StoreU<L>(c + r * ldc + j * L, acc[r][j]);
  } else {
    float tmp[MR * NR];
#pragma GCC unroll 32
    for (int r = 0; r < MR; ++r)
#pragma GCC unroll 4
      for (int j = 0; j < NV; ++j) StoreU<L>(tmp + r * NR + j * L, acc[r][j]);
    for (int r = 0; r < rows; ++r)
      for (int q = 0; q < cols; ++q) c[r * ldc + q] = tmp[r * NR + q];
  }
}

enum class ASource { kInPlace, kStrided, kIm2col };

struct GemmJob {
  int64_t m = 0;
  const PackedB* b = nullptr;
  Clamp clamp;
  float* c = nullptr;
  int64_t ldc = 0;
  ASource source = ASource::kInPlace;
  Strided a;                          // kInPlace (a.col == 1) and kStrided
  const ConvGeometry* geo = nullptr;  // kIm2col
  const float* input = nullptr;
  int64_t lda = 0;  // row stride of the im2col tile
  // The k block being run and the task grid over it: (column block, row tile),
  // row tile fastest.
  int kb = 0;
  int64_t m_tiles = 0;
  int panels = 0;
  int panels_per_block = 1;
};

// Runs tasks [t0, t1) of the job's current k block. `apack` holds MR * kc floats.
template <int L, int MR, int NV>
GPUCLEAN_CONV_INLINE void RunTasks(const GemmJob& job, int64_t t0, int64_t t1, float* apack) {
  constexpr int NR = L * NV;
  const PackedB& b = *job.b;
  const int k0 = job.kb * b.kc, k1 = std::min(b.k, k0 + b.kc), kc = k1 - k0;
  const bool first = job.kb == 0, last = k1 == b.k;
  const float* bblock = b.data.data() + static_cast<int64_t>(k0) * job.panels * NR;
  int64_t packed_task = -1;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t tile = t % job.m_tiles;
    const int block = static_cast<int>(t / job.m_tiles);
    const int64_t m0 = tile * MR;
    const int rows = static_cast<int>(std::min<int64_t>(MR, job.m - m0));
    if (job.source == ASource::kIm2col && packed_task != t) {
      PackIm2colRows(job.input, *job.geo, m0, rows, k0, k1, apack, job.lda);
      packed_task = t;
    } else if (job.source == ASource::kStrided && packed_task != t) {
      PackAStrided<MR>(job.a, m0, rows, k0, k1, apack);
      packed_task = t;
    }
    const int p0 = block * job.panels_per_block;
    const int p1 = std::min(job.panels, p0 + job.panels_per_block);
    for (int p = p0; p < p1; ++p) {
      const int n0 = p * NR;
      const int cols = std::min(NR, b.n - n0);
      const float* bp = bblock + static_cast<int64_t>(p) * kc * NR;
      float* c = job.c + m0 * job.ldc + n0;
      if (job.source == ASource::kInPlace)
        MicroTile<L, MR, NV, false>(kc, job.a.p + m0 * job.a.row + k0, job.a.row, bp, b.bias.data() + n0, first, last,
                                    job.clamp.lo, job.clamp.hi, c, job.ldc, rows, cols);
      else if (job.source == ASource::kIm2col)
        MicroTile<L, MR, NV, false>(kc, apack, job.lda, bp, b.bias.data() + n0, first, last, job.clamp.lo, job.clamp.hi,
                                    c, job.ldc, rows, cols);
      else
        MicroTile<L, MR, NV, true>(kc, apack, MR, bp, b.bias.data() + n0, first, last, job.clamp.lo, job.clamp.hi, c,
                                   job.ldc, rows, cols);
    }
  }
}

using RunFn = void (*)(const GemmJob&, int64_t, int64_t, float*);

#define GPUCLEAN_DEFINE_RUN(name, attr, L, MR, NV) \
  attr void name(const GemmJob& job, int64_t t0, int64_t t1, float* apack) { RunTasks<L, MR, NV>(job, t0, t1, apack); }

GPUCLEAN_DEFINE_RUN(RunGeneric_4_6_2, GPUCLEAN_CONV_HOT, 4, 6, 2)
GPUCLEAN_DEFINE_RUN(RunGeneric_4_12_1, GPUCLEAN_CONV_HOT, 4, 12, 1)
#if GPUCLEAN_CONV_X86
GPUCLEAN_DEFINE_RUN(RunAvx2_8_6_2, GPUCLEAN_TARGET_AVX2, 8, 6, 2)
GPUCLEAN_DEFINE_RUN(RunAvx2_8_12_1, GPUCLEAN_TARGET_AVX2, 8, 12, 1)
GPUCLEAN_DEFINE_RUN(RunAvx512_16_12_2, GPUCLEAN_TARGET_AVX512, 16, 12, 2)
GPUCLEAN_DEFINE_RUN(RunAvx512_16_12_1, GPUCLEAN_TARGET_AVX512, 16, 12, 1)
GPUCLEAN_DEFINE_RUN(RunAvx512_8_12_1, GPUCLEAN_TARGET_AVX512, 8, 12, 1)
#endif
#undef GPUCLEAN_DEFINE_RUN

RunFn SelectRun(const PackedB& b) {
  const int lanes = b.nr / b.nv;
#if GPUCLEAN_CONV_X86
  if (b.isa == Isa::kAvx512) {
    if (b.nv == 2) return RunAvx512_16_12_2;
    return lanes == 16 ? RunAvx512_16_12_1 : RunAvx512_8_12_1;
  }
  if (b.isa == Isa::kAvx2) return b.nv == 2 ? RunAvx2_8_6_2 : RunAvx2_8_12_1;
#endif
  (void)lanes;
  return b.nv == 2 ? RunGeneric_4_6_2 : RunGeneric_4_12_1;
}

void RunJob(ThreadPool& pool, GemmJob& job) {
  const PackedB& b = *job.b;
  if (job.m <= 0 || b.n <= 0) return;
  const int nr = b.nr, mr = b.mr;
  const int kc = std::max(1, std::min(b.k, b.kc));
  job.m_tiles = (job.m + mr - 1) / mr;
  job.panels = (b.n + nr - 1) / nr;
  // Column blocks of B that stay in L2 next to the A tile.
  const int64_t panel_bytes = static_cast<int64_t>(kc) * nr * 4;
  job.panels_per_block = static_cast<int>(std::clamp<int64_t>((512 * 1024) / panel_bytes, 1, job.panels));
  const int64_t blocks = (job.panels + job.panels_per_block - 1) / job.panels_per_block;
  const int64_t tasks = job.m_tiles * blocks;
  const int64_t work_per_task = static_cast<int64_t>(mr) * nr * job.panels_per_block * kc;
  const RunFn run = SelectRun(b);
  const int k_blocks = b.k == 0 ? 1 : (b.k + b.kc - 1) / b.kc;
  const bool packs_a = job.source != ASource::kInPlace;
  // Im2col rows: a stride that is not a multiple of 4 KiB keeps the MR rows
  // out of each other's cache sets.
  job.lda = (kc * 4) % 4096 == 0 ? kc + 16 : kc;
  for (job.kb = 0; job.kb < k_blocks; ++job.kb) {
    pool.ParallelFor(tasks, GrainFor(tasks, work_per_task), [&](int64_t t0, int64_t t1) {
      std::vector<float> apack(packs_a ? static_cast<size_t>(mr) * job.lda : 0);
      run(job, t0, t1, apack.data());
    });
  }
}

// ---- B packing: per k block, panels of [kc][NR].

// dst[j * dst_stride + i] = src[i * src_stride + j] for an 8x8 block.
GPUCLEAN_CONV_INLINE void Transpose8x8(const float* __restrict src, int64_t src_stride, float* __restrict dst,
                                       int64_t dst_stride) {
  using V = Vec<8>;
#if defined(__clang__)
#define GPUCLEAN_SHUFFLE8(x, y, ...) __builtin_shufflevector(x, y, __VA_ARGS__)
#else
  using I = int __attribute__((vector_size(32)));
#define GPUCLEAN_SHUFFLE8(x, y, ...) __builtin_shuffle(x, y, I{__VA_ARGS__})
#endif
  V r[8];
#pragma GCC unroll 8
  for (int i = 0; i < 8; ++i) r[i] = LoadU<8>(src + i * src_stride);
  V a[8], b[8], c[8];
#pragma GCC unroll 4
  for (int i = 0; i < 8; i += 2) {
    a[i] = GPUCLEAN_SHUFFLE8(r[i], r[i + 1], 0, 8, 2, 10, 4, 12, 6, 14);
    a[i + 1] = GPUCLEAN_SHUFFLE8(r[i], r[i + 1], 1, 9, 3, 11, 5, 13, 7, 15);
  }
#pragma GCC unroll 2
  for (int h = 0; h < 8; h += 4) {
    b[h + 0] = GPUCLEAN_SHUFFLE8(a[h + 0], a[h + 2], 0, 1, 8, 9, 4, 5, 12, 13);
    b[h + 2] = GPUCLEAN_SHUFFLE8(a[h + 0], a[h + 2], 2, 3, 10, 11, 6, 7, 14, 15);
    b[h + 1] = GPUCLEAN_SHUFFLE8(a[h + 1], a[h + 3], 0, 1, 8, 9, 4, 5, 12, 13);
    b[h + 3] = GPUCLEAN_SHUFFLE8(a[h + 1], a[h + 3], 2, 3, 10, 11, 6, 7, 14, 15);
  }
#pragma GCC unroll 4
  for (int j = 0; j < 4; ++j) {
    c[j] = GPUCLEAN_SHUFFLE8(b[j], b[j + 4], 0, 1, 2, 3, 8, 9, 10, 11);
    c[j + 4] = GPUCLEAN_SHUFFLE8(b[j], b[j + 4], 4, 5, 6, 7, 12, 13, 14, 15);
  }
#undef GPUCLEAN_SHUFFLE8
#pragma GCC unroll 8
  for (int j = 0; j < 8; ++j) StoreU<8>(dst + j * dst_stride, c[j]);
}

GPUCLEAN_CONV_INLINE void PackPanelsBody(Strided b, int n, int k, int kc_max, int nr, float* __restrict out, int p0,
                                         int p1) {
  const int panels = (n + nr - 1) / nr;
  for (int k0 = 0; k0 < k; k0 += kc_max) {
    const int k1 = std::min(k, k0 + kc_max), kc = k1 - k0;
    for (int p = p0; p < p1; ++p) {
      float* __restrict dst = out + (static_cast<int64_t>(k0) * panels + static_cast<int64_t>(p) * kc) * nr;
      const int n0 = p * nr;
      const int cols = std::min(nr, n - n0);
      if (b.col == 1) {
        // Rows of B are contiguous in k: 8x8 transposes, then the edges.
        const float* __restrict src = b.p + n0 * b.row + k0;
        const int kc8 = kc & ~7, cols8 = cols & ~7;
        for (int i = 0; i < kc8; i += 8)
          for (int q = 0; q < cols8; q += 8) Transpose8x8(src + q * b.row + i, b.row, dst + i * nr + q, nr);
        for (int i = 0; i < kc; ++i)
          for (int q = (i < kc8 ? cols8 : 0); q < cols; ++q) dst[i * nr + q] = src[q * b.row + i];
      } else {
        for (int i = 0; i < kc; ++i) {
          const float* __restrict src = b.p + (k0 + i) * b.col + n0 * b.row;
          if (b.row == 1) {
            for (int q = 0; q < cols; ++q) dst[i * nr + q] = src[q];
          } else {
            for (int q = 0; q < cols; ++q) dst[i * nr + q] = src[q * b.row];
          }
        }
      }
      for (int i = 0; i < kc; ++i)
        for (int q = cols; q < nr; ++q) dst[i * nr + q] = 0.0f;
    }
  }
}

using PackFn = void (*)(Strided, int, int, int, int, float*, int, int);
GPUCLEAN_CONV_HOT void PackPanelsGeneric(Strided b, int n, int k, int kc, int nr, float* out, int p0, int p1) {
  PackPanelsBody(b, n, k, kc, nr, out, p0, p1);
}
#if GPUCLEAN_CONV_X86
GPUCLEAN_TARGET_AVX2 void PackPanelsAvx2(Strided b, int n, int k, int kc, int nr, float* out, int p0, int p1) {
  PackPanelsBody(b, n, k, kc, nr, out, p0, p1);
}
GPUCLEAN_TARGET_AVX512 void PackPanelsAvx512(Strided b, int n, int k, int kc, int nr, float* out, int p0, int p1) {
  PackPanelsBody(b, n, k, kc, nr, out, p0, p1);
}
#endif

// dst[j * dst_ld + i] = clamp(src[i * src_ld + j] + bias[i]) for i < rows,
// j < cols, over rows [r0, r1): the transposed product back into C.
GPUCLEAN_CONV_INLINE void TransposeOutBody(const float* __restrict src, int64_t src_ld, int rows, int cols,
                                           const float* bias, Clamp clamp, float* __restrict dst, int64_t dst_ld,
                                           int r0, int r1) {
  float block[64];
  const Vec<8> vlo = Splat<8>(clamp.lo), vhi = Splat<8>(clamp.hi);
  const int cols8 = cols & ~7;
  for (int i = r0; i < r1; i += 8) {
    if (i + 8 <= rows) {
      const Vec<8> vb = bias ? LoadU<8>(bias + i) : Vec<8>{};
      for (int j = 0; j < cols8; j += 8) {
        Transpose8x8(src + static_cast<int64_t>(i) * src_ld + j, src_ld, block, 8);
#pragma GCC unroll 8
        for (int u = 0; u < 8; ++u)
          StoreU<8>(dst + (j + u) * dst_ld + i, Min<8>(Max<8>(LoadU<8>(block + u * 8) + vb, vlo), vhi));
      }
      for (int j = cols8; j < cols; ++j)
        for (int u = 0; u < 8; ++u)
          dst[j * dst_ld + i + u] = clamp(src[(i + u) * src_ld + j] + (bias ? bias[i + u] : 0));
    } else {
      for (int u = i; u < rows; ++u)
        for (int j = 0; j < cols; ++j) dst[j * dst_ld + u] = clamp(src[u * src_ld + j] + (bias ? bias[u] : 0.0f));
    }
  }
}

using TransposeOutFn = void (*)(const float*, int64_t, int, int, const float*, Clamp, float*, int64_t, int, int);
GPUCLEAN_CONV_HOT void TransposeOutGeneric(const float* src, int64_t src_ld, int rows, int cols, const float* bias,
                                           Clamp clamp, float* dst, int64_t dst_ld, int r0, int r1) {
  TransposeOutBody(src, src_ld, rows, cols, bias, clamp, dst, dst_ld, r0, r1);
}
#if GPUCLEAN_CONV_X86
GPUCLEAN_TARGET_AVX2 void TransposeOutAvx2(const float* src, int64_t src_ld, int rows, int cols, const float* bias,
                                           Clamp clamp, float* dst, int64_t dst_ld, int r0, int r1) {
  TransposeOutBody(src, src_ld, rows, cols, bias, clamp, dst, dst_ld, r0, r1);
}
GPUCLEAN_TARGET_AVX512 void TransposeOutAvx512(const float* src, int64_t src_ld, int rows, int cols, const float* bias,
                                               Clamp clamp, float* dst, int64_t dst_ld, int r0, int r1) {
  TransposeOutBody(src, src_ld, rows, cols, bias, clamp, dst, dst_ld, r0, r1);
}
#endif

void PackBImpl(ThreadPool* pool, Strided b, int n, int k, const float* bias, PackedB* out) {
  const Isa isa = ActiveIsa();
  const TileConfig cfg = ConfigFor(isa, n);
  out->isa = isa;
  out->n = n;
  out->k = k;
  out->nr = cfg.nr();
  out->nv = cfg.nv;
  out->mr = cfg.mr;
  const int k_blocks = std::max(1, (k + kKcMax - 1) / kKcMax);
  out->kc = std::max(1, (k + k_blocks - 1) / k_blocks);
  const int panels = (n + out->nr - 1) / out->nr;
  out->data.Resize(static_cast<size_t>(panels) * std::max(k, 1) * out->nr);
  out->bias.assign(static_cast<size_t>(panels) * out->nr, 0.0f);
  if (bias) std::copy(bias, bias + n, out->bias.begin());
  if (k == 0) {
    std::fill(out->data.data(), out->data.data() + out->data.size(), 0.0f);
    return;
  }
  PackFn pack = PackPanelsGeneric;
#if GPUCLEAN_CONV_X86
  if (isa == Isa::kAvx512) pack = PackPanelsAvx512;
  if (isa == Isa::kAvx2) pack = PackPanelsAvx2;
#endif
  auto work = [&](int64_t p0, int64_t p1) {
    pack(b, n, k, out->kc, out->nr, out->data.data(), static_cast<int>(p0), static_cast<int>(p1));
  };
  if (pool)
    pool->ParallelFor(panels, GrainFor(panels, static_cast<int64_t>(k) * out->nr * 8), work);
  else
    work(0, panels);
}

// ---- small M: dot products against B in place (B and A contiguous in k).

template <int L>
GPUCLEAN_CONV_INLINE float Dot(const float* __restrict x, const float* __restrict y, int k) {
  using V = Vec<L>;
  V s0{}, s1{}, s2{}, s3{};
  int p = 0;
  // The accumulation: four interleaved vector partial sums, then a tree.
  for (; p + 4 * L <= k; p += 4 * L) {
    s0 += LoadU<L>(x + p) * LoadU<L>(y + p);
    s1 += LoadU<L>(x + p + L) * LoadU<L>(y + p + L);
    s2 += LoadU<L>(x + p + 2 * L) * LoadU<L>(y + p + 2 * L);
    s3 += LoadU<L>(x + p + 3 * L) * LoadU<L>(y + p + 3 * L);
  }
  for (; p + L <= k; p += L) s0 += LoadU<L>(x + p) * LoadU<L>(y + p);
  const V s = (s0 + s1) + (s2 + s3);
  float sum = 0.0f;
  for (int i = 0; i < L; ++i) sum += s[i];
  for (; p < k; ++p) sum += x[p] * y[p];
  return sum;
}

struct DotJob {
  int64_t m;
  int k;
  Strided a, b;
  const float* bias;
  Clamp clamp;
  float* c;
  int64_t ldc;
};

template <int L>
GPUCLEAN_CONV_INLINE void RunDots(const DotJob& j, int64_t n0, int64_t n1) {
  for (int64_t n = n0; n < n1; ++n) {
    const float* bn = j.b.p + n * j.b.row;
    const float bias = j.bias ? j.bias[n] : 0.0f;
    for (int64_t m = 0; m < j.m; ++m) j.c[m * j.ldc + n] = j.clamp(Dot<L>(j.a.p + m * j.a.row, bn, j.k) + bias);
  }
}

GPUCLEAN_CONV_HOT void RunDotsGeneric(const DotJob& j, int64_t n0, int64_t n1) { RunDots<4>(j, n0, n1); }
#if GPUCLEAN_CONV_X86
GPUCLEAN_TARGET_AVX2 void RunDotsAvx2(const DotJob& j, int64_t n0, int64_t n1) { RunDots<8>(j, n0, n1); }
GPUCLEAN_TARGET_AVX512 void RunDotsAvx512(const DotJob& j, int64_t n0, int64_t n1) { RunDots<16>(j, n0, n1); }
#endif

}  // namespace

void PackB(Strided b, int n, int k, const float* bias, PackedB* out) { PackBImpl(nullptr, b, n, k, bias, out); }
void PackB(ThreadPool& pool, Strided b, int n, int k, const float* bias, PackedB* out) {
  PackBImpl(&pool, b, n, k, bias, out);
}

void Gemm(ThreadPool& pool, int64_t m, Strided a, const PackedB& b, Clamp clamp, float* c, int64_t ldc) {
  GemmJob job;
  job.m = m;
  job.b = &b;
  job.clamp = clamp;
  job.c = c;
  job.ldc = ldc;
  job.a = a;
  // Reading A in place saves packing it, which costs as much as the math when
  // N is narrow; for wide N the packed tile is reused across many panels and
  // avoids cache-set conflicts between rows of a large A.
  job.source = a.col == 1 && b.n <= 96 ? ASource::kInPlace : ASource::kStrided;
  RunJob(pool, job);
}

const PackedB& PackedWeights(KernelContext& ctx, int weights, int bias_input, int slot, Strided b, int n, int k,
                             const float* bias, PackedB* scratch) {
  const bool fixed =
      ctx.input_is_fixed(weights) && (bias_input < 0 || !ctx.has_input(bias_input) || ctx.input_is_fixed(bias_input));
  if (!fixed || !ctx.state) {
    PackB(ctx.pool, b, n, k, bias, scratch);
    return *scratch;
  }
  if (!ctx.state->has_value()) ctx.state->emplace<std::vector<std::shared_ptr<PackedB>>>();
  auto& packs = std::any_cast<std::vector<std::shared_ptr<PackedB>>&>(*ctx.state);
  if (static_cast<int>(packs.size()) <= slot) packs.resize(slot + 1);
  auto& packed = packs[slot];
  if (!packed || packed->source != b.p || packed->isa != ActiveIsa()) {
    CheckMemory(static_cast<uint64_t>(n) * k * sizeof(float),
                fmt::format("packed weights of op {} ({})", ctx.op_index, ctx.op.name()));
    packed = std::make_shared<PackedB>();
    PackB(ctx.pool, b, n, k, bias, packed.get());
    packed->source = b.p;
  }
  return *packed;
}

void Gemm(ThreadPool& pool, int64_t m, int n, int k, Strided a, Strided b, const float* bias, Clamp clamp, float* c,
          int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (m < 4 && a.col == 1 && b.col == 1) {
    const DotJob job{m, k, a, b, bias, clamp, c, ldc};
    void (*run)(const DotJob&, int64_t, int64_t) = RunDotsGeneric;
#if GPUCLEAN_CONV_X86
    if (ActiveIsa() == Isa::kAvx512) run = RunDotsAvx512;
    if (ActiveIsa() == Isa::kAvx2) run = RunDotsAvx2;
#endif
    pool.ParallelFor(n, GrainFor(n, m * std::max(k, 1)), [&](int64_t n0, int64_t n1) { run(job, n0, n1); });
    return;
  }
  if (a.col == 1 && b.col == 1 && k >= 512 && n >= 2 * m && k % 1024 != 0) {
    // Few rows, many output channels and a long reduction (7x7 maps of the
    // late layers): packing B costs a good part of the product. Multiply the
    // other way round - C^T = B * A^T with the weights' rows read in place and
    // the few activation rows packed - then transpose into C, adding the bias
    // and clamping on the way. Measured (interleaved A/B, AVX-512): 49x192x1152
    // 66 vs 58 GFLOP/s, 16x256x1000 68 vs 39; below K ~ 500 it loses
    // (36x96x384: 56 vs 91), so it is not used there.
    PackedB packed;
    PackBImpl(&pool, a, static_cast<int>(m), k, nullptr, &packed);
    std::unique_ptr<float[]> ct(new float[static_cast<size_t>(n) * m]);
    GemmJob job;
    job.m = n;
    job.b = &packed;
    job.c = ct.get();
    job.ldc = m;
    job.a = b;
    job.source = ASource::kInPlace;
    RunJob(pool, job);
    TransposeOutFn out = TransposeOutGeneric;
#if GPUCLEAN_CONV_X86
    if (packed.isa == Isa::kAvx512) out = TransposeOutAvx512;
    if (packed.isa == Isa::kAvx2) out = TransposeOutAvx2;
#endif
    const int64_t blocks = (n + 7) / 8;
    pool.ParallelFor(blocks, GrainFor(blocks, 8 * m), [&](int64_t b0, int64_t b1) {
      out(ct.get(), m, n, static_cast<int>(m), bias, clamp, c, ldc, static_cast<int>(b0 * 8),
          static_cast<int>(std::min<int64_t>(n, b1 * 8)));
    });
    return;
  }
  PackedB packed;
  PackBImpl(&pool, b, n, k, bias, &packed);
  Gemm(pool, m, a, packed, clamp, c, ldc);
}

void ConvGemm(ThreadPool& pool, const float* input, const ConvGeometry& g, const PackedB& b, Clamp clamp, float* c,
              int64_t ldc) {
  GemmJob job;
  job.m = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  job.b = &b;
  job.clamp = clamp;
  job.c = c;
  job.ldc = ldc;
  job.geo = &g;
  job.input = input;
  job.source = ASource::kIm2col;
  RunJob(pool, job);
}

}  // namespace gpuclean::exec::kernels::conv
