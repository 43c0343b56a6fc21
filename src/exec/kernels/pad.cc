// PAD with zeros: paddings (input 1, [rank, 2], int32 or int64) give the
// elements added before and after each dimension.
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {
namespace {

void CheckPad(const ir::Subgraph& graph, const ir::Op& op) {
  RequireInputCount(graph, op, 2, 2);
  RequireMovable(graph, op, {0});
  RequireIndexInput(graph, op, 1, "paddings");
}

void EvalPad(KernelContext& ctx) {
  const uint64_t zero = 0;
  EvalConstantPad(ctx, reinterpret_cast<const uint8_t*>(&zero));
}

}  // namespace

Kernel PadKernel() { return {CheckPad, EvalPad}; }

}  // namespace gpuclean::exec::kernels
