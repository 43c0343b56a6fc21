// RELU6: min(max(x, 0), 6), float32; NaN passes through (as in LiteRT.js).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRelu6(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::min(std::max(x, 0.0f), 6.0f); });
}

}  // namespace

Kernel Relu6Kernel() { return {ew::CheckFloatUnary, EvalRelu6}; }

}  // namespace gpuclean::exec::kernels
