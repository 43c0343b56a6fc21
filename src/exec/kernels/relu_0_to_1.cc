// RELU_0_TO_1: min(max(x, 0), 1), float32; NaN passes through.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRelu0To1(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::min(std::max(x, 0.0f), 1.0f); });
}

}  // namespace

Kernel Relu0To1Kernel() { return {ew::CheckFloatUnary, EvalRelu0To1}; }

}  // namespace gpuclean::exec::kernels
