// RELU_N1_TO_1: min(max(x, -1), 1), float32; NaN passes through.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalReluN1To1(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::min(std::max(x, -1.0f), 1.0f); });
}

}  // namespace

Kernel ReluN1To1Kernel() { return {ew::CheckFloatUnary, EvalReluN1To1}; }

}  // namespace gpuclean::exec::kernels
