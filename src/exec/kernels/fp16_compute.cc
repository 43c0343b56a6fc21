#include "exec/kernels/fp16_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#if GPUCLEAN_CONV_X86
#include <immintrin.h>
// Vectors only cross always-inlined helpers, never a real call.
#pragma GCC diagnostic ignored "-Wpsabi"
// GCC 12's AVX512-FP16 conversion intrinsics trip a false maybe-uninitialized.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace gpuclean::exec::kernels::fp16 {

float Round(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  const uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff) return x;  // inf, NaN
  if (exponent >= 113) {
    // A normal half: keep 10 mantissa bits, ties to even; a carry into the
    // exponent is the correct rounding too.
    bits += 0xfff + ((bits >> 13) & 1);
    bits &= ~0x1fffu;
    if (((bits >> 23) & 0xff) > 142) return std::copysign(INFINITY, x);
    float r;
    std::memcpy(&r, &bits, 4);
    return r;
  }
  // Half subnormals are multiples of 2^-24: floats in [0.5, 1) have exactly
  // that spacing, so adding 0.5 rounds (ties to even) at the right place.
  const float magnitude = (std::fabs(x) + 0.5f) - 0.5f;
  return std::copysign(magnitude, x);
}

namespace {

// The row steps the dot products here are made of, over n accumulators:
//   AxpyRound:   acc[o] = half(acc[o] + a * w[o])     (one input, n outputs)
//   MulAddRound: acc[o] = half(acc[o] + x[o] * w[o])  (depthwise)
// and RowTimesMatrix, AxpyRound over a whole row of inputs. Vectorised with
// F16C where the CPU has it: converting to half and back is the same
// round-to-nearest-even as Round(), 8 lanes at a time. a * w is exact (two
// half values), so fusing it or not changes nothing.
void AxpyRoundScalar(float* acc, float a, const float* w, int n) {
  for (int o = 0; o < n; ++o) acc[o] = Round(acc[o] + a * w[o]);
}
void MulAddRoundScalar(float* acc, const float* x, const float* w, int n) {
  for (int o = 0; o < n; ++o) acc[o] = Round(acc[o] + x[o] * w[o]);
}

#if GPUCLEAN_CONV_X86
__attribute__((target("avx2,f16c"))) void MulAddRoundF16c(float* acc, const float* x, const float* w, int n) {
  int o = 0;
  for (; o + 8 <= n; o += 8) {
    const __m256 s =
        _mm256_add_ps(_mm256_loadu_ps(acc + o), _mm256_mul_ps(_mm256_loadu_ps(x + o), _mm256_loadu_ps(w + o)));
    _mm256_storeu_ps(acc + o, _mm256_cvtph_ps(_mm256_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  }
  for (; o < n; ++o) acc[o] = Round(acc[o] + x[o] * w[o]);
}
__attribute__((target("avx2,f16c"))) void RoundInPlaceF16c(float* v, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(v + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(v + i),
                                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  for (; i < n; ++i) v[i] = Round(v[i]);
}
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 round8(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// acc[o] = sum over kk of a[kk] * wt[kk][o], rounded to half after every
// step, for o < n: blocks of 32 outputs stay in four registers through the
// whole k loop.
__attribute__((target("avx2,f16c"))) void RowTimesMatrixF16c(const float* a, int64_t k, const float* wt, int n,
                                                              float* acc) {
  int o = 0;
  for (; o + 32 <= n; o += 32) {
    __m256 r0 = _mm256_setzero_ps(), r1 = r0, r2 = r0, r3 = r0;
    for (int64_t kk = 0; kk < k; ++kk) {
      const __m256 va = _mm256_set1_ps(a[kk]);
      const float* w = wt + kk * n + o;
      r0 = round8(_mm256_add_ps(r0, _mm256_mul_ps(va, _mm256_loadu_ps(w))));
      r1 = round8(_mm256_add_ps(r1, _mm256_mul_ps(va, _mm256_loadu_ps(w + 8))));
      r2 = round8(_mm256_add_ps(r2, _mm256_mul_ps(va, _mm256_loadu_ps(w + 16))));
      r3 = round8(_mm256_add_ps(r3, _mm256_mul_ps(va, _mm256_loadu_ps(w + 24))));
    }
    _mm256_storeu_ps(acc + o, r0);
    _mm256_storeu_ps(acc + o + 8, r1);
    _mm256_storeu_ps(acc + o + 16, r2);
    _mm256_storeu_ps(acc + o + 24, r3);
  }
  for (; o + 8 <= n; o += 8) {
    __m256 r = _mm256_setzero_ps();
    for (int64_t kk = 0; kk < k; ++kk)
      r = round8(_mm256_add_ps(r, _mm256_mul_ps(_mm256_set1_ps(a[kk]), _mm256_loadu_ps(wt + kk * n + o))));
    _mm256_storeu_ps(acc + o, r);
  }
  for (; o < n; ++o) {
    float r = 0.0f;
    for (int64_t kk = 0; kk < k; ++kk) r = Round(r + a[kk] * wt[kk * n + o]);
    acc[o] = r;
  }
}
bool HasF16c() { return conv::ActiveIsa() != conv::Isa::kGeneric && __builtin_cpu_supports("f16c"); }
#endif

using RowTimesMatrixFn = void (*)(const float*, int64_t, const float*, int, float*);

void RowTimesMatrixScalar(const float* a, int64_t k, const float* wt, int n, float* acc) {
  std::fill(acc, acc + n, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) AxpyRoundScalar(acc, a[kk], wt + kk * n, n);
}

RowTimesMatrixFn RowTimesMatrix() {
#if GPUCLEAN_CONV_X86
  if (HasF16c()) return RowTimesMatrixF16c;
#endif
  return RowTimesMatrixScalar;
}


}  // namespace

#if GPUCLEAN_CONV_X86
// The depthwise step with the binary16 FMA instruction, 16 lanes per step.
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void MulAddRoundNative(float* acc, const float* x,
                                                                                    const float* w, int n) {
  int o = 0;
  for (; o + 16 <= n; o += 16) {
    const __m256h r = _mm256_fmadd_ph(_mm512_cvtxps_ph(_mm512_loadu_ps(x + o)), _mm512_cvtxps_ph(_mm512_loadu_ps(w + o)),
                                      _mm512_cvtxps_ph(_mm512_loadu_ps(acc + o)));
    _mm512_storeu_ps(acc + o, _mm512_cvtxph_ps(r));
  }
  for (; o < n; ++o) acc[o] = Round(acc[o] + x[o] * w[o]);
}
bool HasAvx512Fp16() { return conv::ActiveIsa() == conv::Isa::kAvx512 && __builtin_cpu_supports("avx512fp16"); }
#endif

MulAddRowFn MulAddRow() {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) return MulAddRoundNative;
  if (HasF16c()) return MulAddRoundF16c;
#endif
  return MulAddRoundScalar;
}

void RoundInPlace(float* v, int64_t n) {
#if GPUCLEAN_CONV_X86
  if (HasF16c()) return RoundInPlaceF16c(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = Round(v[i]);
}

void FinishRow(const float* acc, const float* bias, int n, conv::Clamp clamp, float* dst) {
  if (bias)
    for (int o = 0; o < n; ++o) dst[o] = acc[o] + bias[o];
  else
    std::copy(acc, acc + n, dst);
  RoundInPlace(dst, n);
  for (int o = 0; o < n; ++o) dst[o] = clamp(dst[o]);
}

namespace {

#if GPUCLEAN_CONV_X86
// CPUs with AVX512-FP16 have the binary16 fused multiply-add this mode
// models as an instruction: one rounding of acc + a*b per step, 32 lanes at
// a time (the F16C path rounds the float sum instead; docs/numerics.md says
// where the two differ).

constexpr int kNativeRows = 8;

__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void ToHalf(const float* src, _Float16* dst,
                                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) _mm256_storeu_ph(dst + i, _mm512_cvtxps_ph(_mm512_loadu_ps(src + i)));
  if (i < n) {
    const __mmask16 m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m256h h = _mm512_cvtxps_ph(_mm512_maskz_loadu_ps(m, src + i));
    _mm256_mask_storeu_epi16(dst + i, m, _mm256_castph_si256(h));
  }
}

// acc[r][o] = sum over kk of a[r][kk] * wt[kk][o] for r < R, o < n, with a
// binary16 FMA per step. R rows share every weight load and give R
// independent accumulator chains, enough to hide the FMA latency.
template <int R>
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void NativeRows(const _Float16* a, int64_t k,
                                                                              const _Float16* wt, int n,
                                                                              float* acc) {
  for (int o = 0; o < n; o += 32) {
    const int lanes = std::min(32, n - o);
    const __mmask32 m = lanes == 32 ? ~0u : ((1u << lanes) - 1);
    __m512h r[R];
    for (int i = 0; i < R; ++i) r[i] = _mm512_setzero_ph();
    for (int64_t kk = 0; kk < k; ++kk) {
      const __m512h w = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, wt + kk * n + o));
      for (int i = 0; i < R; ++i) r[i] = _mm512_fmadd_ph(_mm512_set1_ph(a[i * k + kk]), w, r[i]);
    }
    for (int i = 0; i < R; ++i) {
      float* dst = acc + static_cast<int64_t>(i) * n + o;
      const __m512 lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(r[i]));
      const __m512 hi = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(r[i]), 1)));
      if (lanes >= 16) {
        _mm512_storeu_ps(dst, lo);
        if (lanes > 16) _mm512_mask_storeu_ps(dst + 16, static_cast<__mmask16>(m >> 16), hi);
      } else {
        _mm512_mask_storeu_ps(dst, static_cast<__mmask16>(m), lo);
      }
    }
  }
}

