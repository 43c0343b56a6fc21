// REDUCE_MIN: reduction over the axes of input 1 (see EvalReduce in reduce_util).
#include "exec/kernels/reduce_util.h"

namespace gpuclean::exec::kernels {
namespace {
void CheckReduceMin(const ir::Subgraph& graph, const ir::Op& op) { CheckReduce(graph, op, ReduceKind::kMin); }
void EvalReduceMin(KernelContext& ctx) { EvalReduce(ctx, ReduceKind::kMin); }
}  // namespace

Kernel ReduceMinKernel() { return {CheckReduceMin, EvalReduceMin}; }

}  // namespace gpuclean::exec::kernels
