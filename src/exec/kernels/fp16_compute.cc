#include "exec/kernels/fp16_compute.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>
#include <vector>

#include "gpuclean/error.h"

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

// At most this many outputs per item, the lanes hold items instead.
constexpr int kNarrowOutputs = 8;

// The row steps the dot products here are made of, over n accumulators:
//   AxpyRound:   acc[o] = half(acc[o] + a * w[o])     (one input, n outputs)
//   Taps:        acc[o] = sum over taps t of x_t[o] * w_t[o]  (depthwise)
// and RowTimesMatrix, AxpyRound over a whole row of inputs (RowsTimesMatrix:
// several rows at once). Vectorised with F16C where the CPU has it:
// converting to half and back is the same round-to-nearest-even as Round(),
// 8 lanes at a time. a * w is exact (two half values), so fusing it or not
// changes nothing.
void AxpyRoundScalar(float* acc, float a, const float* w, int n) {
  for (int o = 0; o < n; ++o) acc[o] = Round(acc[o] + a * w[o]);
}
void TapsScalar(const float* const* x, const float* const* w, int taps, int n, float* acc) {
  for (int o = 0; o < n; ++o) {
    float r = 0.0f;
    for (int t = 0; t < taps; ++t) r = Round(r + x[t][o] * w[t][o]);
    acc[o] = r;
  }
}

#if GPUCLEAN_CONV_X86
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 round8(__m256 v) {
  return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// The depthwise taps of one pixel, 8 channels per register, accumulators
// kept in registers across the taps; a masked tail for the last channels
// (depthwise layers with 8 or 12 channels are common).
__attribute__((target("avx2,f16c,fma"))) void TapsF16c(const float* const* x, const float* const* w, int taps, int n,
                                                       float* acc) {
  // Up to four groups of 8 channels in flight: independent chains.
  for (int o = 0; o < n; o += 32) {
    const int groups = std::min(4, (n - o + 7) / 8);
    alignas(32) int32_t lanes[32];
    for (int i = 0; i < 32; ++i) lanes[i] = o + i < n ? -1 : 0;
    __m256i m[4];
    __m256 r[4];
    for (int j = 0; j < 4; ++j) {
      m[j] = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8 * j));
      r[j] = _mm256_setzero_ps();
    }
    for (int t = 0; t < taps; ++t)
      for (int j = 0; j < groups; ++j)
        r[j] = round8(_mm256_fmadd_ps(_mm256_maskload_ps(x[t] + o + 8 * j, m[j]),
                                      _mm256_maskload_ps(w[t] + o + 8 * j, m[j]), r[j]));
    for (int j = 0; j < groups; ++j) _mm256_maskstore_ps(acc + o + 8 * j, m[j], r[j]);
  }
}
__attribute__((target("avx2,f16c"))) void RoundInPlaceF16c(float* v, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(
        v + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(v + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
  for (; i < n; ++i) v[i] = Round(v[i]);
}

// R rows at once (a[r * k + kk]) against the same weights: R x 2 independent
// accumulator chains per 16 outputs hide the add + convert latency that one
// row's chains expose; a masked tail for n not a multiple of 16.
template <int R>
__attribute__((target("avx2,f16c,fma"))) void RowsTimesMatrixF16c(const float* a, int64_t k, const float* wt, int n,
                                                                  float* acc) {
  for (int o = 0; o < n; o += 16) {
    alignas(32) int32_t lanes[16];
    for (int i = 0; i < 16; ++i) lanes[i] = o + i < n ? -1 : 0;
    const __m256i m0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
    const __m256i m1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8));
    __m256 r0[R], r1[R];
    for (int i = 0; i < R; ++i) r0[i] = r1[i] = _mm256_setzero_ps();
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* w = wt + kk * n + o;
      const __m256 w0 = _mm256_maskload_ps(w, m0), w1 = _mm256_maskload_ps(w + 8, m1);
      for (int i = 0; i < R; ++i) {
        // a * w is exact (two half values), so the fused form rounds the
        // same sum the separate multiply and add would.
        const __m256 va = _mm256_set1_ps(a[i * k + kk]);
        r0[i] = round8(_mm256_fmadd_ps(va, w0, r0[i]));
        r1[i] = round8(_mm256_fmadd_ps(va, w1, r1[i]));
      }
    }
    for (int i = 0; i < R; ++i) {
      _mm256_maskstore_ps(acc + static_cast<int64_t>(i) * n + o, m0, r0[i]);
      _mm256_maskstore_ps(acc + static_cast<int64_t>(i) * n + o + 8, m1, r1[i]);
    }
  }
}
// RowsTimesMatrixF16c in 16-lane registers: the same chains, steps and
// rounding (so the same bits), half the instructions, masks for the tail.
template <int R>
__attribute__((target("avx512f,fma"))) void RowsTimesMatrixAvx512(const float* a, int64_t k, const float* wt, int n,
                                                                  float* acc) {
  constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
  for (int o = 0; o < n; o += 32) {
    const __mmask16 m0 = static_cast<__mmask16>(n - o >= 16 ? 0xffff : (1u << (n - o)) - 1);
    const __mmask16 m1 = static_cast<__mmask16>(n - o >= 32 ? 0xffff : n - o <= 16 ? 0 : (1u << (n - o - 16)) - 1);
    __m512 r0[R], r1[R];
    for (int i = 0; i < R; ++i) r0[i] = r1[i] = _mm512_setzero_ps();
    for (int64_t kk = 0; kk < k; ++kk) {
      const float* w = wt + kk * n + o;
      const __m512 w0 = _mm512_maskz_loadu_ps(m0, w), w1 = _mm512_maskz_loadu_ps(m1, w + 16);
      for (int i = 0; i < R; ++i) {
        const __m512 va = _mm512_set1_ps(a[i * k + kk]);
        r0[i] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_fmadd_ps(va, w0, r0[i]), kRound));
        r1[i] = _mm512_cvtph_ps(_mm512_cvtps_ph(_mm512_fmadd_ps(va, w1, r1[i]), kRound));
      }
    }
    for (int i = 0; i < R; ++i) {
      _mm512_mask_storeu_ps(acc + static_cast<int64_t>(i) * n + o, m0, r0[i]);
      _mm512_mask_storeu_ps(acc + static_cast<int64_t>(i) * n + o + 16, m1, r1[i]);
    }
  }
}
bool HasAvx512() { return conv::ActiveIsa() == conv::Isa::kAvx512; }

