// RELU: max(x, 0), float32; NaN passes through (as in LiteRT.js).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRelu(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::max(x, 0.0f); });
}

}  // namespace

Kernel ReluKernel() { return {ew::CheckFloatUnary, EvalRelu}; }

}  // namespace gpuclean::exec::kernels
