// TRANSPOSE by the permutation in input 1 (any rank; LiteRT allows up to 6):
// output dim i is input dim perm[i]. A strided copy; 2-D-like patterns are
// copied in tiles.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckTranspose(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "perm");
}

void EvalTranspose(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = input.rank();
  const std::vector<int64_t> perm = ReadInts(ctx, 1);
  if (static_cast<int>(perm.size()) != rank)
    ThrowOpBadInput(ctx, "perm has {} entries for a rank-{} input", perm.size(), rank);
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  std::vector<int64_t> src_strides(rank);
  std::vector<bool> seen(rank, false);
  for (int i = 0; i < rank; ++i) {
    const int p = NormalizeAxisOrThrow(ctx, perm[i], rank);
    if (seen[p]) ThrowOpBadInput(ctx, "perm repeats dimension {}", p);
    seen[p] = true;
    if (output.shape[i] != input.shape[p])
      ThrowOpBadInput(ctx, "output dim {} is {} but input dim {} is {}", i, output.shape[i], p, input.shape[p]);
    src_strides[i] = in_strides[p];
  }
  CopyStrided(ctx.pool, ElementSize(input), output.shape, input.data, src_strides, output.data,
              StridesOf(output.shape));
}

}  // namespace

Kernel TransposeKernel() { return {CheckTranspose, EvalTranspose}; }

}  // namespace gpuclean::exec::kernels
