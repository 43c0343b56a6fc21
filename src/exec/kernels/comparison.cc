// The comparison family (FAMILY kComparison in src/ir/ops.def): a op b with
// numpy broadcasting and a bool output; both inputs of one type, float32,
// int32 or int64, and for EQUAL / NOT_EQUAL also bool. Any ordering with
// NaN is false; NaN != NaN.
#include <functional>

#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

template <typename Compare, bool kTakesBool>
Kernel Comparison() {
  auto check = [](const ir::Subgraph& graph, const ir::Op& op) {
    if constexpr (kTakesBool)
      ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64, ew::kBool}, ew::kBool);
    else
      ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64}, ew::kBool);
  };
  auto eval = [](KernelContext& ctx) {
    ew::Dispatch<float, int32_t, int64_t, bool>(ctx, ctx.input(0).dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, bool>) {
        // Any non-zero byte is true.
        ew::Binary<uint8_t, uint8_t, bool>(ctx, [](uint8_t a, uint8_t b) { return Compare{}(a != 0, b != 0); });
      } else {
        ew::Binary<T, T, bool>(ctx, [](T a, T b) { return Compare{}(a, b); });
      }
    });
  };
  return {check, eval};
}

}  // namespace

Kernel EqualKernel() { return Comparison<std::equal_to<>, true>(); }
Kernel NotEqualKernel() { return Comparison<std::not_equal_to<>, true>(); }
Kernel LessKernel() { return Comparison<std::less<>, false>(); }
Kernel LessEqualKernel() { return Comparison<std::less_equal<>, false>(); }
Kernel GreaterKernel() { return Comparison<std::greater<>, false>(); }
Kernel GreaterEqualKernel() { return Comparison<std::greater_equal<>, false>(); }

}  // namespace gpuclean::exec::kernels
