// LEAKY_RELU: x > 0 ? x : alpha * x, float32. alpha comes from
// LeakyReluOptions (0 when the options are absent, the schema default).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalLeakyRelu(KernelContext& ctx) {
  const auto* options = ctx.op.options.AsLeakyReluOptions();
  const float alpha = options ? options->alpha : 0.0f;
  // The product is formed for every element so the select vectorises: a
  // multiply only on one branch may not be hoisted under trapping math, and
  // GCC left a compare and branch per element (half mispredicted on
  // activations around zero: 2.3 ns per element, half of openWakeWord's
  // embedding model).
  ew::FloatUnary(ctx, [alpha](float x) {
    const float scaled = alpha * x;
    return x > 0.0f ? x : scaled;
  });
}

}  // namespace

Kernel LeakyReluKernel() { return {ew::CheckFloatUnary, EvalLeakyRelu}; }

}  // namespace gpuclean::exec::kernels