void NativeBlock(const _Float16* a, int rows, int64_t k, const _Float16* wt, int n, float* acc) {
  switch (rows) {
    case 8: return NativeRows<8>(a, k, wt, n, acc);
    case 7: return NativeRows<7>(a, k, wt, n, acc);
    case 6: return NativeRows<6>(a, k, wt, n, acc);
    case 5: return NativeRows<5>(a, k, wt, n, acc);
    case 4: return NativeRows<4>(a, k, wt, n, acc);
    case 3: return NativeRows<3>(a, k, wt, n, acc);
    case 2: return NativeRows<2>(a, k, wt, n, acc);
    default: return NativeRows<1>(a, k, wt, n, acc);
  }
}
#endif

// Fills the k inputs of one dot-product row (an output pixel's im2col row).
using RowFill = std::function<void(int64_t item, float* row)>;
// Consumes the n accumulators of one item.
using RowDone = std::function<void(int64_t item, const float* acc)>;

// items x [k] rows times the [k][n] weights, half-precision accumulation;
// the core of every fp16-compute dot-product kernel.
void DotRows(ThreadPool& pool, int64_t items, int64_t k, const std::vector<float>& wt, int n, const RowFill& fill,
             const RowDone& done) {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) {
    std::vector<_Float16> wh(wt.size());
    ToHalf(wt.data(), wh.data(), static_cast<int64_t>(wt.size()));
    const int64_t blocks = (items + kNativeRows - 1) / kNativeRows;
    pool.ParallelFor(blocks, conv::GrainFor(blocks, kNativeRows * n * k), [&](int64_t b0, int64_t b1) {
      std::vector<float> row(k), acc(static_cast<size_t>(kNativeRows) * n);
      std::vector<_Float16> rows(static_cast<size_t>(kNativeRows) * k);
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t first = b * kNativeRows;
        const int count = static_cast<int>(std::min<int64_t>(kNativeRows, items - first));
        for (int r = 0; r < count; ++r) {
          fill(first + r, row.data());
          ToHalf(row.data(), rows.data() + r * k, k);
        }
        NativeBlock(rows.data(), count, k, wh.data(), n, acc.data());
        for (int r = 0; r < count; ++r) done(first + r, acc.data() + static_cast<int64_t>(r) * n);
      }
    });
    return;
  }
