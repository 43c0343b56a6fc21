// POW: a^b with numpy broadcasting. float32: std::pow (pow(x, 0) = 1,
// pow(1, y) = 1, a negative base with a fractional exponent is NaN).
// A float32 exponent that is one value, 2, squares: x * x is the correctly
// rounded square, which std::pow approximates through logarithms (0.82 ulp
// at worst in glibc) 20 times slower (openWakeWord's melspectrogram squares
// its STFT). int32: as LiteRT, a negative exponent fails the op; the power is computed in
// double and converted back, saturating at the int32 limits.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPow(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32}); }

void EvalPow(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      const Tensor& e = ctx.input(1);
      for (int64_t i = 0; i < e.num_elements(); ++i)
        if (e.as<T>()[i] < 0)
          ThrowBadInput(fmt::format("{}: negative exponent {} for int32 (element {}); LiteRT fails to invoke here too",
                                    OpLabel(ctx), e.as<T>()[i], i));
      ew::Binary<T, T, T>(ctx, [](T a, T b) {
        return ew::SaturatingTrunc<T>(std::pow(static_cast<double>(a), static_cast<double>(b)));
      });
    } else {
      const Tensor& e = ctx.input(1);
      if (e.num_elements() == 1 && e.as<T>()[0] == T(2))
        ew::Binary<T, T, T>(ctx, [](T a, T) { return a * a; });
      else
        ew::Binary<T, T, T>(ctx, [](T a, T b) { return std::pow(a, b); });
    }
  });
}

}  // namespace

Kernel PowKernel() { return {CheckPow, EvalPow}; }

}  // namespace gpuclean::exec::kernels
