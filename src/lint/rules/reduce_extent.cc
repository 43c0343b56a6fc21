// One multi-axis reduction over a large extent silently returns NaN on the
// Mali delegate (fp32 too); single-axis steps compute correctly.
#include <cstring>

#include "lint/rules/rule.h"

namespace gpuclean::lint {

void RunReduceExtent(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  const double limit = ctx.Param("max_extent", 16384);
  for (int node = 0; node < static_cast<int>(g.ops.size()); ++node) {
    const ir::Op& op = g.ops[node];
    if (op.code != tfl::BuiltinOperator_MEAN && op.code != tfl::BuiltinOperator_SUM) continue;
    if (op.inputs.size() < 2 || op.inputs[0] < 0 || op.inputs[1] < 0) continue;
    const ir::Tensor& x = g.tensors[op.inputs[0]];
    const ir::Tensor& axes = g.tensors[op.inputs[1]];
    if (!axes.data || axes.dtype != tfl::TensorType_INT32 || x.rank() == 0) continue;
    std::vector<bool> reduced(x.rank(), false);
    for (size_t i = 0; i + 4 <= axes.data->size(); i += 4) {
      int32_t axis;
      std::memcpy(&axis, axes.data->data() + i, 4);
      if (axis < 0) axis += x.rank();
      if (axis >= 0 && axis < x.rank()) reduced[axis] = true;
    }
    int count = 0;
    int64_t extent = 1;
    for (int d = 0; d < x.rank(); ++d)
      if (reduced[d]) {
        ++count;
        extent *= x.shape[d];
      }
    if (count < 2 || extent <= limit) continue;
    ctx.Report(node, {op.inputs[0]},
               op.name() + " reduces " + std::to_string(count) + " axes of " + ir::FormatShape(x.shape) +
                   " in one op (" + std::to_string(extent) + " elements > " +
                   std::to_string(static_cast<int64_t>(limit)) + ")");
  }
}

}  // namespace gpuclean::lint
