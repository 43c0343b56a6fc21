// MEAN: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void CheckMean(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kMean); }
void EvalMean(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kMean); }
}  // namespace

Kernel MeanKernel() { return {CheckMean, EvalMean}; }

}  // namespace gpuclean::exec::kernels
