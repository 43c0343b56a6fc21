// LOG: natural logarithm, float32. log(0) = -inf, log(x < 0) = NaN.
// LiteRT.js (XNNPACK) returns ~88.38 for log(inf) and ~88.78 for log(NaN);
// we keep the IEEE answers (inf, NaN) there.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void EvalLog(KernelContext& ctx) {
  ew::FloatUnary(ctx, [](float x) { return std::log(x); });
}

}  // namespace

Kernel LogKernel() { return {ew::CheckFloatUnary, EvalLog}; }

}  // namespace gpuclean::exec::kernels