// Few outputs per item: 32 items across four 8-lane vectors, one chain per
// output and vector, the same steps in the same order (a [rows][k] block).
__attribute__((target("avx2,f16c,fma"))) void ColumnsF16c(const float* a, int rows, int64_t k, const float* wt, int n,
                                                          float* acc, float* columns) {
  for (int64_t kk = 0; kk < k; ++kk)
    for (int r = 0; r < 32; ++r) columns[kk * 32 + r] = r < rows ? a[r * k + kk] : 0.0f;
  alignas(32) float lanes[32];
  for (int o = 0; o < n; ++o) {
    __m256 r[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t kk = 0; kk < k; ++kk) {
      const __m256 w = _mm256_set1_ps(wt[kk * n + o]);
      for (int j = 0; j < 4; ++j) r[j] = round8(_mm256_fmadd_ps(_mm256_loadu_ps(columns + kk * 32 + 8 * j), w, r[j]));
    }
    for (int j = 0; j < 4; ++j) _mm256_store_ps(lanes + 8 * j, r[j]);
    for (int p = 0; p < rows; ++p) acc[static_cast<int64_t>(p) * n + o] = lanes[p];
  }
}
bool HasF16c() { return conv::ActiveIsa() != conv::Isa::kGeneric && __builtin_cpu_supports("f16c"); }
#endif

