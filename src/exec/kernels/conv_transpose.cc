// The transposed-convolution core (TRANSPOSE_CONV and MediaPipe's
// Convolution2DTransposeBias): a GEMM per input pixel, then each output row
// gathers the taps that land on it. See conv_util.h.
#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"  // vectors only cross inlined helpers
#endif

#include "exec/kernels/conv_util.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpuclean/error.h"
#include "gpuclean/shapes.h"

namespace gpuclean::exec::kernels::conv {

// ------------------------------------------------------------------ transposed convolution

namespace {

// Output row (b, oy) = bias + the GEMM columns of the input pixels whose taps
// land on it; `cols` holds, per input pixel, KH*KW*O values ordered
// (ky, kx, o). Each input row reaching this output row is walked once and its
// taps added where they land (the row belongs to this thread).
GPUCLEAN_CONV_HOT void GatherTransposeRows(const float* __restrict cols, const float* bias,
                                           const TransposeConvGeometry& g, Clamp clamp, float* __restrict out,
                                           int64_t r0, int64_t r1) {
  const int oc = g.out_c;
  const int64_t pixel_cols = static_cast<int64_t>(g.kh) * g.kw * oc;
  for (int64_t r = r0; r < r1; ++r) {
    const int64_t b = r / g.out_h;
    const int oy = static_cast<int>(r % g.out_h);
    float* __restrict row = out + r * g.out_w * oc;
    for (int ox = 0; ox < g.out_w; ++ox)
      for (int o = 0; o < oc; ++o) row[ox * oc + o] = bias ? bias[o] : 0.0f;
    // The accumulation: taps in (ky, input column, kx) order.
    for (int ky = 0; ky < g.kh; ++ky) {
      const int ty = oy + g.pad_top - ky;
      if (ty < 0 || ty % g.stride_h != 0) continue;
      const int iy = ty / g.stride_h;
      if (iy >= g.in_h) continue;
      const float* __restrict src_row = cols + (b * g.in_h + iy) * g.in_w * pixel_cols + ky * g.kw * oc;
      for (int ix = 0; ix < g.in_w; ++ix) {
        const int ox0 = ix * g.stride_w - g.pad_left;
        const int kx0 = std::max(0, -ox0), kx1 = std::min(g.kw, g.out_w - ox0);
        if (kx0 >= kx1) continue;
        // Taps kx0..kx1 of all output channels land on one contiguous run.
        const float* __restrict s = src_row + ix * pixel_cols + kx0 * oc;
        float* __restrict d = row + static_cast<int64_t>(ox0 + kx0) * oc;
        const int run = (kx1 - kx0) * oc;
        for (int t = 0; t < run; ++t) d[t] += s[t];
      }
    }
    const float lo = clamp.lo, hi = clamp.hi;
    for (int64_t i = 0; i < static_cast<int64_t>(g.out_w) * oc; ++i)
      row[i] = row[i] < lo ? lo : (row[i] > hi ? hi : row[i]);
  }
}

}  // namespace

void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const TransposeConvGeometry& g, Clamp clamp, float* out) {
  const int64_t m = static_cast<int64_t>(g.batch) * g.in_h * g.in_w;
  if (g.stride_h == g.kh && g.stride_w == g.kw && g.pad_top == 0 && g.pad_left == 0 && g.out_h == g.in_h * g.kh &&
      g.out_w == g.in_w * g.kw) {
    // Windows that tile the output without overlap (2x2 stride 2 upsampling):
    // output row iy*kh + ky is exactly the GEMM of input row iy with the
    // weights of tap row ky, columns (kx, o). One GEMM per ky, bias and clamp
    // fused, then whole rows copied into place.
    const int n = g.kw * g.out_c;
    std::vector<float> wk(static_cast<size_t>(n) * g.in_c), bk(n);
    FloatBuffer rows;
    rows.Resize(static_cast<size_t>(m) * n);
    const int64_t row_floats = static_cast<int64_t>(g.in_w) * n;
    for (int ky = 0; ky < g.kh; ++ky) {
      for (int kx = 0; kx < g.kw; ++kx)
        for (int o = 0; o < g.out_c; ++o) {
          std::copy_n(weights + ((static_cast<int64_t>(o) * g.kh + ky) * g.kw + kx) * g.in_c, g.in_c,
                      wk.data() + (static_cast<int64_t>(kx) * g.out_c + o) * g.in_c);
          bk[kx * g.out_c + o] = bias ? bias[o] : 0.0f;
        }
      Gemm(pool, m, n, g.in_c, {in, g.in_c, 1}, {wk.data(), g.in_c, 1}, bk.data(), clamp, rows.data(), n);
      const int64_t in_rows = static_cast<int64_t>(g.batch) * g.in_h;
      pool.ParallelFor(in_rows, GrainFor(in_rows, row_floats / 8 + 1), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t b = r / g.in_h, iy = r % g.in_h;
          std::copy_n(rows.data() + r * row_floats, row_floats,
                      out + ((b * g.out_h + iy * g.kh + ky) * g.out_w) * static_cast<int64_t>(g.out_c));
        }
      });
    }
    return;
  }
  const int taps = g.kh * g.kw;
  const int n = taps * g.out_c;
  // Weights [O, KH, KW, I] reordered to rows (ky, kx, o) so that each input
  // pixel's GEMM row holds, per tap, the O output channels contiguously.
  std::vector<float> wt(static_cast<size_t>(n) * g.in_c);
  for (int o = 0; o < g.out_c; ++o)
    for (int t = 0; t < taps; ++t)
      std::copy_n(weights + (static_cast<int64_t>(o) * taps + t) * g.in_c, g.in_c,
                  wt.data() + (static_cast<int64_t>(t) * g.out_c + o) * g.in_c);
  FloatBuffer cols;
  cols.Resize(static_cast<size_t>(m) * n);
  Gemm(pool, m, n, g.in_c, {in, g.in_c, 1}, {wt.data(), g.in_c, 1}, nullptr, Clamp{}, cols.data(), n);
  const int64_t rows = static_cast<int64_t>(g.batch) * g.out_h;
  pool.ParallelFor(rows, GrainFor(rows, static_cast<int64_t>(g.out_w) * n),
                   [&](int64_t r0, int64_t r1) { GatherTransposeRows(cols.data(), bias, g, clamp, out, r0, r1); });
}

}  // namespace gpuclean::exec::kernels::conv
