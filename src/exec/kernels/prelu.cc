// PRELU: x >= 0 ? x : alpha * x, float32, with alpha broadcast against the
// input numpy-style (the output has the broadcast shape).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPrelu(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 2, {ew::kF32}); }

void EvalPrelu(KernelContext& ctx) {
  ew::Binary<float, float, float>(ctx, [](float x, float alpha) {
    const float scaled = x * alpha;  // for every element, as leaky_relu.cc: the select vectorises
    return x >= 0.0f ? x : scaled;
  });
}

}  // namespace

Kernel PreluKernel() { return {CheckPrelu, EvalPrelu}; }

}  // namespace gpuclean::exec::kernels
