// PADV2: PAD with the constant of input 2 (a one-element tensor of the input's
// dtype; zero when omitted).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPadv2(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 3);
  RequireMovable(graph, op, {0, 2});
  RequireIndexInput(graph, op, 1, "paddings");
}

void EvalPadv2(KernelContext& ctx) {
  uint64_t zero = 0;
  const uint8_t* value = reinterpret_cast<const uint8_t*>(&zero);
  if (ctx.has_input(2)) {
    const Tensor& c = ctx.input(2);
    if (c.num_elements() != 1) ThrowOpBadInput(ctx, "constant_values must hold one value, got {}", c.num_elements());
    value = c.data;
  }
  EvalConstantPad(ctx, value);
}

}  // namespace

Kernel Padv2Kernel() { return {CheckPadv2, EvalPadv2}; }

}  // namespace gpuclean::exec::kernels
