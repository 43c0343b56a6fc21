// SQRT: square root, float32; sqrt(x < 0) = NaN, sqrt(-0) = -0.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalSqrt(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::sqrt(x); });
}

}  // namespace

Kernel SqrtKernel() { return {ew::CheckFloatUnary, EvalSqrt}; }

}  // namespace gpuclean::exec::kernels
