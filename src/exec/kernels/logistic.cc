// LOGISTIC: sigmoid 1 / (1 + e^-x), float32; saturates to exactly 0 and 1.
//
// A branch-free polynomial e^x instead of std::exp per element (a call, then
// a division, one lane at a time: 40% of efficientnet_b0 at one thread). GCC
// vectorizes the loop below only without trapping math (the selects would
// otherwise stay branches), so this file alone is compiled that way; the
// run is cloned for AVX2 and picked at load time.
#include <bit>
#include <cstdint>

#include "exec/kernels/elementwise_util.h"

// After the includes: only this file's functions.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options  // popped at the end: a unity batch goes on to other files
#pragma GCC optimize("no-trapping-math")
#define GPUCLEAN_LOGISTIC_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPUCLEAN_LOGISTIC_CLONES
#endif
// Inlined into this file's loops, so compiled under the same options.
#include "exec/kernels/fast_math.h"

namespace gpuclean::exec::kernels {
namespace {

inline float Sigmoid(float x) {
  constexpr float kLo = -87.3f;  // e^t below this: 1 + e^t rounds to 1
  constexpr float kHi = 88.3f;   // x < -88.3: exactly 0, as 1 / (1 + inf)
  float t = -x;
  const bool above = t > kHi;
  t = t < kLo ? kLo : t;
  t = above ? kHi : t;
  const float s = 1.0f / (1.0f + ew::ExpClamped(t));
  const float z = __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, s) & (above ? 0u : ~0u));
  return x == x ? z : x;  // NaN stays NaN
}

// Plain loops over restrict pointers: GCC 12 vectorised a 16-element block
// copy of these bodies with one scalar load and insert per element.
GPUCLEAN_LOGISTIC_CLONES void SigmoidRun(const float* __restrict x, float* __restrict z, int64_t n) {
  for (int64_t i = 0; i < n; ++i) z[i] = Sigmoid(x[i]);
}

void EvalLogistic(KernelContext& ctx) {
  const float* in = ctx.input(0).as<float>();
  float* out = ctx.output(0).as<float>();
  const int64_t n = ctx.output(0).num_elements();
  if (ctx.input(0).num_elements() != n)
    ThrowInternal(fmt::format("{}: input has {} elements, output {}", OpLabel(ctx), ctx.input(0).num_elements(), n));
  ctx.pool.ParallelFor(n, ew::kGrain,
                       [&](int64_t begin, int64_t end) { SigmoidRun(in + begin, out + begin, end - begin); });
}

// MUL(x, LOGISTIC(x)) (SiLU, Swish) whose LOGISTIC the interpreter skipped:
// input(0) is x; x * Sigmoid(x) per element, then the MUL's clamp, in one
// pass: the same fp32 operations as the two ops, without writing and reading
// back the sigmoid tensor (the pair was two fifths of efficientnet_b0).
// Clamp's std::min(std::max(v, lo), hi), written out: the common header's is
// compiled with trapping math and is not inlined into this file's clones.
inline float ClampSilu(float v, float lo, float hi) {
  const float m = v < lo ? lo : v;
  return hi < m ? hi : m;
}

GPUCLEAN_LOGISTIC_CLONES void SiluRun(const float* __restrict x, float* __restrict z, int64_t n, float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) z[i] = ClampSilu(x[i] * Sigmoid(x[i]), lo, hi);
}

void EvalFusedSilu(KernelContext& ctx) {
  const float* in = ctx.input(0).as<float>();
  float* out = ctx.output(0).as<float>();
  const int64_t n = ctx.output(0).num_elements();
  if (ctx.input(0).num_elements() != n)
    ThrowInternal(fmt::format("{}: input has {} elements, output {}", OpLabel(ctx), ctx.input(0).num_elements(), n));
  const auto* o = ctx.op.options.AsMulOptions();
  const Range<float> r = ActivationRange<float>(o ? o->fused_activation_function : tfl::ActivationFunctionType_NONE);
  ctx.pool.ParallelFor(n, ew::kGrain,
                       [&](int64_t begin, int64_t end) { SiluRun(in + begin, out + begin, end - begin, r.lo, r.hi); });
}

}  // namespace

Kernel LogisticKernel() { return {ew::CheckFloatUnary, EvalLogistic}; }
Kernel FusedSiluKernel() { return {nullptr, EvalFusedSilu}; }

}  // namespace gpuclean::exec::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
