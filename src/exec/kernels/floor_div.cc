// FLOOR_DIV: floor(a / b) with numpy broadcasting, float32 and int32.
// LiteRT computes the quotient in double and floors it (then converts back),
// so a float32 quotient that would round up to an integer is not rounded:
// floor_div(1, 0.1f) = 9, not the 10 that floorf(1.0f / 0.1f) gives. Any zero
// divisor, float or int, fails the op as it fails LiteRT's invoke.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckFloorDiv(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32});
}

void EvalFloorDiv(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::RequireNonZeroDivisor<T>(ctx, ctx.input(1));
    ew::Binary<T, T, T>(ctx, [](T a, T b) {
      const double q = std::floor(static_cast<double>(a) / static_cast<double>(b));
      if constexpr (std::is_integral_v<T>) {
        return ew::SaturatingTrunc<T>(q);  // exact for int32; INT_MIN / -1 saturates
      } else {
        return static_cast<T>(q);
      }
    });
  });
}

}  // namespace

Kernel FloorDivKernel() { return {CheckFloorDiv, EvalFloorDiv}; }

}  // namespace gpuclean::exec::kernels
