#pragma once
// Branch-free float math that GCC vectorises (no libm call per element),
// shared by the transcendental kernels (LOGISTIC, GELU). Files that want
// their loops vectorised compile without trapping math (see logistic.cc)
// and include this after that pragma: a function inlines only into callers
// compiled under its own options.
#include <bit>
#include <cstdint>

namespace gpuclean::exec::kernels::ew {

// e^x for x in [-87.3, 88.3] (the caller clamps), Cephes' expf polynomial:
// within 2 ulp of std::exp.
[[gnu::always_inline]] inline float ExpClamped(float x) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = x * 1.44269504088896341f + kRound;
  // Unsigned: wraps instead of overflowing on NaN (discarded by the caller).
  const uint32_t n = __builtin_bit_cast(uint32_t, t) - __builtin_bit_cast(uint32_t, kRound);
  const float fn = t - kRound;
  const float r = (x - fn * 0.693359375f) - fn * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * r * r + r + 1.0f;
  return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, y) + (n << 23));
}

// erfc(z) for any float z: Numerical Recipes' erfcc (a Chebyshev fit of
// erfc(a) e^{a^2} in t = 1 / (1 + a/2), fractional error below 1.2e-7 for
// a >= 0), erfc(-a) = 2 - erfc(a). Relative error a few ulp where the
// result is small (GELU's large negative x), no cancellation.
[[gnu::always_inline]] inline float ErfcAnyFloat(float z) {
  const float a = z < 0.0f ? -z : z;
  const float t = 1.0f / (1.0f + 0.5f * a);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  float arg = p - a * a;
  const bool underflows = arg < -87.3f;  // e^arg is below the smallest normal float
  arg = underflows ? -87.3f : arg;
  arg = arg > 88.3f ? 88.3f : arg;
  const float tail = underflows ? 0.0f : t * ExpClamped(arg);  // erfc(|z|)
  const float r = z < 0.0f ? 2.0f - tail : tail;
  return z == z ? r : z;  // NaN stays NaN
}

}  // namespace gpuclean::exec::kernels::ew
