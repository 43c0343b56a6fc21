#include "exec/kernels/fp16_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

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

}  // namespace

void Gemm(ThreadPool& pool, int64_t m, int n, int k, conv::Strided a, conv::Strided b, const float* bias,
          conv::Clamp clamp, float* c, int64_t ldc) {
  pool.ParallelFor(m, conv::GrainFor(m, static_cast<int64_t>(n) * k * 4), [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      for (int j = 0; j < n; ++j) {
        const float* pa = a.p + i * a.row;
        const float* pb = b.p + j * b.row;
        float acc = 0.0f;
        for (int kk = 0; kk < k; ++kk) acc = Round(acc + pa[kk * a.col] * pb[kk * b.col]);
        c[i * ldc + j] = Finish(acc, bias, j, clamp);
      }
  });
}

void Conv(ThreadPool& pool, const float* input, const conv::ConvGeometry& g, const float* weights, int n,
          const float* bias, conv::Clamp clamp, float* c, int64_t ldc) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t k = static_cast<int64_t>(g.kh) * g.kw * g.in_c;
  pool.ParallelFor(pixels, conv::GrainFor(pixels, n * k * 4), [&](int64_t p0, int64_t p1) {
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
          const int64_t tap = (static_cast<int64_t>(ky) * g.kw + kx) * g.in_c;
          for (int o = 0; o < n; ++o) {
            const float* w = weights + o * k + tap;
            float a = acc[o];
            for (int ic = 0; ic < g.in_c; ++ic) a = Round(a + src[ic] * w[ic]);
            acc[o] = a;
          }
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
          for (int o = 0; o < g.out_c; ++o) {
            const float* w = weights + ((static_cast<int64_t>(o) * g.kh + ky) * g.kw + kx) * g.in_c;
            float a = acc[o];
            for (int ic = 0; ic < g.in_c; ++ic) a = Round(a + src[ic] * w[ic]);
            acc[o] = a;
          }
        }
      }
      for (int o = 0; o < g.out_c; ++o) out[p * g.out_c + o] = Finish(acc[o], bias, o, clamp);
    }
  });
}

}  // namespace gpuclean::exec::kernels::fp16
