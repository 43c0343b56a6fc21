// MAXIMUM: max(a, b) with numpy broadcasting, computed as std::max, i.e.
// (a < b) ? b : a: a NaN in a propagates, a NaN in b does not - the same
// answers LiteRT.js gives (max(NaN, 1) = NaN, max(1, NaN) = 1).
// float32 and the integer types LiteRT compares raw: int64, int32, int16,
// int8, uint8 (quantized tensors are rejected by the interpreter before).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckMaximum(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(
      graph, op, 2, {ew::kF32, ew::kI64, ew::kI32, tfl::TensorType_INT16, tfl::TensorType_INT8, tfl::TensorType_UINT8});
}

void EvalMaximum(KernelContext& ctx) {
  ew::Dispatch<float, int64_t, int32_t, int16_t, int8_t, uint8_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::Binary<T, T, T>(ctx, [](T a, T b) { return std::max(a, b); });
  });
}

}  // namespace

Kernel MaximumKernel() { return {CheckMaximum, EvalMaximum}; }

}  // namespace gpuclean::exec::kernels
