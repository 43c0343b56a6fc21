// TANH: hyperbolic tangent, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Eval(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::tanh(x); });
}

}  // namespace

Kernel TanhKernel() { return {ew::CheckFloatUnary, Eval}; }

}  // namespace gpuclean::exec::kernels
