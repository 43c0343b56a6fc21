// REVERSE_V2: the input with the order of the elements along the axes of
// input 1 (int32, 1-D) reversed. LiteRT takes only axes that are contiguous
// once sorted (tflite/kernels/reverse.cc), and reversing every axis of a
// contiguous run reverses the run's flattened index, so the op is one
// reversal of the middle of an [outer, run, inner] view.
#include <algorithm>
#include <cstring>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckReverseV2(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireInputDtype(graph, op, 1, {tfl::TensorType_INT32});
}

void EvalReverseV2(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const int rank = input.rank();
  if (ctx.input(1).rank() != 1) ThrowOpBadInput(ctx, "axes (input 1) must be 1-D");
  std::vector<int> axes;
  for (int64_t a : ReadInts(ctx, 1)) axes.push_back(NormalizeAxisOrThrow(ctx, a, rank));
  std::sort(axes.begin(), axes.end());
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1) ThrowOpBadInput(ctx, "axes must be distinct and contiguous, as LiteRT requires");
  if (output.num_elements() != input.num_elements()) ThrowOpBadInput(ctx, "output shape differs from the input's");
  if (axes.empty()) {
    CopyWhole(input, output);
    return;
  }
  const size_t esize = ElementSize(input);
  const int64_t outer = ProductOf(input.shape, 0, axes.front());
  const int64_t run = ProductOf(input.shape, axes.front(), axes.back() + 1);
  const int64_t inner_bytes = ProductOf(input.shape, axes.back() + 1, rank) * static_cast<int64_t>(esize);
  ctx.pool.ParallelFor(outer * run, std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(inner_bytes, 1)),
                       [&](int64_t begin, int64_t end) {
                         for (int64_t k = begin; k < end; ++k) {
                           const int64_t o = k / run, r = k % run;
                           std::memcpy(output.data + (o * run + r) * inner_bytes,
                                       input.data + (o * run + run - 1 - r) * inner_bytes, inner_bytes);
                         }
                       });
}

}  // namespace

Kernel ReverseV2Kernel() { return {CheckReverseV2, EvalReverseV2}; }

}  // namespace gpuclean::exec::kernels
