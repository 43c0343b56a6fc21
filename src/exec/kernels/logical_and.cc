// LOGICAL_AND: a && b on bool tensors with numpy broadcasting (any non-zero
// byte reads as true; the output is 0 or 1).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckLogicalAnd(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 2, {ew::kBool}); }

void EvalLogicalAnd(KernelContext& ctx) {
  ew::Binary<uint8_t, uint8_t, bool>(ctx, [](uint8_t a, uint8_t b) { return (a != 0) && (b != 0); });
}

}  // namespace

Kernel LogicalAndKernel() { return {CheckLogicalAnd, EvalLogicalAnd}; }

}  // namespace gpuclean::exec::kernels
