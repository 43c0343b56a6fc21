#pragma once
// Branch-free float math that GCC vectorises (no libm call per element),
// shared by the transcendental kernels (LOGISTIC, GELU). Files that want
// their loops vectorised compile without trapping math (see logistic.cc)
// and include this after that pragma: a function inlines only into callers
// compiled under its own options.
#include <bit>
#include <cstdint>

namespace gpuclean::exec::kernels::ew {

// Sixteen floats, and their bits, as one value each: a kernel that spells its
// loop body in these gets one vector register per value (GCC's own
// vectoriser kept per-lane arrays on the stack in some loops). Pass them only
// to always-inline functions, never to a lambda: a lambda is a function of
// its own, compiled for the baseline instruction set, and a vector argument
// from a caller cloned for AVX-512 arrives where the lambda does not look
// (a crash; GCC's -Wpsabi note, which the build turns off, is about this).
typedef float Floats16 __attribute__((vector_size(64)));
typedef uint32_t Bits16 __attribute__((vector_size(64)));

// e^x for x in [-87.3, 88.3] (the caller clamps), Cephes' expf polynomial:
// within 2 ulp of std::exp. F is float (U uint32_t) or Floats16 (U Bits16):
// the same operations in the same order, so a lane gives the scalar's bits.
template <typename F, typename U>
[[gnu::always_inline]] inline F ExpClampedAs(F x) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const F t = x * 1.44269504088896341f + kRound;
  // Unsigned: wraps instead of overflowing on NaN (discarded by the caller).
  const U n = __builtin_bit_cast(U, t) - __builtin_bit_cast(uint32_t, kRound);
  const F fn = t - kRound;
  const F r = (x - fn * 0.693359375f) - fn * -2.12194440e-4f;
  F p = r * 1.9875691500e-4f + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const F y = p * r * r + r + 1.0f;
  return __builtin_bit_cast(F, __builtin_bit_cast(U, y) + (n << 23));
}

[[gnu::always_inline]] inline float ExpClamped(float x) { return ExpClampedAs<float, uint32_t>(x); }
[[gnu::always_inline]] inline Floats16 ExpClamped(Floats16 x) { return ExpClampedAs<Floats16, Bits16>(x); }

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
