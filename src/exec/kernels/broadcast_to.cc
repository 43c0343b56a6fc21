// BROADCAST_TO: numpy broadcasting of the input to the shape of input 1
// (aligned at the innermost dimension): a copy reading with stride 0 along
// the broadcast dimensions.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckBroadcastTo(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "shape");
}

void EvalBroadcastTo(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = output.rank(), in_rank = input.rank();
  if (in_rank > rank) ThrowOpBadInput(ctx, "input rank {} exceeds the output rank {}", in_rank, rank);
  if (output.num_elements() == 0) return;
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  std::vector<int64_t> src(rank, 0);
  for (int i = 0; i < rank; ++i) {
    const int j = i - (rank - in_rank);
    if (j < 0) continue;
    if (input.shape[j] == output.shape[i]) {
      src[i] = in_strides[j];
    } else if (input.shape[j] != 1) {
      ThrowOpBadInput(ctx, "input {} does not broadcast to {}", ir::FormatShape(input.shape),
                      ir::FormatShape(output.shape));
    }
  }
  CopyStrided(ctx.pool, ElementSize(input), output.shape, input.data, src, output.data, StridesOf(output.shape));
}

}  // namespace

Kernel BroadcastToKernel() { return {CheckBroadcastTo, EvalBroadcastTo}; }

}  // namespace gpuclean::exec::kernels
