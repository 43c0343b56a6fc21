// PRELU: x >= 0 ? x : alpha * x, float32, with alpha broadcast against the
// input numpy-style (the output has the broadcast shape).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPrelu(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 2, {ew::kF32}); }

void EvalPrelu(KernelContext& ctx) {
  ew::Binary<float, float, float>(ctx, [](float x, float alpha) { return x >= 0.0f ? x : x * alpha; });
}

}  // namespace

Kernel PreluKernel() { return {CheckPrelu, EvalPrelu}; }

}  // namespace gpuclean::exec::kernels
