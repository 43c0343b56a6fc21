// EXP: e^x, float32 (overflows to inf above ~88.72).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalExp(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::exp(x); });
}

}  // namespace

Kernel ExpKernel() { return {ew::CheckFloatUnary, EvalExp}; }

}  // namespace gpuclean::exec::kernels
