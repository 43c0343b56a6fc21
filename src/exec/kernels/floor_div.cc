// FLOOR_DIV and FLOOR_MOD, with numpy broadcasting, float32 and int32.
//
// FLOOR_DIV: floor(a / b).
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

// FLOOR_MOD: the remainder with the divisor's sign, a - floor(a / b) * b,
// computed as LiteRT does (tflite/kernels/internal/reference/floor_mod.h):
// the truncated remainder (fmod for floats), plus b where its sign differs
// from b's. A zero int divisor fails the op as it fails LiteRT's invoke; a
// zero float divisor gives NaN.
void EvalFloorMod(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) ew::RequireNonZeroDivisor<T>(ctx, ctx.input(1));
    ew::Binary<T, T, T>(ctx, [](T a, T b) {
      T r;
      if constexpr (std::is_integral_v<T>) {
        r = b == -1 ? T(0) : static_cast<T>(a % b);  // INT_MIN % -1 is 0, without the trap
      } else {
        r = std::fmod(a, b);
      }
      return r != T(0) && ((b < T(0)) != (r < T(0))) ? static_cast<T>(r + b) : r;
    });
  });
}

}  // namespace

Kernel FloorDivKernel() { return {CheckFloorDiv, EvalFloorDiv}; }
Kernel FloorModKernel() { return {CheckFloorDiv, EvalFloorMod}; }

}  // namespace gpuclean::exec::kernels
