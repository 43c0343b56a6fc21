// EXPAND_DIMS: the bytes stay as they are; only the shape changes (layout_util's
// reshape-like core).
#include "exec/kernels/layout_util.h"

namespace gpuclean::exec::kernels {

Kernel ExpandDimsKernel() {
  return {[](const ir::Subgraph& graph, const ir::Op& op) { CheckReshapeLike(graph, op, 2, 2, "axis"); },
          EvalReshapeLike};
}

}  // namespace gpuclean::exec::kernels
