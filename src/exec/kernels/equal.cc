// EQUAL: a == b with numpy broadcasting; bool output. Inputs float32, int32,
// int64 and bool (both of one type).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckEqual(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64, ew::kBool}, ew::kBool);
}

void EvalEqual(KernelContext& ctx) {
  ew::Dispatch<float, int32_t, int64_t, bool>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      // Any non-zero byte is true.
      ew::Binary<uint8_t, uint8_t, bool>(ctx, [](uint8_t a, uint8_t b) { return (a != 0) == (b != 0); });
    } else {
      ew::Binary<T, T, bool>(ctx, [](T a, T b) { return a == b; });
    }
  });
}

}  // namespace

Kernel EqualKernel() { return {CheckEqual, EvalEqual}; }

}  // namespace gpuclean::exec::kernels
