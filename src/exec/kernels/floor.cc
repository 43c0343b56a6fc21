// FLOOR: round toward -inf, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalFloor(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::floor(x); });
}

}  // namespace

Kernel FloorKernel() { return {ew::CheckFloatUnary, EvalFloor}; }

}  // namespace gpuclean::exec::kernels
