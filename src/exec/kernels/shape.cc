// SHAPE: the input's dimensions as a 1-D int32 or int64 tensor (ShapeOptions'
// out_type, which the output's dtype already says).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckShape(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireOutputDtype(graph, op, 0, {tfl::TensorType_INT32, tfl::TensorType_INT64});
}

void EvalShape(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  if (output.num_elements() != input.rank())
    ThrowOpBadInput(ctx, "output holds {} elements for an input of rank {}", output.num_elements(), input.rank());
  for (int d = 0; d < input.rank(); ++d) {
    if (output.dtype == tfl::TensorType_INT64)
      output.as<int64_t>()[d] = input.shape[d];
    else
      output.as<int32_t>()[d] = input.shape[d];
  }
}

}  // namespace

Kernel ShapeKernel() { return {CheckShape, EvalShape}; }

}  // namespace gpuclean::exec::kernels
