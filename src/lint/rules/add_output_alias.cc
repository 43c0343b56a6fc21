// LiteRT#8599: the returned buffer of such an ADD holds an operand, not the sum.
#include "lint/rules/rule.h"

namespace gpuclean::lint {

void RunAddOutputAlias(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  for (int node = 0; node < static_cast<int>(g.ops.size()); ++node) {
    const ir::Op& op = g.ops[node];
    if (op.code != tfl::BuiltinOperator_ADD || op.outputs.empty() || op.inputs.size() < 2) continue;
    const int out = op.outputs[0];
    if (ctx.view.RuntimeInputCount(node) < 2 || !ctx.view.graph_output[out] || ctx.view.consumers[out].empty())
      continue;
    ctx.Report(node, {op.inputs[0], op.inputs[1], out},
               "ADD of two runtime tensors whose result '" + ctx.view.TensorName(out) +
                   "' is a graph output and is consumed by " + std::to_string(ctx.view.consumers[out].size()) +
                   " op(s)");
  }
}

}  // namespace gpuclean::lint
