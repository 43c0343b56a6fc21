// NEG: -x. float32, int32, int64 (integers wrap: -INT_MIN = INT_MIN).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckNeg(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 1, {ew::kF32, ew::kI32, ew::kI64});
}

void EvalNeg(KernelContext& ctx) {
  ew::Dispatch<float, int32_t, int64_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ew::Unary<T, T>(ctx, [](T x) { return ew::WrapSub(T(0), x); });
    } else {
      ew::Unary<T, T>(ctx, [](T x) { return -x; });
    }
  });
}

}  // namespace

Kernel NegKernel() { return {CheckNeg, EvalNeg}; }

}  // namespace gpuclean::exec::kernels
