// Large baked constants consumed by compute chains (position tables, anchor
// grids) gave wrong numbers in fp32 and fp16 alike; conv / FC weights are the
// delegate's normal case and are not flagged.
#include "lint/rules/rule.h"

namespace gpuclean::lint {

bool IsWeightSlot(const ir::Op& op, size_t position) {
  switch (op.code) {
    case tfl::BuiltinOperator_CONV_2D:
    case tfl::BuiltinOperator_DEPTHWISE_CONV_2D:
    case tfl::BuiltinOperator_FULLY_CONNECTED:
    case tfl::BuiltinOperator_CONV_3D: return position >= 1;
    case tfl::BuiltinOperator_TRANSPOSE_CONV: return position != 2;
    case tfl::BuiltinOperator_DEQUANTIZE:
    case tfl::BuiltinOperator_DENSIFY: return true;  // followed through to the real consumer
    case tfl::BuiltinOperator_CUSTOM: return position >= 1;
    default: return false;
  }
}

void RunLargeConstant(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  const double min_elements = ctx.Param("min_elements", 262144);
  for (int node = 0; node < static_cast<int>(g.ops.size()); ++node) {
    const ir::Op& op = g.ops[node];
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const int t = op.inputs[i];
      if (t < 0 || !ctx.view.IsConstLike(t) || IsWeightSlot(op, i)) continue;
      if (static_cast<double>(g.tensors[t].num_elements()) < min_elements) continue;
      ctx.Report(node, {t},
                 "constant '" + ctx.view.TensorName(t) + "' " + ir::FormatShape(g.tensors[t].shape) + " (" +
                     std::to_string(g.tensors[t].num_elements()) + " elements) feeds " + op.name() + " as input " +
                     std::to_string(i));
    }
  }
}

}  // namespace gpuclean::lint