#endif
  const RowTimesMatrixFn row_times = RowTimesMatrix();
  pool.ParallelFor(items, conv::GrainFor(items, static_cast<int64_t>(n) * k), [&](int64_t p0, int64_t p1) {
    std::vector<float> row(k), acc(n);
    for (int64_t p = p0; p < p1; ++p) {
      fill(p, row.data());
      row_times(row.data(), k, wt.data(), n, acc.data());
      done(p, acc.data());
    }
  });
}

}  // namespace

void Gemm(ThreadPool& pool, int64_t m, int n, int k, conv::Strided a, conv::Strided b, const float* bias,
          conv::Clamp clamp, float* c, int64_t ldc) {
  // B as [k][n] rows, so that one step updates every output of a row.
  std::vector<float> bt(static_cast<size_t>(k) * n);
  for (int j = 0; j < n; ++j)
    for (int kk = 0; kk < k; ++kk) bt[static_cast<size_t>(kk) * n + j] = b.p[j * b.row + kk * b.col];
  DotRows(
      pool, m, k, bt, n,
      [&](int64_t i, float* row) {
        const float* pa = a.p + i * a.row;
        for (int kk = 0; kk < k; ++kk) row[kk] = pa[kk * a.col];
      },
      [&](int64_t i, const float* acc) { FinishRow(acc, bias, n, clamp, c + i * ldc); });
}

