#include "exec/kernels/fp16_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#if GPUCLEAN_CONV_X86
#include <immintrin.h>
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

// The two row steps every dot product here is made of, over n accumulators:
//   AxpyRound:   acc[o] = half(acc[o] + a * w[o])     (one input, n outputs)
//   MulAddRound: acc[o] = half(acc[o] + x[o] * w[o])  (depthwise)
// Vectorised with F16C where the CPU has it: converting to half and back is
// the same round-to-nearest-even as Round(), 8 lanes at a time.
void AxpyRoundScalar(float* acc, float a, const float* w, int n) {
  for (int o = 0; o < n; ++o) acc[o] = Round(acc[o] + a * w[o]);
}
void MulAddRoundScalar(float* acc, const float* x, const float* w, int n) {
  for (int o = 0; o < n; ++o) acc[o] = Round(acc[o] + x[o] * w[o]);
}

#if GPUCLEAN_CONV_X86
__attribute__((target("avx2,f16c"))) void AxpyRoundF16c(float* acc, float a, const float* w, int n) {
  const __m256 va = _mm256_set1_ps(a);
  int o = 0;
  for (; o + 8 <= n; o += 8) {
    // a * w is exact (two half values), so fusing it or not changes nothing.
    const __m256 s = _mm256_add_ps(_mm256_loadu_ps(acc + o), _mm256_mul_ps(va, _mm256_loadu_ps(w + o)));
    _mm256_storeu_ps(acc + o, _mm256_cvtph_ps(_mm256_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  }
  for (; o < n; ++o) acc[o] = Round(acc[o] + a * w[o]);
}
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
bool HasF16c() { return conv::ActiveIsa() != conv::Isa::kGeneric && __builtin_cpu_supports("f16c"); }
#endif

using AxpyFn = void (*)(float*, float, const float*, int);

AxpyFn Axpy() {
#if GPUCLEAN_CONV_X86
  if (HasF16c()) return AxpyRoundF16c;
#endif
  return AxpyRoundScalar;
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
  const AxpyFn axpy = Axpy();
  pool.ParallelFor(m, conv::GrainFor(m, static_cast<int64_t>(n) * k), [&](int64_t r0, int64_t r1) {
    std::vector<float> acc(n);
    for (int64_t i = r0; i < r1; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      const float* pa = a.p + i * a.row;
      for (int kk = 0; kk < k; ++kk) axpy(acc.data(), pa[kk * a.col], bt.data() + static_cast<size_t>(kk) * n, n);
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
  const AxpyFn axpy = Axpy();
  pool.ParallelFor(pixels, conv::GrainFor(pixels, n * k), [&](int64_t p0, int64_t p1) {
    std::vector<float> acc(n);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
      const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int ky = 0; ky < g.kh; ++ky) {
        const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
        for (int kx = 0; kx < g.kw; ++kx) {
          const int ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
          // Zero padding adds exact zeros: acc stays as it is.
          if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) continue;
          const float* src = input + ((b * g.in_h + iy) * g.in_w + ix) * g.in_pixel_stride + g.in_c_offset;
          const float* w = wt.data() + (static_cast<int64_t>(ky) * g.kw + kx) * g.in_c * n;
          for (int ic = 0; ic < g.in_c; ++ic) axpy(acc.data(), src[ic], w + static_cast<int64_t>(ic) * n, n);
        }
      }
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
  const AxpyFn axpy = Axpy();
  pool.ParallelFor(pixels, conv::GrainFor(pixels, taps * g.in_c * g.out_c / 2 + 1), [&](int64_t p0, int64_t p1) {
    std::vector<float> acc(g.out_c);
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t b = p / (static_cast<int64_t>(g.out_h) * g.out_w);
      const int oy = static_cast<int>(p / g.out_w % g.out_h), ox = static_cast<int>(p % g.out_w);
      std::fill(acc.begin(), acc.end(), 0.0f);
      // Output (oy, ox) gathers input (iy, ix) through tap (ky, kx) where
      // oy = iy*stride - pad + ky.
      for (int ky = 0; ky < g.kh; ++ky) {
        const int ny = oy + g.pad_top - ky;
        if (ny < 0 || ny % g.stride_h != 0 || ny / g.stride_h >= g.in_h) continue;
        for (int kx = 0; kx < g.kw; ++kx) {
          const int nx = ox + g.pad_left - kx;
          if (nx < 0 || nx % g.stride_w != 0 || nx / g.stride_w >= g.in_w) continue;
          const float* src = in + ((b * g.in_h + ny / g.stride_h) * g.in_w + nx / g.stride_w) * g.in_c;
          const float* w = wt.data() + (static_cast<int64_t>(ky) * g.kw + kx) * g.in_c * g.out_c;
          for (int ic = 0; ic < g.in_c; ++ic)
            axpy(acc.data(), src[ic], w + static_cast<int64_t>(ic) * g.out_c, g.out_c);
        }
      }
      for (int o = 0; o < g.out_c; ++o) out[p * g.out_c + o] = Finish(acc[o], bias, o, clamp);
    }
  });
}

}  // namespace gpuclean::exec::kernels::fp16
