// COS: cosine, float32 (radians).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalCos(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::cos(x); });
}

}  // namespace

Kernel CosKernel() { return {ew::CheckFloatUnary, EvalCos}; }

}  // namespace gpuclean::exec::kernels
