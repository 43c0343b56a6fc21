#include "exec/kernels/fp16_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if GPUCLEAN_CONV_X86
#include <immintrin.h>
// Vectors only cross always-inlined helpers, never a real call.
#pragma GCC diagnostic ignored "-Wpsabi"
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

// out = clamp(round(acc + bias)), the end of every dot product.
inline float Finish(float acc, const float* bias, int n, conv::Clamp clamp) {
  return clamp(Round(acc + (bias ? bias[n] : 0.0f)));
}

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

MulAddRowFn MulAddRow() {
#if GPUCLEAN_CONV_X86
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

void Gemm(ThreadPool& pool, int64_t m, int n, int k, conv::Strided a, conv::Strided b, const float* bias,
          conv::Clamp clamp, float* c, int64_t ldc) {
  // B as [k][n] rows, so that one step updates every output of a row.
  std::vector<float> bt(static_cast<size_t>(k) * n);
  for (int j = 0; j < n; ++j)
    for (int kk = 0; kk < k; ++kk) bt[static_cast<size_t>(kk) * n + j] = b.p[j * b.row + kk * b.col];
  const RowTimesMatrixFn row_times = RowTimesMatrix();
  pool.ParallelFor(m, conv::GrainFor(m, static_cast<int64_t>(n) * k), [&](int64_t r0, int64_t r1) {
    std::vector<float> row(k), acc(n);
    for (int64_t i = r0; i < r1; ++i) {
      const float* pa = a.p + i * a.row;
      for (int kk = 0; kk < k; ++kk) row[kk] = pa[kk * a.col];
      row_times(row.data(), k, bt.data(), n, acc.data());
      for (int j = 0; j < n; ++j) c[i * ldc + j] = Finish(acc[j], bias, j, clamp);
    }
  });
}

void Conv(ThreadPool& pool, const float* input, const conv::ConvGeometry& g, const float* weights, int n,
          const float* bias, conv::Clamp clamp, float* c, int64_t ldc) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t k = static_cast<int64_t>(g.kh) * g.kw * g.in_c;
  // OHWI weights as [(ky, kx, ic)][o].
  std::vector<float> wt(static_cast<size_t>(k) * n);
  for (int o = 0; o < n; ++o)
    for (int64_t kk = 0; kk < k; ++kk) wt[kk * n + o] = weights[o * k + kk];
  const RowTimesMatrixFn row_times = RowTimesMatrix();
  pool.ParallelFor(pixels, conv::GrainFor(pixels, n * k), [&](int64_t p0, int64_t p1) {
    // The pixel's im2col row; zero padding contributes exact zeros
    // (acc + 0 * w = acc, already a half value).
    std::vector<float> row(k), acc(n);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
      const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
      float* dst = row.data();
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
      row_times(row.data(), k, wt.data(), n, acc.data());
      for (int o = 0; o < n; ++o) c[p * ldc + o] = Finish(acc[o], bias, o, clamp);
    }
  });
}

void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const conv::TransposeConvGeometry& g, conv::Clamp clamp, float* out) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t taps = static_cast<int64_t>(g.kh) * g.kw;
  // [O][KH][KW][I] weights as [(ky, kx, ic)][o].
  std::vector<float> wt(static_cast<size_t>(taps) * g.in_c * g.out_c);
  for (int o = 0; o < g.out_c; ++o)
    for (int64_t kk = 0; kk < taps * g.in_c; ++kk) wt[kk * g.out_c + o] = weights[o * taps * g.in_c + kk];
  const RowTimesMatrixFn row_times = RowTimesMatrix();
  const int64_t k = taps * g.in_c;
  pool.ParallelFor(pixels, conv::GrainFor(pixels, k * g.out_c / 2 + 1), [&](int64_t p0, int64_t p1) {
    std::vector<float> row(k), acc(g.out_c);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
      const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
      // Output (oy, ox) gathers input (iy, ix) through tap (ky, kx) where
      // oy = iy*stride - pad + ky; taps that land elsewhere contribute zeros.
      float* dst = row.data();
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
      row_times(row.data(), k, wt.data(), g.out_c, acc.data());
      for (int o = 0; o < g.out_c; ++o) out[p * g.out_c + o] = Finish(acc[o], bias, o, clamp);
    }
  });
}

}  // namespace gpuclean::exec::kernels::fp16
