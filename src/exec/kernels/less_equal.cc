// LESS_EQUAL: a <= b with numpy broadcasting; bool output. Inputs float32,
// int32 or int64 (both of one type). Any comparison with NaN is false.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckLessEqual(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64}, ew::kBool);
}

void EvalLessEqual(KernelContext& ctx) {
  ew::Dispatch<float, int32_t, int64_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::Binary<T, T, bool>(ctx, [](T a, T b) { return a <= b; });
  });
}

}  // namespace

Kernel LessEqualKernel() { return {CheckLessEqual, EvalLessEqual}; }

}  // namespace gpuclean::exec::kernels
