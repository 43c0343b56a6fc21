// RSQRT: 1 / sqrt(x), float32; rsqrt(0) = inf, rsqrt(-0) = -inf, rsqrt(x < 0) = NaN.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRsqrt(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return 1.0f / std::sqrt(x); });
}

}  // namespace

Kernel RsqrtKernel() { return {ew::CheckFloatUnary, EvalRsqrt}; }

}  // namespace gpuclean::exec::kernels
