// PACK: N inputs of one shape S stacked along a new dimension `axis`
// (in [-(rank+1), rank]): output S[:axis] + [N] + S[axis:].
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPack(const ir::Subgraph& graph, const ir::Op& op) {
  if (op.inputs.empty()) ThrowOpUnsupported(graph, op, "needs at least one input");
  RequireMovable(graph, op, {-1});
}

void EvalPack(KernelContext& ctx) {
  Tensor& output = ctx.output(0);
  const int rank = output.rank();
  const int axis = NormalizeAxisOrThrow(ctx, OptionsOr<tfl::PackOptionsT>(ctx.op).axis, rank);
  const int n = static_cast<int>(ctx.in.size());
  if (output.shape[axis] != n)
    ThrowOpBadInput(ctx, "output has {} along axis {} for {} inputs", output.shape[axis], axis, n);
  const size_t esize = ElementSize(output);
  const std::vector<int64_t> out_strides = StridesOf(output.shape);
  std::vector<int64_t> dst_strides = out_strides;
  dst_strides.erase(dst_strides.begin() + axis);
  for (int k = 0; k < n; ++k) {
    const Tensor& in = ctx.input(k);
    if (in.rank() != rank - 1 || in.num_elements() * n != output.num_elements())
      ThrowOpBadInput(ctx, "input {} has shape {}, which does not stack into {}", k, ir::FormatShape(in.shape),
                      ir::FormatShape(output.shape));
    CopyStrided(ctx.pool, esize, in.shape, in.data, StridesOf(in.shape), output.data + k * out_strides[axis] * esize,
                dst_strides);
  }
}

}  // namespace

Kernel PackKernel() { return {CheckPack, EvalPack}; }

}  // namespace gpuclean::exec::kernels
