// DIV: a / b with numpy broadcasting, then the fused activation's clamp.
// float32: IEEE division (x/0 is ±inf, 0/0 NaN), as XNNPACK computes it in
// LiteRT. int32: C division, truncating toward zero (-7/2 = -3); a zero
// divisor fails the op, as it fails LiteRT's invoke.
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckDiv(const ir::Subgraph& graph, const ir::Op& op) { ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32}); }

void EvalDiv(KernelContext& ctx) {
  const auto act = ew::FusedActivation<tfl::DivOptionsT>(ctx.op);
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      ew::RequireNonZeroDivisor<T>(ctx, ctx.input(1));
      ew::BinaryWithActivation<T>(ctx, act, [](T a, T b) {
        // INT_MIN / -1 overflows; wrap like the hardware-independent result.
        return b == T(-1) ? ew::WrapSub(T(0), a) : static_cast<T>(a / b);
      });
    } else {
      ew::BinaryWithActivation<T>(ctx, act, [](T a, T b) { return a / b; });
    }
  });
}

}  // namespace

Kernel DivKernel() { return {CheckDiv, EvalDiv}; }

}  // namespace gpuclean::exec::kernels
