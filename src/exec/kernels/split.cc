// SPLIT: input 0 is the axis, input 1 the value, split into num_splits equal
// pieces (the output shapes are already set).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSplit(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireIndexInput(graph, op, 0, "axis");
  RequireMovable(graph, op, {1});
}

void EvalSplit(KernelContext& ctx) {
  const Tensor& input = ctx.input(1);
  const int axis = NormalizeAxisOrThrow(ctx, ReadScalarInt(ctx, 0), input.rank());
  SplitAlongAxis(ctx, input, axis);
}

}  // namespace

Kernel SplitKernel() { return {CheckSplit, EvalSplit}; }

}  // namespace gpuclean::exec::kernels
