// SLICE: output[i] = input[begin + i] over a box whose extent is input 2
// (-1: to the end of the dimension). The output shape is already set.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSlice(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 3, 3);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "begin");
  RequireIndexInput(graph, op, 2, "size");
}

void EvalSlice(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = input.rank();
  const std::vector<int64_t> begin = ReadInts(ctx, 1);
  if (static_cast<int>(begin.size()) != rank || output.rank() != rank)
    ThrowOpBadInput(ctx, "begin has {} entries for a rank-{} input", begin.size(), rank);
  const std::vector<int64_t> strides = StridesOf(input.shape);
  int64_t offset = 0;
  for (int i = 0; i < rank; ++i) {
    if (begin[i] < 0 || begin[i] + output.shape[i] > input.shape[i])
      ThrowOpBadInput(ctx, "slice [{}, {}) of dimension {} is outside [0, {})", begin[i], begin[i] + output.shape[i], i,
                      input.shape[i]);
    offset += begin[i] * strides[i];
  }
  const size_t esize = ElementSize(input);
  CopyStrided(ctx.pool, esize, output.shape, input.data + offset * esize, strides, output.data,
              StridesOf(output.shape));
}

}  // namespace

Kernel SliceKernel() { return {CheckSlice, EvalSlice}; }

}  // namespace gpuclean::exec::kernels
