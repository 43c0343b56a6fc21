// LEAKY_RELU: x > 0 ? x : alpha * x, float32. alpha comes from
// LeakyReluOptions (0 when the options are absent, the schema default).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalLeakyRelu(KernelContext& ctx) {
  const auto* options = ctx.op.options.AsLeakyReluOptions();
  const float alpha = options ? options->alpha : 0.0f;
  ew::FloatUnary(ctx, [alpha](float x) { return x > 0.0f ? x : alpha * x; });
}

}  // namespace

Kernel LeakyReluKernel() { return {ew::CheckFloatUnary, EvalLeakyRelu}; }

}  // namespace gpuclean::exec::kernels
