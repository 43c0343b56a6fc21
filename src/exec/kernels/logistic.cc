// LOGISTIC: sigmoid 1 / (1 + e^-x), float32; saturates to exactly 0 and 1.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Eval(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

}  // namespace

Kernel LogisticKernel() { return {ew::CheckFloatUnary, Eval}; }

}  // namespace gpuclean::exec::kernels
