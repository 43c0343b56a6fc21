// HARD_SWISH: x * relu6(x + 3) / 6, float32 (hard_swish(-inf) is NaN, as in LiteRT).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalHardSwish(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f); });
}

}  // namespace

Kernel HardSwishKernel() { return {ew::CheckFloatUnary, EvalHardSwish}; }

}  // namespace gpuclean::exec::kernels
