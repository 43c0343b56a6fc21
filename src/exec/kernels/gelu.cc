// GELU, float32, with both forms of GeluOptions.approximate:
//   approximate = false (default): 0.5 x erfc(-x / sqrt(2)), the exact form
//     written with erfc as LiteRT does (no cancellation for large negative x);
//   approximate = true: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalGelu(KernelContext& ctx) {
  const auto* options = ctx.op.options.AsGeluOptions();
  if (options && options->approximate) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    ew::FloatUnary(ctx,
                   [](float x) { return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x))); });
  } else {
    constexpr float kMinusSqrtHalf = -0.7071067811865476f;
    ew::FloatUnary(ctx, [](float x) { return 0.5f * x * std::erfc(x * kMinusSqrtHalf); });
  }
}

}  // namespace

Kernel GeluKernel() { return {ew::CheckFloatUnary, EvalGelu}; }

}  // namespace gpuclean::exec::kernels
