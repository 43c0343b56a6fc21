// MUL: a * b with numpy broadcasting, then the fused activation's clamp.
// float32, int32, int64 (integers wrap on overflow).
#include "exec/kernels/elementwise_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckMul(const ir::Subgraph& graph, const ir::Op& op) {
  ew::CheckSameDType(graph, op, 2, {ew::kF32, ew::kI32, ew::kI64});
}

void EvalMul(KernelContext& ctx) {
  const auto act = ew::FusedActivation<tfl::MulOptionsT>(ctx.op);
  ew::Dispatch<float, int32_t, int64_t>(ctx, ctx.input(0).dtype, [&](auto tag) {
    using T = decltype(tag);
    ew::BinaryWithActivation<T>(ctx, act, [](T a, T b) { return ew::WrapMul(a, b); });
  });
}

}  // namespace

Kernel MulKernel() { return {CheckMul, EvalMul}; }

}  // namespace gpuclean::exec::kernels
