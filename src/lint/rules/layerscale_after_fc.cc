// The delegate reads a 2-D FULLY_CONNECTED output [N,C] as {N,1,1,C}; a MUL
// with a [1,1,C]-style gamma is laid out as {1,1,N,C}: the shapes conflict.
#include "lint/rules/rule.h"

namespace gpuclean::lint {

void RunLayerScaleAfterFc(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  for (int node = 0; node < static_cast<int>(g.ops.size()); ++node) {
    const ir::Op& op = g.ops[node];
    if (op.code != tfl::BuiltinOperator_MUL || op.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const int x = op.inputs[side], gamma = op.inputs[1 - side];
      if (x < 0 || gamma < 0 || ctx.view.producer[x] < 0) continue;
      if (g.ops[ctx.view.producer[x]].code != tfl::BuiltinOperator_FULLY_CONNECTED) continue;
      if (g.tensors[x].rank() != 2 || g.tensors[x].shape.front() == 1) continue;
      if (!ctx.view.IsConstLike(gamma) || g.tensors[gamma].shape == g.tensors[x].shape) continue;
      ctx.Report(node, {x, gamma},
                 "MUL broadcasts " + ir::FormatShape(g.tensors[gamma].shape) + " over the 2-D FULLY_CONNECTED output " +
                     ir::FormatShape(g.tensors[x].shape));
      break;
    }
  }
}

}  // namespace gpuclean::lint