void RowTimesMatrixScalar(const float* a, int64_t k, const float* wt, int n, float* acc) {
  std::fill(acc, acc + n, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) AxpyRoundScalar(acc, a[kk], wt + kk * n, n);
}

}  // namespace

#if GPUCLEAN_CONV_X86
// The depthwise taps with the binary16 FMA instruction, 16 channels per
// register, the accumulators staying half across the taps.
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void TapsNative(const float* const* x,
                                                                                const float* const* w, int taps, int n,
                                                                                float* acc) {
  for (int o = 0; o < n; o += 16) {
    const __mmask16 m = n - o >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << (n - o)) - 1);
    __m256h r = _mm256_setzero_ph();
    for (int t = 0; t < taps; ++t)
      r = _mm256_fmadd_ph(_mm512_cvtxps_ph(_mm512_maskz_loadu_ps(m, x[t] + o)),
                          _mm512_cvtxps_ph(_mm512_maskz_loadu_ps(m, w[t] + o)), r);
    _mm512_mask_storeu_ps(acc + o, m, _mm512_cvtxph_ps(r));
  }
}
bool HasAvx512Fp16() { return conv::ActiveIsa() == conv::Isa::kAvx512 && __builtin_cpu_supports("avx512fp16"); }
#endif

#if GPUCLEAN_CONV_X86
// Four pixels with the same taps (x[p * taps + t]): four independent chains
// per 8 channels hide the add + convert latency of one pixel's chain.
__attribute__((target("avx2,f16c,fma"))) void Taps4F16c(const float* const* x, const float* const* w, int taps, int n,
                                                        float* acc) {
  for (int o = 0; o < n; o += 8) {
    alignas(32) int32_t lanes[8];
    for (int i = 0; i < 8; ++i) lanes[i] = o + i < n ? -1 : 0;
    const __m256i m = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
    __m256 r[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int t = 0; t < taps; ++t) {
      const __m256 wv = _mm256_maskload_ps(w[t] + o, m);
      for (int p = 0; p < 4; ++p) r[p] = round8(_mm256_fmadd_ps(_mm256_maskload_ps(x[p * taps + t] + o, m), wv, r[p]));
    }
    for (int p = 0; p < 4; ++p) _mm256_maskstore_ps(acc + static_cast<int64_t>(p) * n + o, m, r[p]);
  }
}
#endif

void Taps4Scalar(const float* const* x, const float* const* w, int taps, int n, float* acc) {
  for (int p = 0; p < 4; ++p)
    TapsScalar(x + static_cast<int64_t>(p) * taps, w, taps, n, acc + static_cast<int64_t>(p) * n);
}

DepthwiseTapsFn DepthwiseTaps4() {
#if GPUCLEAN_CONV_X86
  if (HasF16c()) return Taps4F16c;
#endif
  return Taps4Scalar;
}

DepthwiseTapsFn DepthwiseTaps() {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) return TapsNative;
  if (HasF16c()) return TapsF16c;
#endif
  return TapsScalar;
}

void RoundInPlace(float* v, int64_t n) {
#if GPUCLEAN_CONV_X86
  if (HasF16c()) return RoundInPlaceF16c(v, n);
#endif
  for (int64_t i = 0; i < n; ++i) v[i] = Round(v[i]);
}

#if GPUCLEAN_CONV_X86
// conv::Clamp on 8 lanes. max/min return their second operand when either
// is NaN, so v goes second: a NaN stays NaN, as in the scalar clamp.
__attribute__((target("avx2,f16c"), always_inline)) inline __m256 Clamp8(__m256 v, __m256 lo, __m256 hi) {
  return _mm256_min_ps(hi, _mm256_max_ps(lo, v));
}

