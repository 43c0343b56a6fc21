// TANH: hyperbolic tangent, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalTanh(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::tanh(x); });
}

}  // namespace

Kernel TanhKernel() { return {ew::CheckFloatUnary, EvalTanh}; }

}  // namespace gpuclean::exec::kernels
