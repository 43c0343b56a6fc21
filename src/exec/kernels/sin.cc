// SIN: sine, float32 (radians).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalSin(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::sin(x); });
}

}  // namespace

Kernel SinKernel() { return {ew::CheckFloatUnary, EvalSin}; }

}  // namespace gpuclean::exec::kernels
