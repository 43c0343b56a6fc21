// SQUARED_DIFFERENCE: (a - b)^2 with numpy broadcasting. float32 and int32
// (integers wrap on overflow).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckSquaredDifference(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32});
}

void EvalSquaredDifference(KernelContext& ctx) {
  ew::Dispatch<float, int32_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::Binary<T, T, T>(ctx, [](T a, T b) {
      const T d = ew::WrapSub(a, b);
      return ew::WrapMul(d, d);
    });
  });
}

}  // namespace

Kernel SquaredDifferenceKernel() { return {CheckSquaredDifference, EvalSquaredDifference}; }

}  // namespace gpuclean::exec::kernels
