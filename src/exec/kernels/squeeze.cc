// SQUEEZE: the bytes stay as they are; only the shape changes (layout_util's
// reshape-like core).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {

Kernel SqueezeKernel() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) { CheckReshapeLike(graph, op, 1, 1, ""); }, EvalReshapeLike};
}

}  // namespace gpuclean::exec::kernels
