// ROUND: to the nearest integer, ties to even, float32 - LiteRT's
// RoundToNearest (floor, then up when the rest is over a half, or exactly a
// half with an odd floor). NaN stays NaN; values of 2^23 and more are
// integers already.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalRound(KernelContext& ctx) {
  // nearbyint in the default rounding mode is ties to even, the same
  // values as LiteRT's floor form at a fraction of its cost (fmod was most
  // of a quantized model's run); its floor form never yields -0 from a
  // non-zero x, so neither does this (`+ 0.0f` turns -0 into +0).
  ew::FloatUnary(ctx, [](float x) { return x == 0.0f ? x : std::nearbyint(x) + 0.0f; });
}

}  // namespace

Kernel RoundKernel() { return {ew::CheckFloatUnary, EvalRound}; }

}  // namespace gpuclean::exec::kernels
