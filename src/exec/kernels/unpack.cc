// UNPACK: the input split along `axis` into its slices, that dimension removed.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckUnpack(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  RequireMovable(graph, op, {0});
}

void EvalUnpack(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  const int rank = input.rank();
  const int axis = NormalizeAxisOrThrow(ctx, OptionsOr<tfl::UnpackOptionsT>(ctx.op).axis, rank);
  const int n = static_cast<int>(ctx.out.size());
  if (input.shape[axis] != n)
    ThrowOpBadInput(ctx, "input has {} along axis {} for {} outputs", input.shape[axis], axis, n);
  const size_t esize = ElementSize(input);
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  std::vector<int64_t> src_strides = in_strides;
  src_strides.erase(src_strides.begin() + axis);
  for (int k = 0; k < n; ++k) {
    Tensor& out = ctx.output(k);
    if (out.rank() != rank - 1 || out.num_elements() * n != input.num_elements())
      ThrowOpBadInput(ctx, "output {} has shape {}, which is not a slice of {}", k, ir::FormatShape(out.shape),
                      ir::FormatShape(input.shape));
    CopyStrided(ctx.pool, esize, out.shape, input.data + k * in_strides[axis] * esize, src_strides, out.data,
                StridesOf(out.shape));
  }
}

}  // namespace

Kernel UnpackKernel() { return {CheckUnpack, EvalUnpack}; }

}  // namespace gpuclean::exec::kernels