__attribute__((target("avx2,f16c"))) void FinishRowsF16c(float* c, int64_t rows, int n, int64_t ldc, const float* bias,
                                                         conv::Clamp clamp) {
  const __m256 lo = _mm256_set1_ps(clamp.lo), hi = _mm256_set1_ps(clamp.hi);
  alignas(32) int32_t lanes[8];
  for (int i = 0; i < 8; ++i) lanes[i] = i < n % 8 ? -1 : 0;
  const __m256i tail = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  for (int64_t r = 0; r < rows; ++r) {
    float* row = c + r * ldc;
    int o = 0;
    for (; o + 8 <= n; o += 8) {
      __m256 v = _mm256_loadu_ps(row + o);
      if (bias) v = _mm256_add_ps(v, _mm256_loadu_ps(bias + o));
      _mm256_storeu_ps(row + o, Clamp8(round8(v), lo, hi));
    }
    if (o < n) {
      __m256 v = _mm256_maskload_ps(row + o, tail);
      if (bias) v = _mm256_add_ps(v, _mm256_maskload_ps(bias + o, tail));
      _mm256_maskstore_ps(row + o, tail, Clamp8(round8(v), lo, hi));
    }
  }
}
#endif

void FinishRows(float* c, int64_t rows, int n, int64_t ldc, const float* bias, conv::Clamp clamp) {
#if GPUCLEAN_CONV_X86
  if (HasF16c() && n > 0) return FinishRowsF16c(c, rows, n, ldc, bias, clamp);
#endif
  if (bias)
    for (int64_t r = 0; r < rows; ++r)
      for (int o = 0; o < n; ++o) c[r * ldc + o] += bias[o];
  if (ldc == n)
    RoundInPlace(c, rows * n);
  else
    for (int64_t r = 0; r < rows; ++r) RoundInPlace(c + r * ldc, n);
  if (clamp.lo > -INFINITY || clamp.hi < INFINITY)
    for (int64_t r = 0; r < rows; ++r)
      for (int o = 0; o < n; ++o) c[r * ldc + o] = clamp(c[r * ldc + o]);
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
                                                                                const _Float16* wt, int n, float* acc) {
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

// Few outputs per item (a one-channel mask head) would leave most of the 32
// lanes empty: there the lanes hold up to 32 items (pixels) instead, one
// chain per output, the same steps in the same order.
constexpr int kColumnItems = 32;
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void NativeColumns(const _Float16* a, int rows,
                                                                                   int64_t k, const _Float16* wt, int n,
                                                                                   float* acc, _Float16* columns) {
  for (int64_t kk = 0; kk < k; ++kk)
    for (int r = 0; r < kColumnItems; ++r) columns[kk * kColumnItems + r] = r < rows ? a[r * k + kk] : _Float16(0);
  alignas(64) _Float16 lanes[kColumnItems];
  for (int o = 0; o < n; ++o) {
    __m512h r = _mm512_setzero_ph();
    for (int64_t kk = 0; kk < k; ++kk)
      r = _mm512_fmadd_ph(_mm512_load_ph(columns + kk * kColumnItems), _mm512_set1_ph(wt[kk * n + o]), r);
    _mm512_store_ph(lanes, r);
    for (int p = 0; p < rows; ++p) acc[static_cast<int64_t>(p) * n + o] = static_cast<float>(lanes[p]);
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

// Consumes the n accumulators of one item.
using RowDone = std::function<void(int64_t item, const float* acc)>;

// items x [k] rows times the [k][n] weights, half-precision accumulation;
// the core of every fp16-compute dot-product kernel. fill(item, row, source)
// writes an item's k inputs (an output pixel's im2col row) from `source`
// (source_size values; the values are half already) into `row`, for element
// type float or, on the native path, _Float16: the source tensor is then
// converted once instead of once per tap that reads it. A null source means
// fill reads its own data and writes float rows.
template <typename Fill>
void DotRows(ThreadPool& pool, int64_t items, int64_t k, const std::vector<float>& wt, int n, const float* source,
             int64_t source_size, const Fill& fill, const RowDone& done) {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) {
    std::vector<_Float16> wh(wt.size()), source_half(source ? source_size : 0);
    ToHalf(wt.data(), wh.data(), static_cast<int64_t>(wt.size()));
    if (source) ToHalf(source, source_half.data(), source_size);
    const bool narrow = n <= kNarrowOutputs;
    const int block = narrow ? kColumnItems : kNativeRows;
    const int64_t blocks = (items + block - 1) / block;
    pool.ParallelFor(blocks, conv::GrainFor(blocks, block * n * k), [&](int64_t b0, int64_t b1) {
      std::vector<float> row(k), acc(static_cast<size_t>(block) * n);
      std::vector<_Float16> rows(static_cast<size_t>(block) * k);
      std::vector<_Float16> columns;
      if (narrow) columns.resize(static_cast<size_t>(kColumnItems) * k + 32);
      // _mm512_load_ph needs 64-byte alignment.
      _Float16* aligned =
          narrow ? reinterpret_cast<_Float16*>((reinterpret_cast<uintptr_t>(columns.data()) + 63) & ~uintptr_t{63})
                 : nullptr;
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t first = b * block;
        const int count = static_cast<int>(std::min<int64_t>(block, items - first));
        for (int r = 0; r < count; ++r) {
          if constexpr (std::is_invocable_v<const Fill&, int64_t, _Float16*, const _Float16*>) {
            if (source) {
              fill(first + r, rows.data() + r * k, static_cast<const _Float16*>(source_half.data()));
              continue;
            }
          }
          fill(first + r, row.data(), source);
          ToHalf(row.data(), rows.data() + r * k, k);
        }
        if (narrow)
          NativeColumns(rows.data(), count, k, wh.data(), n, acc.data(), aligned);
        else
          NativeBlock(rows.data(), count, k, wh.data(), n, acc.data());
        for (int r = 0; r < count; ++r) done(first + r, acc.data() + static_cast<int64_t>(r) * n);
      }
    });
    return;
  }
#endif
#if GPUCLEAN_CONV_X86
  if (HasF16c()) {
    const bool narrow = n <= kNarrowOutputs;
    // AVX-512 has the registers for 8 rows (16 accumulator chains): each
    // step's weights are loaded once for twice the rows (the quantized
    // 1024x1024 ISNet's fp16-compute convolutions 11.9 -> 11.1 s at one
    // thread). AVX2's 16 registers hold 4.
    const int block = narrow ? 32 : HasAvx512() ? 8 : 4;
    const int64_t blocks = (items + block - 1) / block;
    // Indexed by the block's row count, 1 to 8 (4 for AVX2).
    using RowsFn = void (*)(const float*, int64_t, const float*, int, float*);
    static constexpr RowsFn kAvx512Rows[] = {nullptr,
                                             RowsTimesMatrixAvx512<1>,
                                             RowsTimesMatrixAvx512<2>,
                                             RowsTimesMatrixAvx512<3>,
                                             RowsTimesMatrixAvx512<4>,
                                             RowsTimesMatrixAvx512<5>,
                                             RowsTimesMatrixAvx512<6>,
                                             RowsTimesMatrixAvx512<7>,
                                             RowsTimesMatrixAvx512<8>};
    static constexpr RowsFn kF16cRows[] = {nullptr, RowsTimesMatrixF16c<1>, RowsTimesMatrixF16c<2>,
                                           RowsTimesMatrixF16c<3>, RowsTimesMatrixF16c<4>};
    const RowsFn* rows_times_matrix = HasAvx512() ? kAvx512Rows : kF16cRows;
    pool.ParallelFor(blocks, conv::GrainFor(blocks, block * n * k), [&](int64_t b0, int64_t b1) {
      std::vector<float> rows(static_cast<size_t>(block) * k), acc(static_cast<size_t>(block) * n);
      std::vector<float> columns(narrow ? static_cast<size_t>(32) * k : 0);
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t first = b * block;
        const int count = static_cast<int>(std::min<int64_t>(block, items - first));
        for (int r = 0; r < count; ++r) fill(first + r, rows.data() + r * k, source);
        if (narrow)
          ColumnsF16c(rows.data(), count, k, wt.data(), n, acc.data(), columns.data());
        else
          rows_times_matrix[count](rows.data(), k, wt.data(), n, acc.data());
        for (int r = 0; r < count; ++r) done(first + r, acc.data() + static_cast<int64_t>(r) * n);
      }
    });
    return;
  }
#endif
  pool.ParallelFor(items, conv::GrainFor(items, static_cast<int64_t>(n) * k), [&](int64_t p0, int64_t p1) {
    std::vector<float> row(k), acc(n);
    for (int64_t p = p0; p < p1; ++p) {
      fill(p, row.data(), source);
      RowTimesMatrixScalar(row.data(), k, wt.data(), n, acc.data());
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
      pool, m, k, bt, n, nullptr, 0,
      [&](int64_t i, float* row, const float*) {
        const float* pa = a.p + i * a.row;
        for (int kk = 0; kk < k; ++kk) row[kk] = pa[kk * a.col];
      },
      [&](int64_t i, const float* acc) { std::copy(acc, acc + n, c + i * ldc); });
  FinishRows(c, m, n, ldc, bias, clamp);
}

void Conv(ThreadPool& pool, const float* input, const conv::ConvGeometry& g, const float* weights, int n,
          const float* bias, conv::Clamp clamp, float* c, int64_t ldc) {
  const int64_t pixels = static_cast<int64_t>(g.batch) * g.out_h * g.out_w;
  const int64_t k = static_cast<int64_t>(g.kh) * g.kw * g.in_c;
  // OHWI weights as [(ky, kx, ic)][o].
  std::vector<float> wt(static_cast<size_t>(k) * n);
  for (int o = 0; o < n; ++o)
    for (int64_t kk = 0; kk < k; ++kk) wt[kk * n + o] = weights[o * k + kk];
  const int64_t source_size = static_cast<int64_t>(g.batch) * g.in_h * g.in_w * g.in_pixel_stride;
  const int64_t plane = static_cast<int64_t>(g.out_h) * g.out_w;
  // 1x1, stride 1, no padding: an item's row is its input pixel.
  const bool pointwise = g.kh == 1 && g.kw == 1 && g.stride_h == 1 && g.stride_w == 1 && g.pad_top == 0 &&
                         g.pad_left == 0 && g.out_h == g.in_h && g.out_w == g.in_w;
  DotRows(
      pool, pixels, k, wt, n, input, source_size,
      [&](int64_t p, auto* row, const auto* source) {
        using T = std::remove_cv_t<std::remove_pointer_t<decltype(row)>>;
        if (pointwise) {
          const T* src = source + p * g.in_pixel_stride + g.in_c_offset;
          std::copy(src, src + g.in_c, row);
          return;
        }
        // The pixel's im2col row; zero padding contributes exact zeros
        // (acc + 0 * w = acc, already a half value).
        const int64_t b = p / plane;
        const int rem = static_cast<int>(p - b * plane);
        const int oy = rem / g.out_w, ox = rem - oy * g.out_w;
        T* dst = row;
        for (int ky = 0; ky < g.kh; ++ky) {
          const int iy = oy * g.stride_h - g.pad_top + ky * g.dil_h;
          for (int kx = 0; kx < g.kw; ++kx, dst += g.in_c) {
            const int ix = ox * g.stride_w - g.pad_left + kx * g.dil_w;
            if (iy < 0 || iy >= g.in_h || ix < 0 || ix >= g.in_w) {
              std::fill(dst, dst + g.in_c, T{});
            } else {
              const T* src = source + ((b * g.in_h + iy) * g.in_w + ix) * g.in_pixel_stride + g.in_c_offset;
              std::copy(src, src + g.in_c, dst);
            }
          }
        }
      },
      [&](int64_t p, const float* acc) { std::copy(acc, acc + n, c + p * ldc); });
  FinishRows(c, pixels, n, ldc, bias, clamp);
}

void TransposeConv(ThreadPool& pool, const float* in, const float* weights, const float* bias,
                   const conv::TransposeConvGeometry& g, conv::Clamp clamp, float* out) {
  // Output (oy, ox) gathers input (iy, ix) through tap (ky, kx) where
  // oy = iy*stride - pad + ky. Outputs of one phase (oy mod stride, ox mod
  // stride) share the taps that can land on an input sample; the others
  // would only add exact zeros (acc + 0*w = acc), so each phase runs as a
  // dot product over its own taps, in the same (ky, kx, ic) order.
  const int64_t taps = static_cast<int64_t>(g.kh) * g.kw;
  const auto mod = [](int a, int m) { return ((a % m) + m) % m; };
  for (int py = 0; py < std::min(g.stride_h, g.out_h); ++py)
    for (int px = 0; px < std::min(g.stride_w, g.out_w); ++px) {
      std::vector<std::pair<int, int>> hit;
      for (int ky = 0; ky < g.kh; ++ky)
        for (int kx = 0; kx < g.kw; ++kx)
          if (mod(py + g.pad_top - ky, g.stride_h) == 0 && mod(px + g.pad_left - kx, g.stride_w) == 0)
            hit.emplace_back(ky, kx);
      const int rows_y = (g.out_h - py + g.stride_h - 1) / g.stride_h;
      const int cols_x = (g.out_w - px + g.stride_w - 1) / g.stride_w;
      const int64_t items = static_cast<int64_t>(g.batch) * rows_y * cols_x;
      auto pixel = [&](int64_t item) {
        const int64_t b = item / (static_cast<int64_t>(rows_y) * cols_x);
        const int oy = py + static_cast<int>(item / cols_x % rows_y) * g.stride_h;
        const int ox = px + static_cast<int>(item % cols_x) * g.stride_w;
        return std::tuple<int64_t, int, int>{b, oy, ox};
      };
      auto done = [&](int64_t item, const float* acc) {
        const auto [b, oy, ox] = pixel(item);
        std::copy(acc, acc + g.out_c, out + ((b * g.out_h + oy) * g.out_w + ox) * g.out_c);
      };
      if (hit.empty()) {
        const std::vector<float> zeros(g.out_c, 0.0f);
        for (int64_t item = 0; item < items; ++item) done(item, zeros.data());
        continue;
      }
      const int64_t k = static_cast<int64_t>(hit.size()) * g.in_c;
      // [O][KH][KW][I] weights of the hit taps as [(tap, ic)][o].
      std::vector<float> wt(static_cast<size_t>(k) * g.out_c);
      for (int o = 0; o < g.out_c; ++o)
        for (size_t t = 0; t < hit.size(); ++t)
          for (int ic = 0; ic < g.in_c; ++ic)
            wt[(t * g.in_c + ic) * g.out_c + o] =
                weights[(o * taps + hit[t].first * g.kw + hit[t].second) * g.in_c + ic];
      DotRows(
          pool, items, k, wt, g.out_c, in, static_cast<int64_t>(g.batch) * g.in_h * g.in_w * g.in_c,
          [&](int64_t item, auto* row, const auto* source) {
            using T = std::remove_cv_t<std::remove_pointer_t<decltype(row)>>;
            const auto [b, oy, ox] = pixel(item);
            T* dst = row;
            for (const auto& [ky, kx] : hit) {
              const int iy = (oy + g.pad_top - ky) / g.stride_h, ix = (ox + g.pad_left - kx) / g.stride_w;
              const bool inside = oy + g.pad_top - ky >= 0 && ox + g.pad_left - kx >= 0 && iy < g.in_h && ix < g.in_w;
              if (inside)
                std::copy_n(source + ((b * g.in_h + iy) * g.in_w + ix) * g.in_c, g.in_c, dst);
              else
                std::fill(dst, dst + g.in_c, T{});
              dst += g.in_c;
            }
          },
          done);
    }
  FinishRows(out, static_cast<int64_t>(g.batch) * g.out_h * g.out_w, g.out_c, g.out_c, bias, clamp);
}

#if GPUCLEAN_CONV_X86
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void TapsNativeHalf(const uint16_t* const* x,
                                                                                    const uint16_t* const* w, int taps,
                                                                                    int n, float* acc) {
  for (int o = 0; o < n; o += 32) {
    const int lanes = std::min(32, n - o);
    const __mmask32 m = lanes == 32 ? ~0u : ((1u << lanes) - 1);
    __m512h r = _mm512_setzero_ph();
    for (int t = 0; t < taps; ++t)
      r = _mm512_fmadd_ph(_mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, x[t] + o)),
                          _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, w[t] + o)), r);
    const __m512 lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(r));
    const __m512 hi = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(r), 1)));
    _mm512_mask_storeu_ps(acc + o, static_cast<__mmask16>(m), lo);
    if (lanes > 16) _mm512_mask_storeu_ps(acc + o + 16, static_cast<__mmask16>(m >> 16), hi);
  }
}
#endif

