// LOGICAL_NOT: !x on a bool tensor (any non-zero byte reads as true).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckLogicalNot(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 1, {ew::kBool}); }

void EvalLogicalNot(KernelContext& ctx) {
  ew::Unary<uint8_t, bool>(ctx, [](uint8_t x) { return x == 0; });
}

}  // namespace

Kernel LogicalNotKernel() { return {CheckLogicalNot, EvalLogicalNot}; }

}  // namespace gpuclean::exec::kernels
