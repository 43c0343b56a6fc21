// CEIL: round toward +inf, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalCeil(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::ceil(x); });
}

}  // namespace

Kernel CeilKernel() { return {ew::CheckFloatUnary, EvalCeil}; }

}  // namespace gpuclean::exec::kernels
