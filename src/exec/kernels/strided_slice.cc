// STRIDED_SLICE with begin/end/ellipsis/new_axis/shrink masks, negative
// strides and the `offset` option: ir::PlanStridedSlice resolves the masks
// against the input shape (the same plan shape inference uses); eval is one
// strided copy.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckStridedSlice(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 4, 4);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "begin");
  RequireIndexInput(graph, op, 2, "end");
  RequireIndexInput(graph, op, 3, "strides");
}

void EvalStridedSlice(KernelContext& ctx) {
  const Tensor& input = ctx.input(0);
  Tensor& output = ctx.output(0);
  const std::vector<int64_t> begin = ReadInts(ctx, 1);
  const std::vector<int64_t> end = ReadInts(ctx, 2);
  const std::vector<int64_t> steps = ReadInts(ctx, 3);
  const auto options = OptionsOr<tfl::StridedSliceOptionsT>(ctx.op);
  ir::StridedSlicePlan plan;
  try {
    plan = ir::PlanStridedSlice(input.shape, begin, end, steps, options);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("{}: {}", OpLabel(ctx), e.what()));
  }
  const size_t rank = plan.effective_shape.size();
  const std::vector<int64_t> strides = StridesOf(plan.effective_shape);
  std::vector<int32_t> box(rank);
  std::vector<int64_t> src_strides(rank);
  int64_t offset = 0;
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    const int64_t b = plan.begin[i], e = plan.end[i], s = plan.stride[i];
    if (s == 0) ThrowOpBadInput(ctx, "stride {} is zero", i);
    int64_t count = s > 0 ? (e - b + s - 1) / s : (b - e + (-s) - 1) / (-s);
    count = std::max<int64_t>(count, 0);
    if (plan.shrink[i]) count = 1;
    if (count > 0 && (b < 0 || b >= plan.effective_shape[i] || b + (count - 1) * s < 0 ||
                      b + (count - 1) * s >= plan.effective_shape[i]))
      ThrowOpBadInput(ctx, "slice of dimension {} (begin {}, end {}, stride {}) leaves the input", i, b, e, s);
    box[i] = static_cast<int32_t>(count);
    total *= count;
    if (count > 0) offset += b * strides[i];
    src_strides[i] = s * strides[i];
  }
  if (total != output.num_elements())
    ThrowOpBadInput(ctx, "the slice holds {} elements but the output {}", total, output.num_elements());
  if (total == 0) return;
  const size_t esize = ElementSize(input);
  CopyStrided(ctx.pool, esize, box, input.data + offset * esize, src_strides, output.data, StridesOf(box));
}

}  // namespace

Kernel StridedSliceKernel() { return {CheckStridedSlice, EvalStridedSlice}; }

}  // namespace gpuclean::exec::kernels
