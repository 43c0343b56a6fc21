// ZEROS_LIKE: zeros of the input's shape and dtype (LiteRT: float32, int32,
// int64; tflite/kernels/zeros_like.cc).
#include <cstring>

#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckZerosLike(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 1, 1);
  const std::initializer_list<ir::DType> dtypes = {tfl::TensorType_FLOAT32, tfl::TensorType_INT32,
                                                   tfl::TensorType_INT64};
  RequireInputDtype(graph, op, 0, dtypes);
  RequireOutputDtype(graph, op, 0, dtypes);
}

void EvalZerosLike(KernelContext& ctx) {
  Tensor& output = ctx.output(0);
  if (output.num_elements() != ctx.input(0).num_elements())
    ThrowOpBadInput(ctx, "output shape differs from the input's");
  std::memset(output.data, 0, static_cast<size_t>(output.num_elements()) * ElementSize(output));
}

}  // namespace

Kernel ZerosLikeKernel() { return {CheckZerosLike, EvalZerosLike}; }

}  // namespace gpuclean::exec::kernels
