// A [1,N,C] graph output with other consumers has its later branch clobbered;
// 4-D maps with the same fan-out are fine, so only rank 3 is flagged.
#include "lint/rules/rule.h"

namespace gpuclean::lint {

void RunTokenOutputFanout(const RuleContext& ctx) {
  const ir::Subgraph& g = ctx.view.graph;
  for (int t : g.outputs) {
    if (t < 0 || g.tensors[t].rank() != 3 || ctx.view.consumers[t].empty()) continue;
    const int producer = ctx.view.producer[t];
    if (producer < 0) continue;
    ctx.Report(producer, {t},
               "rank-3 tensor '" + ctx.view.TensorName(t) + "' " + ir::FormatShape(g.tensors[t].shape) +
                   " is a graph output and feeds " + std::to_string(ctx.view.consumers[t].size()) + " other op(s)");
  }
}

}  // namespace gpuclean::lint
