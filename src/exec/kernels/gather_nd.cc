// GATHER_ND: the last dimension of indices (depth) addresses the first depth
// dimensions of params; output indices.shape[:-1] + params.shape[depth:].
// Indices out of range are an error, as in LiteRT.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckGatherNd(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireInputDtype(graph, op, 1, {tfl::TensorType_INT32, tfl::TensorType_INT64, tfl::TensorType_INT16});
}

void EvalGatherNd(KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices_tensor = ctx.input(1);
  Tensor& output = ctx.output(0);
  if (indices_tensor.rank() < 1) ThrowOpBadInput(ctx, "indices must have rank >= 1");
  const int depth = indices_tensor.dim(-1);
  if (depth > params.rank()) ThrowOpBadInput(ctx, "index depth {} exceeds the params rank {}", depth, params.rank());
  const int64_t count = ProductOf(indices_tensor.shape, 0, indices_tensor.rank() - 1);
  const int64_t slice = ProductOf(params.shape, depth, params.rank());
  if (count * slice != output.num_elements())
    ThrowOpBadInput(ctx, "output holds {} elements, the gather gives {}", output.num_elements(), count * slice);
  const std::vector<int64_t> indices = ReadInts(ctx, 1);
  const std::vector<int64_t> strides = StridesOf(params.shape);
  std::vector<int64_t> offsets(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t off = 0;
    for (int d = 0; d < depth; ++d) {
      const int64_t v = indices[i * depth + d];
      if (v < 0 || v >= params.shape[d])
        ThrowOpBadInput(ctx, "index {} of dimension {} is outside [0, {})", v, d, params.shape[d]);
      off += v * strides[d];
    }
    offsets[i] = off;
  }
  const size_t esize = ElementSize(params);
  const size_t row = static_cast<size_t>(slice) * esize;
  ctx.pool.ParallelFor(count, std::max<int64_t>(1, 65536 / std::max<size_t>(row, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) std::memcpy(output.data + i * row, params.data + offsets[i] * esize, row);
  });
}

}  // namespace

Kernel GatherNdKernel() { return {CheckGatherNd, EvalGatherNd}; }

}  // namespace gpuclean::exec::kernels
