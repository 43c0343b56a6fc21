// ELU (alpha = 1, LiteRT has no alpha option): x < 0 ? e^x - 1 : x, float32.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalElu(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return x < 0.0f ? std::expm1(x) : x; });
}

}  // namespace

Kernel EluKernel() { return {ew::CheckFloatUnary, EvalElu}; }

}  // namespace gpuclean::exec::kernels
