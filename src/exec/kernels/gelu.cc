// GELU, float32, with both forms of GeluOptions.approximate:
//   approximate = false (default): 0.5 x erfc(-x / sqrt(2)), the exact form
//     written with erfc as LiteRT does (no cancellation for large negative x);
//   approximate = true: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
// The erfc is ew::ErfcAnyFloat, which vectorises: libm's erfcf, one lane and
// a call per element, was a quarter of convnext_tiny at one thread.
#include "exec/kernels/elementwise_util.h"

// After the includes: only this file's functions (as logistic.cc).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options  // popped at the end: a unity batch goes on to other files
#pragma GCC optimize("no-trapping-math")
#define GPUCLEAN_GELU_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define GPUCLEAN_GELU_CLONES
#endif
// Inlined into this file's loops, so compiled under the same options.
#include "exec/kernels/fast_math.h"

namespace gpuclean::exec::kernels {
namespace {

// A plain loop over restrict pointers: GCC 12 vectorised a 16-element block
// copy of this body with one scalar load and insert per element (measured:
// 5.3 ns per element, then 1.1).
GPUCLEAN_GELU_CLONES void ExactGeluRun(const float* __restrict x, float* __restrict z, int64_t n) {
  constexpr float kMinusSqrtHalf = -0.7071067811865476f;
  for (int64_t i = 0; i < n; ++i) z[i] = 0.5f * x[i] * ew::ErfcAnyFloat(x[i] * kMinusSqrtHalf);
}

void EvalGelu(KernelContext& ctx) {
  const auto* options = ctx.op.options.AsGeluOptions();
  if (options && options->approximate) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    ew::FloatUnary(ctx,
                   [](float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x))); });
  } else {
    const float* in = ctx.input(0).as<float>();
    float* out = ctx.output(0).as<float>();
    const int64_t n = ctx.output(0).num_elements();
    if (ctx.input(0).num_elements() != n)
      ThrowInternal(fmt::format("{}: input has {} elements, output {}", OpLabel(ctx), ctx.input(0).num_elements(), n));
    ctx.pool.ParallelFor(n, ew::kGrain, [&](int64_t b, int64_t e) { ExactGeluRun(in + b, out + b, e - b); });
  }
}

}  // namespace

Kernel GeluKernel() { return {ew::CheckFloatUnary, EvalGelu}; }

}  // namespace gpuclean::exec::kernels

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