void Conv(ThreadPool& pool, const float* input, const conv::ConvGeometry& g, const float* weights, int n,
          const float* bias, conv::Clamp clamp, float* c, int64_t ldc) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t k = static_cast<int64_t>(g.kh) * g.kw * g.in_c;
  // OHWI weights as [(ky, kx, ic)][o].
  std::vector<float> wt(static_cast<size_t>(k) * n);
  for (int o = 0; o < n; ++o)
    for (int64_t kk = 0; kk < k; ++kk) wt[kk * n + o] = weights[o * k + kk];
  DotRows(
      pool, pixels, k, wt, n,
      [&](int64_t p, float* row) {
        // The pixel's im2col row; zero padding contributes exact zeros
        // (acc + 0 * w = acc, already a half value).
        const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
        const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
        float* dst = row;
        for (int ky = 0; ky < g.kh; ++ky) {
          const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
          for (int kx = 0; kx < g.kw; ++kx, dst += g.in_c) {
            const int ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) {
              std::fill(dst, dst + g.in_c, 0.0f);
            } else {
              const float* src = input + ((b * g.in_h + iy) * g.in_w + ix) * g.in_pixel_stride + g.in_c_offset;
              std::copy(src, src + g.in_c, dst);
            }
          }
        }
      },
      [&](int64_t p, const float* acc) { FinishRow(acc, bias, n, clamp, c + p * ldc); });
}

void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const conv::TransposeConvGeometry& g, conv::Clamp clamp, float* out) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t taps = static_cast<int64_t>(g.kh) * g.kw;
  // [O][KH][KW][I] weights as [(ky, kx, ic)][o].
  std::vector<float> wt(static_cast<size_t>(taps) * g.in_c * g.out_c);
  for (int o = 0; o < g.out_c; ++o)
    for (int64_t kk = 0; kk < taps * g.in_c; ++kk) wt[kk * g.out_c + o] = weights[o * taps * g.in_c + kk];
  const int64_t k = taps * g.in_c;
  DotRows(
      pool, pixels, k, wt, g.out_c,
      [&](int64_t p, float* row) {
        const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
        const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
        // Output (oy, ox) gathers input (iy, ix) through tap (ky, kx) where
        // oy = iy*stride - pad + ky; taps that land elsewhere contribute zeros.
        float* dst = row;
        for (int ky = 0; ky < g.kh; ++ky) {
          const int ny = oy + g.pad_top - ky;
          const bool row_hit = ny >= 0 && ny % g.stride_h == 0 && ny / g.stride_h < g.in_h;
          for (int kx = 0; kx < g.kw; ++kx, dst += g.in_c) {
            const int nx = ox + g.pad_left - kx;
            if (!row_hit || nx < 0 || nx % g.stride_w != 0 || nx / g.stride_w >= g.in_w) {
              std::fill(dst, dst + g.in_c, 0.0f);
            } else {
              const float* src = in + ((b * g.in_h + ny / g.stride_h) * g.in_w + nx / g.stride_w) * g.in_c;
              std::copy(src, src + g.in_c, dst);
            }
          }
        }
      },
      [&](int64_t p, const float* acc) { FinishRow(acc, bias, g.out_c, clamp, out + p * g.out_c); });
}

}  // namespace gpuclean::exec::kernels::fp16