#if GPUCLEAN_CONV_X86
// Four pixels with the same taps at once: four independent accumulator
// chains hide the FMA latency that one pixel's chain of taps exposes.
__attribute__((target("avx512fp16,avx512bw,avx512vl,avx512f"))) void TapsNativeHalf4(const uint16_t* const* x,
                                                                                     const uint16_t* const* w, int taps,
                                                                                     int n, float* acc) {
  for (int o = 0; o < n; o += 32) {
    const int lanes = std::min(32, n - o);
    const __mmask32 m = lanes == 32 ? ~0u : ((1u << lanes) - 1);
    __m512h r[4] = {_mm512_setzero_ph(), _mm512_setzero_ph(), _mm512_setzero_ph(), _mm512_setzero_ph()};
    for (int t = 0; t < taps; ++t) {
      const __m512h wv = _mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, w[t] + o));
      for (int p = 0; p < 4; ++p)
        r[p] = _mm512_fmadd_ph(_mm512_castsi512_ph(_mm512_maskz_loadu_epi16(m, x[p * taps + t] + o)), wv, r[p]);
    }
    for (int p = 0; p < 4; ++p) {
      float* dst = acc + static_cast<int64_t>(p) * n + o;
      const __m512 lo = _mm512_cvtxph_ps(_mm512_castph512_ph256(r[p]));
      const __m512 hi = _mm512_cvtxph_ps(_mm256_castsi256_ph(_mm512_extracti64x4_epi64(_mm512_castph_si512(r[p]), 1)));
      _mm512_mask_storeu_ps(dst, static_cast<__mmask16>(m), lo);
      if (lanes > 16) _mm512_mask_storeu_ps(dst + 16, static_cast<__mmask16>(m >> 16), hi);
    }
  }
}
#endif

void DepthwiseTapsHalf4(const uint16_t* const* x, const uint16_t* const* w, int taps, int n, float* acc) {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) return TapsNativeHalf4(x, w, taps, n, acc);
#endif
  ThrowInternal("DepthwiseTapsHalf4 needs the binary16 FMA path");
}

bool NativeFma() {
#if GPUCLEAN_CONV_X86
  return HasAvx512Fp16();
#else
  return false;
#endif
}

void ToHalfBits(const float* src, uint16_t* dst, int64_t n) {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) return ToHalf(src, reinterpret_cast<_Float16*>(dst), n);
#endif
  ThrowInternal("ToHalfBits needs the binary16 FMA path");
}

void DepthwiseTapsHalf(const uint16_t* const* x, const uint16_t* const* w, int taps, int n, float* acc) {
#if GPUCLEAN_CONV_X86
  if (HasAvx512Fp16()) return TapsNativeHalf(x, w, taps, n, acc);
#endif
  ThrowInternal("DepthwiseTapsHalf needs the binary16 FMA path");
}

}  // namespace gpuclean::exec::kernels::fp16
