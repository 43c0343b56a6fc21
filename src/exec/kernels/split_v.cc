// SPLIT_V: input 0 is the value, input 1 the sizes (one may be -1: the rest),
// input 2 the axis. The output shapes are already set from the sizes.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSplitV(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 3, 3);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "size_splits");
  RequireIndexInput(graph, op, 2, "axis");
}

void EvalSplitV(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const int axis = NormalizeAxisOrThrow(ctx, ReadScalarInt(ctx, 2), input.rank());
  SplitAlongAxis(ctx, input, axis);
}

}  // namespace

Kernel SplitVKernel() { return {CheckSplitV, EvalSplitV}; }

}  // namespace gpuclean::exec::kernels
