// TILE: output dim i repeats input dim i multiples[i] times. Seen as the box
// [m0, d0, m1, d1, ...] that reads the input with stride 0 along each m.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckTile(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "multiples");
}

void EvalTile(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = input.rank();
  const std::vector<int64_t> multiples = ReadInts(ctx, 1);
  if (static_cast<int>(multiples.size()) != rank)
    ThrowOpBadInput(ctx, "multiples has {} entries for a rank-{} input", multiples.size(), rank);
  if (output.num_elements() == 0) return;
  const std::vector<int64_t> in_strides = StridesOf(input.shape);
  std::vector<int32_t> box;
  std::vector<int64_t> src;
  for (int i = 0; i < rank; ++i) {
    if (multiples[i] < 0 || output.shape[i] != input.shape[i] * multiples[i])
      ThrowOpBadInput(ctx, "output dim {} is {}, expected {} x {}", i, output.shape[i], input.shape[i], multiples[i]);
    box.push_back(static_cast<int32_t>(multiples[i]));
    src.push_back(0);
    box.push_back(input.shape[i]);
    src.push_back(in_strides[i]);
  }
  CopyStrided(ctx.pool, ElementSize(input), box, input.data, src, output.data, StridesOf(box));
}

}  // namespace

Kernel TileKernel() { return {CheckTile, EvalTile}; }

}  // namespace gpuclean::exec::kernels
