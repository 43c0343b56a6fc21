// ROUND: to the nearest integer, ties to even, float32 - LiteRT's
// RoundToNearest (floor, then up when the rest is over a half, or exactly a
// half with an odd floor). NaN stays NaN; values of 2^23 and more are
// integers already.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRound(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) {
    const float f = std::floor(x);
    const float rest = x - f;
    const bool odd = std::fmod(f, 2.0f) != 0.0f;
    return rest < 0.5f || (rest == 0.5f && !odd) ? f : f + 1.0f;
  });
}

}  // namespace

Kernel RoundKernel() { return {ew::CheckFloatUnary, EvalRound}; }

}  // namespace gpuclean::exec::kernels
