// ABS: |x|. float32 and int32 (|INT_MIN| wraps to INT_MIN).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckAbs(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 1, {ew::kF32, ew::kI32}); }

void EvalAbs(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ew::Unary<T, T>(ctx, [](T x) { return x < 0 ? ew::WrapSub(T(0), x) : x; });
    } else {
      ew::Unary<T, T>(ctx, [](T x) { return std::fabs(x); });
    }
  });
}

}  // namespace

Kernel AbsKernel() { return {CheckAbs, EvalAbs}; }

}  // namespace gpuclean::exec::kernels
