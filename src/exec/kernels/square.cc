// SQUARE: x * x, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalSquare(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return x * x; });
}

}  // namespace

Kernel SquareKernel() { return {ew::CheckFloatUnary, EvalSquare}; }

}  // namespace gpuclean::exec::kernels
