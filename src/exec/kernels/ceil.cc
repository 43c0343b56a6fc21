// CEIL: round toward +inf, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Eval(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::ceil(x); });
}

}  // namespace

Kernel CeilKernel() { return {ew::CheckFloatUnary, Eval}; }

}  // namespace gpuclean::exec::kernels
