// GATHER along `axis` with `batch_dims`: output
//   params[:axis] + indices[batch_dims:] + params[axis+1:]
// where the first batch_dims dimensions of params and indices are shared.
// Indices (int16/int32/int64) outside [0, params.shape[axis]) are an error,
// as in LiteRT.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckGather(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireInputDtype(graph, op, 1, {tfl::TensorType_INT32, tfl::TensorType_INT64, tfl::TensorType_INT16});
}

void EvalGather(KernelContext& ctx) {
  const Tensor& params = ctx.input(0);
  const Tensor& indices_tensor = ctx.input(1);
  Tensor& output = ctx.output(0);
  const auto options = OptionsOr<tfl::GatherOptionsT>(ctx.op);
  const int rank = params.rank();
  const int axis = NormalizeAxisOrThrow(ctx, options.axis, rank);
  int batch_dims = options.batch_dims;
  if (batch_dims < 0) batch_dims += indices_tensor.rank();
  if (batch_dims < 0 || batch_dims > axis || batch_dims > indices_tensor.rank())
    ThrowOpBadInput(ctx, "batch_dims {} is out of range (axis {}, indices rank {})", options.batch_dims, axis,
                    indices_tensor.rank());
  for (int i = 0; i < batch_dims; ++i)
    if (params.shape[i] != indices_tensor.shape[i])
      ThrowOpBadInput(ctx, "batch dimension {} differs: params {} vs indices {}", i, params.shape[i],
                      indices_tensor.shape[i]);
  const int64_t batch = ProductOf(params.shape, 0, batch_dims);
  const int64_t outer = ProductOf(params.shape, batch_dims, axis);
  const int64_t axis_size = params.shape[axis];
  const int64_t inner = ProductOf(params.shape, axis + 1, rank);
  const int64_t coords = ProductOf(indices_tensor.shape, batch_dims, indices_tensor.rank());
  if (batch * outer * coords * inner != output.num_elements())
    ThrowOpBadInput(ctx, "output holds {} elements, the gather gives {}", output.num_elements(),
                    batch * outer * coords * inner);
  const std::vector<int64_t> indices = ReadInts(ctx, 1);
  for (int64_t v : indices)
    if (v < 0 || v >= axis_size) ThrowOpBadInput(ctx, "index {} is outside [0, {})", v, axis_size);
  const size_t esize = ElementSize(params);
  const size_t row = static_cast<size_t>(inner) * esize;
  const int64_t total = batch * outer * coords;
  ctx.pool.ParallelFor(total, std::max<int64_t>(1, 65536 / std::max<size_t>(row, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t c = t % coords, bo = t / coords;
      const int64_t b = bo / outer;
      const int64_t index = indices[b * coords + c];
      std::memcpy(output.data + t * row, params.data + ((bo * axis_size) + index) * row, row);
    }
  });
}

}  // namespace

Kernel GatherKernel() { return {CheckGather, EvalGather}; }

}  // namespace gpuclean::exec::kernels
