// EXPAND_DIMS: the bytes stay as they are; only the shape changes (the
// interpreter has already set it), so eval is a copy of the input.
#include "exec/kernels/shape_util.h"

namespace gpuclean::exec::kernels {
namespace {

void Check(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "axis");
}

void Eval(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  if (input.num_elements() != output.num_elements())
    ThrowOpBadInput(ctx, "input has {} elements but the output has {}", input.num_elements(), output.num_elements());
  CopyWhole(input, output);
}

}  // namespace

Kernel ExpandDimsKernel() { return {Check, Eval}; }

}  // namespace gpuclean::exec::kernels
