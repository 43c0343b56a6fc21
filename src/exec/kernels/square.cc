// SQUARE: x * x, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Eval(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return x * x; });
}

}  // namespace

Kernel SquareKernel() { return {ew::CheckFloatUnary, Eval}; }

}  // namespace gpuclean::exec::kernels
