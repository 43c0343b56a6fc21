// An op-clean graph past ~1000 nodes failed to compile as a whole while each
// half compiled: a size ceiling, not a bad op.
#include "lint/rules/rule.h"

namespace gpuclean::lint {

void RunCompileCeiling(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  const double limit = ctx.Param("max_nodes", 1000);
  int nodes = 0;
  for (const ir::Op& op : g.ops)
    // fp16 weight DEQUANTIZE nodes are folded into their consumers.
    if (!(op.code == tfl::BuiltinOperator_DEQUANTIZE && !op.inputs.empty() && op.inputs[0] >= 0 &&
          g.tensors[op.inputs[0]].is_const()))
      ++nodes;
  if (nodes <= limit) return;
  ctx.Report(-1, {},
             "graph has " + std::to_string(nodes) + " compute nodes, past the compile ceiling of " +
                 std::to_string(static_cast<int64_t>(limit)));
}

}  // namespace gpuclean::lint
