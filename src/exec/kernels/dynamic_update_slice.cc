// DYNAMIC_UPDATE_SLICE: the operand (input 0) with the update (input 1)
// written at the start indices (input 2: int32 or int64, one per dimension),
// each clamped to [0, operand dim - update dim] so the update always fits
// (tflite/kernels/dynamic_update_slice.cc, ClampStartIndices).
#include <algorithm>
#include <cstring>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckDynamicUpdateSlice(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 3, 3);
  RequireMovable(graph, op, {0, 1});
  RequireIndexInput(graph, op, 2, "start indices");
}

void EvalDynamicUpdateSlice(KernelContext& ctx) {
  const Tensor& operand = ctx.input(0);
  const Tensor& update = ctx.input(1);
  Tensor& output = ctx.output(0);
  const int rank = operand.rank();
  if (update.rank() != rank) ThrowOpBadInput(ctx, "update has rank {}, the operand {}", update.rank(), rank);
  const std::vector<int64_t> starts = ReadInts(ctx, 2);
  if (ctx.input(2).rank() != 1 || static_cast<int>(starts.size()) != rank)
    ThrowOpBadInput(ctx, "start indices must be 1-D with one value per dimension ({})", rank);
  std::vector<int64_t> start(rank);
  for (int d = 0; d < rank; ++d) {
    if (update.shape[d] > operand.shape[d])
      ThrowOpBadInput(ctx, "update {} does not fit in the operand {}", ir::FormatShape(update.shape),
                      ir::FormatShape(operand.shape));
    start[d] = std::clamp<int64_t>(starts[d], 0, operand.shape[d] - update.shape[d]);
  }
  CopyWhole(operand, output);
  if (update.num_elements() == 0) return;
  const size_t esize = ElementSize(operand);
  const std::vector<int64_t> out_strides = StridesOf(output.shape);
  int64_t offset = 0;
  for (int d = 0; d < rank; ++d) offset += start[d] * out_strides[d];
  CopyStrided(ctx.pool, esize, update.shape, update.data, StridesOf(update.shape), output.data + offset * esize,
              out_strides);
}

}  // namespace

Kernel DynamicUpdateSliceKernel() { return {CheckDynamicUpdateSlice, EvalDynamicUpdateSlice}; }

}  // namespace gpuclean::exec::kernels
